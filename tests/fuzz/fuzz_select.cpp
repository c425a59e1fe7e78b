// libFuzzer target: the structural SELECT parser (ParseSelect), per dialect (input format: fuzz_entries.hpp,
// FuzzSelect).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return sluice::fuzz::FuzzSelect(data, size); }
