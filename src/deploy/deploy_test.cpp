// Unit tests of the deploy layer that need no server: the direct plan's shape for each server capability, the
// workflow files, fingerprints' diffs.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "deploy/direct_plan.hpp"
#include "deploy/fingerprints.hpp"
#include "deploy/plan_explainer.hpp"
#include "project/project_loader.hpp"

namespace sluice {
namespace {

const Project& Fixture(const std::string& name) {
  static std::map<std::string, Project> projects;
  auto it = projects.find(name);
  if (it == projects.end()) {
    it = projects.emplace(name, LoadProject(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / name,
                                            LoadOptions{}))
             .first;
  }
  return it->second;
}

std::vector<std::string> StepNames(const DirectPlan& plan) {
  std::vector<std::string> names;
  for (const PlanStep& step : plan.steps) names.push_back(DeployPhaseName(step.phase) + " " + step.name);
  return names;
}

std::string AllSql(const PlanStep& step) {
  std::string text;
  for (const PlanStatement& statement : step.statements) text += statement.sql + ";\n";
  return text;
}

const PlanStep& Step(const DirectPlan& plan, const std::string& name) {
  auto it = std::find_if(plan.steps.begin(), plan.steps.end(), [&](const PlanStep& s) { return s.name == name; });
  EXPECT_NE(it, plan.steps.end()) << name;
  return *it;
}

TEST(DirectPlan, PhasesInOrderWithTheRootViewCreatedByItsReplay) {
  const DirectPlan plan = PlanDirect(Fixture("ch_shop").definitions, {}, ModernClickHouseCapabilities());
  EXPECT_EQ(StepNames(plan), (std::vector<std::string>{
                                 "prepare create_database_ch_shop", "teardown drop_tbl__daily_totals",
                                 "teardown drop_tbl__paid_orders", "realization create_table_tbl__paid_orders",
                                 "realization create_table_tbl__daily_totals", "replay replay_tbl__paid_orders",
                                 "audit audit_paid_amounts_are_positive"}));
  EXPECT_EQ(AllSql(Step(plan, "drop_tbl__paid_orders")),
            "DROP TABLE IF EXISTS `ch_shop`.`mv__paid_orders` SYNC;\nDROP TABLE IF EXISTS `ch_shop`.`tbl__paid_orders` SYNC;\n");
  const std::string realization = AllSql(Step(plan, "create_table_tbl__daily_totals"));
  EXPECT_NE(realization.find("CREATE MATERIALIZED VIEW ch_shop.mv__daily_totals\nTO ch_shop.tbl__daily_totals"),
            std::string::npos)
      << realization;
  EXPECT_EQ(AllSql(Step(plan, "create_table_tbl__paid_orders")).find("MATERIALIZED VIEW"), std::string::npos);
  const PlanStep& replay = Step(plan, "replay_tbl__paid_orders");
  ASSERT_TRUE(replay.replay);
  EXPECT_EQ(replay.replay->mode, "offsets");
  EXPECT_EQ(replay.replay->driving_table, "events_raw");
  EXPECT_EQ(replay.replay->subtree.size(), 2u);
  const std::string sql = AllSql(replay);
  EXPECT_NE(sql.find("CREATE MATERIALIZED VIEW ch_shop.mv__paid_orders"), std::string::npos) << sql;
  EXPECT_NE(sql.find("INSERT INTO `ch_shop`.`tbl__paid_orders`"), std::string::npos) << sql;
  EXPECT_NE(sql.find("(SELECT * FROM ch_shop.events_raw WHERE {replay_boundary})"), std::string::npos) << sql;
}

TEST(DirectPlan, WithoutCascadingViewsEachModelReadsEveryWayRowsReachItsDrivingModel) {
  Capabilities old;  // ClickHouse 18.16: no cascade, no DROP … SYNC
  old.server_version = "18.16.1";
  const DirectPlan plan = PlanDirect(Fixture("ch_shop").definitions, {}, old);
  EXPECT_EQ(AllSql(Step(plan, "create_table_tbl__daily_totals")).find("MATERIALIZED VIEW"), std::string::npos);
  const std::string sql = AllSql(Step(plan, "replay_tbl__paid_orders"));
  const size_t root = sql.find("CREATE MATERIALIZED VIEW ch_shop.mv__paid_orders");
  const size_t from_table = sql.find("CREATE MATERIALIZED VIEW ch_shop.mv__daily_totals\n");
  const size_t from_view = sql.find("CREATE MATERIALIZED VIEW ch_shop.mv__daily_totals__2\n");
  const size_t insert = sql.find("INSERT INTO");
  ASSERT_NE(from_view, std::string::npos) << sql;
  EXPECT_TRUE(root < from_table && from_table < from_view && from_view < insert) << sql;
  EXPECT_NE(sql.find("FROM `ch_shop`.`tbl__paid_orders`"), std::string::npos) << sql;
  EXPECT_NE(sql.find("FROM `ch_shop`.`mv__paid_orders`"), std::string::npos) << sql;
  EXPECT_NE(AllSql(Step(plan, "drop_tbl__daily_totals")).find("DROP TABLE IF EXISTS `ch_shop`.`mv__daily_totals__2`;\n"),
            std::string::npos);
}

TEST(DirectPlan, ManagedSourcesArePreparedIfNotExistsWithSecretsShownRedacted) {
  const DirectPlan plan = PlanDirect(Fixture("ch_kafka").definitions, {"order_ids"}, ModernClickHouseCapabilities());
  const PlanStep& kafka = Step(plan, "create_source_kafka__orders");
  EXPECT_EQ(kafka.phase, DeployPhase::kPrepare);
  EXPECT_NE(AllSql(kafka).find("CREATE TABLE IF NOT EXISTS ch_kafka.kafka__orders"), std::string::npos);
  EXPECT_NE(AllSql(Step(plan, "create_source_raw__orders")).find("IF NOT EXISTS"), std::string::npos);
  const PlanStep& replay = Step(plan, "replay_tbl__order_ids");
  EXPECT_EQ(replay.replay->landing_view, std::optional<std::string>("mv__orders"));
  EXPECT_EQ(replay.replay->driving_table, "raw__orders");
}

TEST(DirectPlan, DuckDbTablesAreReplacedByTheRunPath) {
  const DirectPlan plan = PlanDirect(Fixture("shop").definitions, {"core"}, Capabilities{});
  EXPECT_EQ(plan.adapter, "duckdb");
  ASSERT_FALSE(plan.scope.empty());
  for (const PlanStep& step : plan.steps) EXPECT_NE(step.phase, DeployPhase::kReplay);
}

TEST(WorkflowFiles, NumberedStepsATemplateForTheReplayAndTheJson) {
  const DirectPlan plan = PlanDirect(Fixture("ch_shop").definitions, {}, ModernClickHouseCapabilities());
  std::vector<std::string> paths;
  for (const auto& [path, text] : WorkflowFiles(plan)) paths.push_back(path);
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "steps/0001_create_database_ch_shop.sql", "steps/0002_drop_tbl__daily_totals.sql",
                       "steps/0003_drop_tbl__paid_orders.sql", "steps/0004_create_table_tbl__paid_orders.sql",
                       "steps/0005_create_table_tbl__daily_totals.sql", "steps/0006_replay_tbl__paid_orders.sql.template",
                       "steps/0007_audit_paid_amounts_are_positive.sql", "workflow.json", "workflow.template.sql"}));
}

