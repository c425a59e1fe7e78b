// The heap of the `sluice` binary: jemalloc (linked into the executable, so every malloc in the process, the
// loaded DuckDB and Python included, is jemalloc's) with transparent huge pages for its memory.
//
// Why: a large project's analysis makes about a million small allocations and touches ~100 MiB of fresh heap.
// With glibc's allocator, malloc itself was a fifth of `sluice discover`'s profile and first-touch page faults
// another tenth; on a virtual machine each 4 KiB fault is expensive. jemalloc with huge pages takes the
// 10,000-model analysis from ~0.31 to ~0.24 s and the compile from ~0.62 to ~0.47 s (docs/performance.md).
//
// Huge pages pay off while the kernel has free ones at hand; a heap of many hundreds of MiB makes page faults
// wait for the kernel to compact memory into huge pages. On this project's 2-core VM, `sluice discover` with
// huge pages against without: 1,000 and 20,000 models 5-12% faster, 40,000 models 16% slower, 100,000 models
// 17-50% slower (so was the warm compile: +25%). So when a command expects a heap above kHugePageHeapLimit
// (core/heap_hint.hpp; the project loader gives its estimate once it has counted the model files), the
// process stops asking for huge pages: prctl(PR_SET_THP_DISABLE) applies to every later page fault (memory
// already in huge pages stays there) and is inherited by child processes. A MALLOC_CONF that names a thp
// setting is obeyed instead, whatever the heap.
//
// jemalloc reads this symbol at its first allocation, before main; MALLOC_CONF in the environment is read after
// it and wins (MALLOC_CONF=thp:never turns huge pages off). Child processes inherit the environment as given.
// The executable exports its symbols (CMAKE_ENABLE_EXPORTS), so this definition takes the place of the
// library's empty one.
#include <sys/prctl.h>

#include <cstdlib>
#include <string_view>

#include "core/heap_hint.hpp"

extern "C" const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";

namespace {

constexpr size_t kHugePageHeapLimit = size_t{160} << 20;

// Whether MALLOC_CONF sets jemalloc's `thp` option (its options are `name:value` pairs separated by commas;
// `metadata_thp` is another option).
bool EnvironmentSetsThp() {
  const char* conf = std::getenv("MALLOC_CONF");
  if (conf == nullptr) return false;
  std::string_view options = conf;
  for (size_t at = options.find("thp:"); at != std::string_view::npos; at = options.find("thp:", at + 1)) {
    if (at == 0 || options[at - 1] == ',') return true;
  }
  return false;
}

// MALLOC_CONF naming a thp setting decides alone, for any heap.
void LimitHugePages(size_t expected_bytes) {
  if (EnvironmentSetsThp()) return;
  if (expected_bytes > kHugePageHeapLimit) prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

[[maybe_unused]] const bool kHeapPolicyInstalled = (sluice::SetHeapPolicy(&LimitHugePages), true);

}  // namespace
