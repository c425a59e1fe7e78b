// libFuzzer target: the SQL tokenizer and the reference/macro scanners, per dialect (input format: fuzz_entries.hpp,
// FuzzSqlScan).
#include <cstddef>
#include <cstdint>

#include "fuzz_entries.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return sluice::fuzz::FuzzSqlScan(data, size);
}
