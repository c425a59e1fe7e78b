// libFuzzer target: the MODEL/TEST/AUDIT header grammar (ParseHeaderBlock) (input format: fuzz_entries.hpp,
// FuzzHeader).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return sluice::fuzz::FuzzHeader(data, size); }
