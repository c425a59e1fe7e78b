// `sluice plan` and `sluice build` on the embedded DuckDB: the same plan value and phases, the tables written by the
// engine's run path.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

TEST(BuildDuckDb, PlanBeforeAnyBuildCreatesNothingThenBuildWritesAndFingerprints) {
  ScratchProject project("shop");
  ProcessResult plan = project.Run({"plan"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("create  core.clean_events"), std::string::npos) << plan.out;
  EXPECT_FALSE(std::filesystem::exists(project.root() / "warehouse.duckdb"));
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/plan/workflow.sql"));

  ProcessResult build = project.Run({"build", "--auto-approve"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_NE(build.out.find("replace_core.clean_events"), std::string::npos) << build.out;
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/build/execution.json"));

  ProcessResult again = project.Run({"plan"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("rebuild core.clean_events  (unchanged since the last build)"), std::string::npos)
      << again.out;
  ProcessResult status = project.Run({"status", "--json"});
  EXPECT_NE(status.out.find("core.clean_events"), std::string::npos);
  ProcessResult runs = project.Run({"runs"});
  EXPECT_NE(runs.out.find("SUCCESS"), std::string::npos) << runs.out;
}

TEST(BuildDuckDb, BuildNeedsApprovalWithoutATerminal) {
  ScratchProject project("shop");
  ProcessResult build = project.Run({"build"});
  EXPECT_EQ(build.exit_code, 2) << build.out << build.err;
  EXPECT_NE(build.err.find("--auto-approve"), std::string::npos) << build.err;
}

}  // namespace
}  // namespace sluice::testing
