// libFuzzer target: streambuild_project.toml, streambuild_local.toml and pipeline.toml loading (input format:
// fuzz_entries.hpp, FuzzTomlConfig).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzTomlConfig(data, size);
}
