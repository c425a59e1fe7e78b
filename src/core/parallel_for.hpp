// Data parallelism for independent items (model files, artifact files): ParallelFor runs body(i) for every i
// in [0, count) on a few threads and returns when all are done.
//
// Work is handed out from a shared counter in runs of consecutive indexes, short enough that uneven items
// balance (a run is 1/256 of a thread's share, 1 to 64 indexes: ~100 µs of model files at 10,000 models) and
// long enough that threads working through many small items (a reference resolution, well under a
// microsecond) do not take turns at the counter's cache line for every item. When bodies throw,
// every remaining index still runs and the exception of the lowest throwing index is rethrown, so the error
// a caller reports does not depend on thread timing.
// Thread-safety: `body` is called concurrently from several threads for distinct indices; it must only touch
// state owned by its index or guarded by the caller.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>

namespace sluice {

// Below this many items per thread, starting a thread costs more than it saves (for items as small as one
// model file; a caller whose items are large, such as whole folders, passes a smaller minimum).
inline constexpr size_t kMinItemsPerThread = 32;

// The number of threads ParallelFor uses for `count` items: 1 for small counts, else the hardware threads
// (the SLUICE_THREADS environment variable, a positive integer, overrides the hardware count).
size_t ParallelThreadsFor(size_t count, size_t min_items_per_thread = kMinItemsPerThread);

void ParallelFor(size_t count, const std::function<void(size_t)>& body,
                 size_t min_items_per_thread = kMinItemsPerThread);

// Maps every page of the raw storage [data, data + bytes) before its first use, on ParallelFor's threads, so a
// large, freshly allocated array (tens of MiB: a vector's reserved capacity, before its elements are constructed
// one by one) does not take a page fault per 4 KiB page on the one thread that constructs the elements. Each MiB
// is one madvise(MADV_POPULATE_WRITE): on a virtual machine, where every fault traps to the hypervisor, that is
// an order of magnitude cheaper than the faults. Where the kernel cannot (Linux before 5.14) a zero byte is
// written into each page instead. Only for storage holding no objects yet: its bytes are unspecified afterwards.
void PrefaultInParallel(void* data, size_t bytes);

// Maps the pages of [data, data + bytes) (data page-aligned) with one madvise(MADV_POPULATE_WRITE), leaving their
// bytes as they are; false where the kernel cannot (Linux before 5.14) or the range is not mapped writable.
bool PopulatePages(void* data, size_t bytes);

// Sorts [first, last) as std::stable_sort does (equal elements keep their order): the two halves on two threads,
// then merged. For large arrays of strings or keys, whose comparisons miss the caches (one thread below 4,096
// elements).
template <typename Iterator, typename Less>
void ParallelStableSort(Iterator first, Iterator last, Less less) {
  const size_t count = static_cast<size_t>(last - first);
  const Iterator middle = first + static_cast<std::ptrdiff_t>(count / 2);
  ParallelFor(
      2,
      [&](size_t half) {
        if (half == 0) {
          std::stable_sort(first, middle, less);
        } else {
          std::stable_sort(middle, last, less);
        }
      },
      /*min_items_per_thread=*/count < 4096 ? 2 : 1);
  std::inplace_merge(first, middle, last, less);
}

}  // namespace sluice
