// Unit tests of the deploy layer that need no server: the direct plan's shape, fingerprints' diffs.
#include <gtest/gtest.h>

#include "deploy/direct_plan.hpp"
#include "deploy/fingerprints.hpp"

namespace sluice {
namespace {

TEST(UnifiedDiff, ShowsChangedLinesWithContext) {
  const std::string diff = UnifiedDiff("SELECT a\nFROM t\nWHERE x\n", "SELECT a\nFROM t\nWHERE y\n", "old", "new");
  EXPECT_NE(diff.find("--- old\n+++ new\n"), std::string::npos);
  EXPECT_NE(diff.find("-WHERE x"), std::string::npos);
  EXPECT_NE(diff.find("+WHERE y"), std::string::npos);
  EXPECT_NE(diff.find(" FROM t"), std::string::npos);
  EXPECT_EQ(UnifiedDiff("same\n", "same\n", "a", "b"), "");
}

}  // namespace
}  // namespace sluice
