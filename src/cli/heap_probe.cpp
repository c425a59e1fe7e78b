// Test helper for heap_test: linked like `sluice` (jemalloc and cli/heap.cpp), touches 64 MiB of heap in small
// allocations and prints which allocator served them, how much of the process's memory is in huge pages and
// whether the process may still get huge pages, how many page faults touching them took and whether the kernel
// can populate memory ahead (MADV_POPULATE_WRITE). `heap_probe BYTES` first tells the heap policy to expect
// BYTES of heap (core/heap_hint.hpp), as the project loader does.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/heap_hint.hpp"
#include "core/parallel_for.hpp"

namespace {

// The number after `key` in a /proc file of this process ("AnonHugePages:" in smaps_rollup, in KiB;
// "THP_enabled:" in status, 0 once the process gave up huge pages), or -1 when the key is missing.
long ProcValue(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string word;
  long value = -1;
  while (in >> word) {
    if (word == key) {
      in >> value;
      return value;
    }
  }
  return -1;
}

// Minor page faults of this process so far.
long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// Whether madvise(MADV_POPULATE_WRITE) works here (Linux 5.14 and later).
bool KernelPopulates() {
  constexpr size_t kPage = 4096;
  void* page = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return false;
  bool populated = sluice::PopulatePages(page, kPage);
  munmap(page, kPage);
  return populated;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) sluice::ExpectHeapBytes(std::strtoull(argv[1], nullptr, 10));
  constexpr size_t kPiece = 256;
  constexpr size_t kPieces = (size_t{64} << 20) / kPiece;
  std::vector<char*> pieces;
  pieces.reserve(kPieces);
  const long faults_before = MinorFaults();
  for (size_t i = 0; i < kPieces; ++i) {
    pieces.push_back(static_cast<char*>(std::malloc(kPiece)));
    std::memset(pieces.back(), 1, kPiece);
  }
  const long touch_faults = MinorFaults() - faults_before;
  std::printf("touch_faults=%ld\n", touch_faults);
  std::printf("populate=%s\n", KernelPopulates() ? "yes" : "no");
  std::printf("jemalloc=%s\n", dlsym(RTLD_DEFAULT, "mallctl") ? "yes" : "no");
  std::printf("huge_kib=%ld\n", ProcValue("/proc/self/smaps_rollup", "AnonHugePages:"));
  std::printf("thp_enabled=%ld\n", ProcValue("/proc/self/status", "THP_enabled:"));
  for (char* piece : pieces) std::free(piece);
  return 0;
}
