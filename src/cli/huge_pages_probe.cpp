// Test helper for huge_pages_test: applies UseHugePagesForTheHeap like `sluice` does, touches 64 MiB of heap
// and prints what a child process would inherit and whether the heap got huge pages.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "cli/huge_pages.hpp"

namespace {

char* volatile kept;  // keeps the compiler from eliding the allocation

const char* Show(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "<unset>";
}

// AnonHugePages of the whole process, in KiB.
long AnonHugePagesKiB() {
  std::ifstream rollup("/proc/self/smaps_rollup");
  std::string key;
  long value = 0;
  while (rollup >> key) {
    if (key == "AnonHugePages:") {
      rollup >> value;
      return value;
    }
  }
  return -1;
}

}  // namespace

int main(int, char** argv) {
  sluice::cli::UseHugePagesForTheHeap(argv);
  constexpr size_t kBytes = size_t{64} << 20;
  kept = static_cast<char*>(std::malloc(kBytes));
  std::memset(kept, 1, kBytes);
  std::printf("GLIBC_TUNABLES=%s\n", Show("GLIBC_TUNABLES"));
  std::printf("SLUICE_CALLER_GLIBC_TUNABLES=%s\n", Show("SLUICE_CALLER_GLIBC_TUNABLES"));
  std::printf("huge=%s\n", AnonHugePagesKiB() > 0 ? "yes" : "no");
  std::free(kept);
  return 0;
}
