#include "core/heap_hint.hpp"

#include <atomic>

namespace sluice {

namespace {

// Constant-initialised, so a policy installed by another file's static initialiser is never overwritten.
std::atomic<HeapPolicy> installed_policy{nullptr};

}  // namespace

void SetHeapPolicy(HeapPolicy policy) { installed_policy.store(policy); }

void ExpectHeapBytes(size_t expected_bytes) {
  if (HeapPolicy policy = installed_policy.load()) policy(expected_bytes);
}

}  // namespace sluice
