// Virtual mode's pure pieces: deployment ids and physical names (§7.3), and the column diff that classifies a
// rebuild as breaking or not and seedable or not.
#include <gtest/gtest.h>

#include "core/logical_datetime.hpp"
#include "deploy/column_diff.hpp"
#include "deploy/virtual_executor.hpp"
#include "core/virtual_names.hpp"

namespace sluice {
namespace {

TEST(DeploymentId, IsTheClocksUtcTimeAndSixHexDigits) {
  const FixedClock clock(ParseLogicalDatetime("2026-08-01T12:34:56Z"));
  const std::string id = NewDeploymentId(clock);
  ASSERT_EQ(id.size(), 23u) << id;
  EXPECT_EQ(id.substr(0, 17), "20260801T123456Z_");
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef", 17), std::string::npos) << id;
  EXPECT_TRUE(IsDeploymentId(id));
}

TEST(DeploymentId, UserIdsFollowStreamBuildsRule) {
  EXPECT_TRUE(IsDeploymentId("20260801T000000Z_a1b2c3"));
  EXPECT_TRUE(IsDeploymentId("20260801T000000Z_release42"));
  EXPECT_FALSE(IsDeploymentId("20260801T000000Z_"));
  EXPECT_FALSE(IsDeploymentId("20260801T000000_a1b2c3"));
  EXPECT_FALSE(IsDeploymentId("2026080T000000Z_a1b2c3"));
  EXPECT_FALSE(IsDeploymentId("20260801T000000Z_a-b"));
  EXPECT_FALSE(IsDeploymentId("20260801t000000Z_abc"));
  EXPECT_FALSE(IsDeploymentId(""));
}

TEST(PhysicalName, JoinsAndSplitsAtTheDeploymentSuffix) {
  EXPECT_EQ(PhysicalName("tbl__orders", "20260801T000000Z_a1b2c3"), "tbl__orders__20260801T000000Z_a1b2c3");
  EXPECT_EQ(SplitPhysicalName("tbl__orders__20260801T000000Z_a1b2c3"),
            (std::optional<PhysicalNameParts>{{"tbl__orders", "20260801T000000Z_a1b2c3"}}));
  EXPECT_EQ(SplitPhysicalName("view__x__20260801T000000Z_abc")->logical, "view__x");
  EXPECT_FALSE(SplitPhysicalName("tbl__orders")) << "a logical name";
  EXPECT_FALSE(SplitPhysicalName("tbl__orders__v2")) << "a suffix that is not a deployment id";
  EXPECT_FALSE(SplitPhysicalName("__20260801T000000Z_abc")) << "no logical part";
}

std::vector<ColumnSpec> Columns(std::initializer_list<std::pair<const char*, const char*>> columns) {
  std::vector<ColumnSpec> specs;
  for (const auto& [name, type] : columns) specs.push_back({name, type});
  return specs;
}

TEST(ColumnDiff, AddingColumnsOnlyIsNonBreakingAndSeedable) {
  const ColumnDiff diff = DiffColumns(Columns({{"id", "UInt64"}, {"amount", "Float64"}}),
                                      Columns({{"id", "UInt64"}, {"country", "String"}, {"amount", "Float64"}}));
  EXPECT_EQ(diff.added, std::vector<std::string>{"country"});
  EXPECT_TRUE(diff.removed.empty());
  EXPECT_EQ(diff.shared, (std::vector<std::string>{"id", "amount"}));
  EXPECT_EQ(diff.impact, ChangeImpact::kNonBreaking);
  EXPECT_EQ(diff.seedability, Seedability::kSeedable);
}

TEST(ColumnDiff, RemovingAColumnIsBreakingButSeedable) {
  const ColumnDiff diff =
      DiffColumns(Columns({{"id", "UInt64"}, {"legacy", "String"}}), Columns({{"id", "UInt64"}, {"new", "String"}}));
  EXPECT_EQ(diff.removed, std::vector<std::string>{"legacy"});
  EXPECT_EQ(diff.added, std::vector<std::string>{"new"});
  EXPECT_EQ(diff.impact, ChangeImpact::kBreaking);
  EXPECT_EQ(diff.seedability, Seedability::kSeedable);
  EXPECT_EQ(ChangeImpactName(*diff.impact), "breaking");
  EXPECT_EQ(SeedabilityName(*diff.seedability), "seedable");
}

TEST(ColumnDiff, ChangingATypeIsBreakingAndNotSeedable) {
  const ColumnDiff diff = DiffColumns(Columns({{"id", "UInt64"}, {"amount", "Float64"}}),
                                      Columns({{"id", "UInt64"}, {"amount", "Decimal(18, 2)"}}));
  EXPECT_EQ(diff.retyped, (std::vector<TypeChange>{{"amount", "Float64", "Decimal(18, 2)"}}));
  EXPECT_EQ(diff.shared, std::vector<std::string>{"id"});
  EXPECT_EQ(diff.impact, ChangeImpact::kBreaking);
  EXPECT_EQ(diff.seedability, Seedability::kNonSeedable);
  EXPECT_EQ(SeedabilityName(*diff.seedability), "non_seedable");
}

TEST(ColumnDiff, TheSameColumnsInAnotherOrderOrSpellingAreNoChange) {
  const ColumnDiff diff = DiffColumns(Columns({{"at", "DateTime64(3, 'UTC')"}, {"id", "UInt64"}}),
                                      Columns({{"id", "UInt64"}, {"at", "DateTime64( 3 ,'UTC' )"}}));
  EXPECT_TRUE(diff.added.empty() && diff.removed.empty() && diff.retyped.empty());
  EXPECT_FALSE(diff.impact);
  EXPECT_FALSE(diff.seedability);
  EXPECT_EQ(diff.shared, (std::vector<std::string>{"id", "at"}));
}

TEST(ColumnDiff, TypeNamesStayCaseSensitive) {
  EXPECT_EQ(NormalizeTypeSpelling("  Nullable( String )  "), "Nullable(String)");
  EXPECT_EQ(NormalizeTypeSpelling("Map(String,UInt64)"), "Map(String, UInt64)");
  EXPECT_EQ(NormalizeTypeSpelling("LowCardinality(Nullable(String))"), "LowCardinality(Nullable(String))");
  EXPECT_EQ(DiffColumns(Columns({{"s", "String"}}), Columns({{"s", "string"}})).impact, ChangeImpact::kBreaking);
}

DeploymentRow StateRow(const std::string& id, const std::string& fingerprint, DeploymentState state) {
  DeploymentRow row;
  row.deployment_id = id;
  row.plan_fingerprint = fingerprint;
  row.state = state;
  return row;
}

TEST(ChooseDeploymentId, ResumesAnUnfinishedDeploymentOfThePlanElseTakesTheIdAPlanRecorded) {
  const std::vector<RecordedPlan> recorded{{"20260801T000000Z_plan01", "f1"}};
  VirtualActualState actual;
  EXPECT_EQ(ChooseDeploymentId(actual, {}, "f1", recorded)->deployment_id, "20260801T000000Z_plan01");
  EXPECT_FALSE(ChooseDeploymentId(actual, {}, "f1", recorded)->resumes);
  EXPECT_FALSE(ChooseDeploymentId(actual, {}, "f2", recorded)) << "another plan: a new id";

  actual.deployments = {StateRow("20260801T000000Z_plan01", "f1", DeploymentState::kBackfilled)};
  EXPECT_FALSE(ChooseDeploymentId(actual, {}, "f1", recorded)) << "the recorded id is taken already";

  actual.deployments.push_back(StateRow("20260801T000100Z_aaaaaa", "f1", DeploymentState::kFailed));
  const std::optional<ChosenDeploymentId> resumed = ChooseDeploymentId(actual, {}, "f1", recorded);
  ASSERT_TRUE(resumed);
  EXPECT_EQ(resumed->deployment_id, "20260801T000100Z_aaaaaa");
  EXPECT_TRUE(resumed->resumes);
  PublicationRow published;
  published.deployment_id = "20260801T000100Z_aaaaaa";
  EXPECT_FALSE(ChooseDeploymentId(actual, {published}, "f1", recorded)) << "a published deployment is never resumed";
}

}  // namespace
}  // namespace sluice
