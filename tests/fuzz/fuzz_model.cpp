// libFuzzer target: a model file through ParseModelFile and the SQL body contract, per dialect (input format:
// fuzz_entries.hpp, FuzzModel).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return sluice::fuzz::FuzzModel(data, size); }
