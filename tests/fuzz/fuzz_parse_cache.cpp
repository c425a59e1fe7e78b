// libFuzzer target: a model file parsed, its parse cache entry written and read back, and the model rebuilt from
// it compared with the parsed one, per dialect (input format: fuzz_entries.hpp, FuzzParseCache).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzParseCache(data, size);
}
