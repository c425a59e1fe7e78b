// libFuzzer target: ${…} templating (TemplateScope) (input format: fuzz_entries.hpp, FuzzTemplating).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzTemplating(data, size);
}
