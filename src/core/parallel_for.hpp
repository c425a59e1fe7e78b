// Data parallelism for independent items (model files, artifact files): ParallelFor runs body(i) for every i
// in [0, count) on a few threads and returns when all are done.
//
// Work is handed out from a shared counter in runs of consecutive indexes, so threads working through many
// small items do not contend for the counter on every item. When bodies throw, every remaining index still
// runs and the exception of the lowest throwing index is rethrown, so the error a caller reports does not
// depend on thread timing.
// Thread-safety: `body` is called concurrently from several threads for distinct indices; it must only touch
// state owned by its index or guarded by the caller.
#pragma once

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

}  // namespace sluice
