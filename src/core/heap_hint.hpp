// Heap hints: a command about to keep a large structure in memory says how much heap it expects, and the
// executable's heap policy may act on it (the `sluice` binary's policy, cli/heap.cpp, maps a large heap ahead).
// Without a policy — tests, sanitizer builds — a hint does nothing.
// Thread-safety: both functions may be called from any thread.
#pragma once

#include <cstddef>

namespace sluice {

using HeapPolicy = void (*)(size_t expected_bytes);

// Installs the policy hints are given to (nullptr removes it).
void SetHeapPolicy(HeapPolicy policy);

// Tells the policy, if any, that this process expects to hold about `expected_bytes` of heap.
void ExpectHeapBytes(size_t expected_bytes);

}  // namespace sluice