TEST(UnifiedDiff, ShowsChangedLinesWithContext) {
  const std::string diff = UnifiedDiff("SELECT a\nFROM t\nWHERE x\n", "SELECT a\nFROM t\nWHERE y\n", "old", "new");
  EXPECT_NE(diff.find("--- old\n+++ new\n"), std::string::npos);
  EXPECT_NE(diff.find("-WHERE x"), std::string::npos);
  EXPECT_NE(diff.find("+WHERE y"), std::string::npos);
  EXPECT_NE(diff.find(" FROM t"), std::string::npos);
  EXPECT_EQ(UnifiedDiff("same\n", "same\n", "a", "b"), "");
}

TEST(DirectPlan, ASeedFedPipelineLoadsItsSeedAndReplaysItWholeIntoTablesKeyedByItsOutputs) {
  const Definitions& definitions = Fixture("ch_web").definitions;
  const auto storage = [&](const std::string& model) { return std::get<SqlCompute>(definitions.FindByName(model)->compute).storage; };
  EXPECT_EQ(storage("stg_events").order_by, std::vector<std::string>{"tuple()"});
  EXPECT_EQ(storage("daily_kpis").order_by, std::vector<std::string>{"day"});
  EXPECT_EQ(storage("daily_kpis").partition_by, std::optional<std::string>("day"));
  const DirectPlan plan = PlanDirect(definitions, {}, ModernClickHouseCapabilities());
  EXPECT_EQ(Step(plan, "load_seed_events").seed, std::optional<AssetKey>(AssetKey::Of("ch_web", "events")));
  const std::string tables = AllSql(Step(plan, "create_table_tbl__daily_kpis"));
  EXPECT_NE(tables.find(") ENGINE = MergeTree()\nORDER BY (day)\nPARTITION BY day;"), std::string::npos) << tables;
  EXPECT_NE(AllSql(Step(plan, "create_table_tbl__stg_events")).find("ORDER BY tuple();"), std::string::npos);
  const PlanStep& replay = Step(plan, "replay_tbl__stg_events");
  ASSERT_TRUE(replay.replay);
  EXPECT_EQ(replay.replay->mode, "snapshot");
  EXPECT_EQ(LineageColumns("snapshot"), std::vector<std::string>{});
}

TEST(DirectPlan, MappedRoleColumnsAreReadFromTheAdoptedTableItself) {
  const DirectPlan plan = PlanDirect(Fixture("ch_clicks").definitions, {}, ModernClickHouseCapabilities());
  const std::string replay = AllSql(Step(plan, "replay_tbl__click_events"));
  EXPECT_NE(replay.find("CAST(part AS Int32) AS _replay_partition"), std::string::npos) << replay;
  EXPECT_NE(replay.find("CAST(c.ofs AS Int64) AS _replay_offset"), std::string::npos) << replay;
  EXPECT_NE(replay.find("FROM ch_clicks.clicks_raw AS c\nWHERE"), std::string::npos) << "the view reads the table";
  EXPECT_NE(replay.find("FROM (SELECT * FROM ch_clicks.clicks_raw WHERE {replay_boundary}) AS c"), std::string::npos)
      << replay;
  EXPECT_EQ(replay.find("AS _replay_offset FROM"), std::string::npos) << "no renaming subquery: " << replay;
}

}  // namespace
}  // namespace sluice
