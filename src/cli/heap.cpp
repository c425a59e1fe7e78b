// The heap of the `sluice` binary: jemalloc (linked into the executable, so every malloc in the process, the
// loaded DuckDB and Python included, is jemalloc's) with transparent huge pages for its memory.
//
// Why: a large project's analysis makes about a million small allocations and touches ~100 MiB of fresh heap.
// With glibc's allocator, malloc itself was a fifth of `sluice discover`'s profile and first-touch page faults
// another tenth; on a virtual machine each 4 KiB fault is expensive. jemalloc with huge pages takes the
// 10,000-model analysis from ~0.31 to ~0.24 s and the compile from ~0.62 to ~0.47 s (docs/performance.md).
//
// A large heap is also mapped ahead (FillHeapAhead): on a virtual machine each first touch of a page traps to
// the hypervisor (~10 µs a 4 KiB page on this project's VM: 1 s of CPU for the ~110,000 pages of the
// 100,000-model analysis), while madvise(MADV_POPULATE_WRITE) maps a whole range in one call (~0.2 ms per MiB).
// So when a command expects a heap above kFillHeapLimit (core/heap_hint.hpp; the project loader gives its
// estimate once it has counted the model files), the expected heap is allocated in 2 MiB blocks on
// ParallelFor's threads, so each block comes from the jemalloc arena of the thread that allocates it,
// the arena that thread's later allocations use; each block is populated and freed. jemalloc is told to keep
// freed pages (dirty_decay_ms -1) and to split them for small allocations (lg_extent_max_active_fit), so the
// analysis's allocations land on pages already mapped. jemalloc purges the arena of a thread that exits unless
// it runs background threads, so it is asked to (they have nothing to purge while dirty pages never decay).
// The filled pages and the freed memory stay with the process until it exits. SLUICE_HEAP_FILL=off turns the
// filling off; without MADV_POPULATE_WRITE (Linux before 5.14) nothing is filled.
//
// Huge pages without the fill were slower for a large heap on this VM (`sluice discover` at 40,000 models 16%,
// at 100,000 17-50% slower than 4 KiB pages), so they used to be given up above 160 MiB; with the fill they are
// faster at every size measured (the fill on 4 KiB pages against the fill on huge pages, 100,000 models: 1.49 ->
// 1.40x the read floor, 11 alternating rounds; docs/performance.md).
//
// jemalloc reads this symbol at its first allocation, before main; MALLOC_CONF in the environment is read after
// it and wins (MALLOC_CONF=thp:never turns huge pages off). Child processes inherit the environment as given.
// The executable exports its symbols (CMAKE_ENABLE_EXPORTS), so this definition takes the place of the
// library's empty one.
#include <sys/types.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/environment.hpp"
#include "core/heap_hint.hpp"
#include "core/parallel_for.hpp"

extern "C" const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always,lg_extent_max_active_fit:20";

extern "C" int mallctl(const char* name, void* old_value, size_t* old_length, void* new_value, size_t new_length);

namespace {

// ~21,000 models (project_loader.cpp): below it the heap is a few dozen huge pages, whose faults cost little.
constexpr size_t kFillHeapLimit = size_t{64} << 20;

// Sets a jemalloc setting; false when jemalloc refuses it.
template <typename T>
bool SetJemalloc(const char* name, T value) {
  return mallctl(name, nullptr, nullptr, &value, sizeof value) == 0;
}

// Maps `bytes` of heap ahead of the allocations that will use it (see the top of this file).
void FillHeapAhead(size_t bytes) {
  if (sluice::EnvironmentSwitch("SLUICE_HEAP_FILL") == false) return;
  constexpr size_t kBlock = size_t{2} << 20;
  if (!SetJemalloc("background_thread", true)) return;
  // Freed pages stay dirty (mapped) in every arena, those of threads not started yet included.
  const ssize_t never = -1;
  SetJemalloc("arenas.dirty_decay_ms", never);
  unsigned arenas = 0;
  size_t length = sizeof arenas;
  if (mallctl("arenas.narenas", &arenas, &length, nullptr, 0) != 0) return;
  for (unsigned arena = 0; arena < arenas; ++arena) {
    // An arena no thread has used yet refuses; it takes the default set above when it starts.
    SetJemalloc(("arena." + std::to_string(arena) + ".dirty_decay_ms").c_str(), never);
  }
  std::vector<void*> blocks(bytes / kBlock, nullptr);
  sluice::ParallelFor(
      blocks.size(),
      [&](size_t b) {
        void* block = std::aligned_alloc(4096, kBlock);
        if (block != nullptr && !sluice::PopulatePages(block, kBlock)) {
          std::free(block);  // the kernel cannot populate: the rest would not either
          return;
        }
        blocks[b] = block;
      },
      /*min_items_per_thread=*/1);
  for (void* block : blocks) std::free(block);
}

void HeapPolicy(size_t expected_bytes) {
  if (expected_bytes > kFillHeapLimit) FillHeapAhead(expected_bytes);
}

[[maybe_unused]] const bool kHeapPolicyInstalled = (sluice::SetHeapPolicy(&HeapPolicy), true);

}  // namespace
