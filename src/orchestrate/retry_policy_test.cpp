// Retry policies: counts, fixed and exponential delays with their cap, jitter bounded and reproducible from a seed.
#include "orchestrate/retry_policy.hpp"

#include <gtest/gtest.h>

#include "core/diagnostic.hpp"

namespace sluice {
namespace {

using std::chrono::milliseconds;

TEST(RetryPolicy, CountsAttempts) {
  RetryPolicy policy;  // Starlake's defaults: one retry after 300 s
  EXPECT_TRUE(policy.RetriesAfter(1));
  EXPECT_FALSE(policy.RetriesAfter(2));
  EXPECT_EQ(policy.Delay(1, 0), milliseconds(300'000));
  RetryPolicy none{0};
  EXPECT_FALSE(none.RetriesAfter(1));
}

TEST(RetryPolicy, ExponentialBackoffDoublesUpToTheCap) {
  RetryPolicy policy{5, milliseconds(1000), true, milliseconds(5000)};
  EXPECT_EQ(policy.Delay(1, 7), milliseconds(1000));
  EXPECT_EQ(policy.Delay(2, 7), milliseconds(2000));
  EXPECT_EQ(policy.Delay(3, 7), milliseconds(4000));
  EXPECT_EQ(policy.Delay(4, 7), milliseconds(5000));
  EXPECT_EQ(policy.Delay(30, 7), milliseconds(5000));
}

TEST(RetryPolicy, JitterStaysInItsBoundsAndRepeatsForOneSeed) {
  RetryPolicy full{3, milliseconds(1000), true, milliseconds(60'000), RetryJitter::kFull};
  RetryPolicy plus_minus{3, milliseconds(1000), false, milliseconds(60'000), RetryJitter::kPlusMinus};
  bool varied = false;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    milliseconds d = full.Delay(2, seed);
    EXPECT_GE(d.count(), 0);
    EXPECT_LE(d.count(), 2000);
    milliseconds p = plus_minus.Delay(1, seed);
    EXPECT_GE(p.count(), 500);
    EXPECT_LE(p.count(), 1500);
    EXPECT_EQ(full.Delay(2, seed), d);  // the same seed, the same delay
    varied = varied || d != full.Delay(2, 0);
  }
  EXPECT_TRUE(varied);
}

TEST(RetryPolicy, RejectsPoliciesThatCannotBe) {
  auto code = [](RetryPolicy policy) {
    try {
      policy.Validate();
    } catch (const Error& error) {
      return error.diagnostics().front().code;
    }
    return std::string("none");
  };
  EXPECT_EQ(code(RetryPolicy{}), "none");
  EXPECT_EQ(code(RetryPolicy{-1}), "SLU-RETRY-001");
  EXPECT_EQ(code(RetryPolicy{1, milliseconds(-5)}), "SLU-RETRY-001");
  EXPECT_EQ(code(RetryPolicy{1, milliseconds(5000), true, milliseconds(1000)}), "SLU-RETRY-001");
}

}  // namespace
}  // namespace sluice
