// libFuzzer target: macro-call argument parsing (ParseMacroInvocation) (input format: fuzz_entries.hpp,
// FuzzMacroArguments).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzMacroArguments(data, size);
}
