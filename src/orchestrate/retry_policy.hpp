// A step's retry policy (issue 25 point 6; Starlake options `retries`, `retry_delay`, reference §3): how many times a
// failed step runs again and how long the job waits before each attempt. Optional exponential backoff (the delay
// doubles per attempt, capped) and jitter drawn from an injected seed, so the same seed gives the same delays.
// The command each retry runs is the same vector as the first attempt's (the verb first).
// Errors: SLU-RETRY-001 a negative retry count, delay or cap, or a cap below the delay.
// Thread-safety: immutable value; Delay is a pure function of the policy, the attempt and the seed.
#pragma once

#include <chrono>
#include <cstdint>

namespace sluice {

enum class RetryJitter { kNone, kFull, kPlusMinus };  // Dagster's FULL: [0, d]; PLUS_MINUS: d ± d/2

struct RetryPolicy {
  int retries = 1;                                      // attempts after the first
  std::chrono::milliseconds delay{300'000};             // before the first retry
  bool exponential = false;                             // delay · 2^(retry − 1)
  std::chrono::milliseconds max_delay{3'600'000};       // the backoff's cap
  RetryJitter jitter = RetryJitter::kNone;

  // Throws SLU-RETRY-001 when the values cannot make a policy.
  void Validate() const;
  // Whether a step that failed on attempt `attempt` (1 = the first run) runs again.
  bool RetriesAfter(int attempt) const { return attempt <= retries; }
  // The wait before retry `retry` (1 = the first retry); deterministic for one seed.
  std::chrono::milliseconds Delay(int retry, uint64_t seed) const;
};

}  // namespace sluice
