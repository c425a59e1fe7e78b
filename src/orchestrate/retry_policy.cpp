#include "orchestrate/retry_policy.hpp"

#include <algorithm>
#include <random>
#include <string>

#include "core/diagnostic.hpp"

namespace sluice {

void RetryPolicy::Validate() const {
  if (retries < 0 || delay.count() < 0 || max_delay.count() < 0 || (exponential && max_delay < delay)) {
    throw Error(Diagnostic{"SLU-RETRY-001",
                           "retry policy of " + std::to_string(retries) + " retries, delay " +
                               std::to_string(delay.count()) + " ms, cap " + std::to_string(max_delay.count()) +
                               " ms cannot be used",
                           {}, "retries and delays are zero or more, and the backoff cap is at least the delay", {}});
  }
}

std::chrono::milliseconds RetryPolicy::Delay(int retry, uint64_t seed) const {
  int64_t base = delay.count();
  if (exponential) {
    for (int i = 1; i < retry && base < max_delay.count(); ++i) base *= 2;
    base = std::min<int64_t>(base, max_delay.count());
  }
  if (jitter == RetryJitter::kNone || base == 0) return std::chrono::milliseconds(base);
  // One generator per (seed, retry): a retry's delay does not depend on how many were drawn before it.
  std::mt19937_64 random(seed ^ (0x9E3779B97F4A7C15ULL * static_cast<uint64_t>(retry)));
  if (jitter == RetryJitter::kFull) {
    return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(0, base)(random));
  }
  return std::chrono::milliseconds(std::uniform_int_distribution<int64_t>(base - base / 2, base + base / 2)(random));
}

}  // namespace sluice
