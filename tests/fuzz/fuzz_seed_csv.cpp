// libFuzzer target: a seed's CSV file (core/seed_csv.hpp, ReadSeedCsv) (input format: fuzz_entries.hpp, FuzzSeedCsv).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzSeedCsv(data, size);
}
