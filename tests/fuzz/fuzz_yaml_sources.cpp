// libFuzzer target: sources/*.yml loading (LoadSources) (input format: fuzz_entries.hpp, FuzzYamlSources).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzYamlSources(data, size);
}
