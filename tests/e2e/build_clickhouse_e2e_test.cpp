// `sluice plan` and `sluice build` in direct mode on the real ClickHouse server the suite starts: the ch_shop fixture
// (an adopted source, a filter model, an aggregate model read through the filter's materialized view).
#include <signal.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

class BuildClickHouse : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RequireClickHouseTestServer();
    database_ = UniqueClickHouseDatabase("shop");
    warehouse_ = OpenWarehouse(ClickHouseTestConfig(server_, "default"));
    warehouse_->Execute("CREATE DATABASE " + database_);
    warehouse_->Execute("CREATE TABLE " + database_ +
                        ".events_raw (_replay_partition Int32, _replay_offset Int64, _replay_timestamp DateTime, "
                        "order_id UInt64, amount Float64, status String) ENGINE = MergeTree() "
                        "ORDER BY (_replay_partition, _replay_offset)");
    Insert(0, 1, 1, 10, "paid");
    Insert(0, 2, 2, 5, "open");
    Insert(1, 1, 3, 7, "paid");
  }
  void TearDown() override {
    if (warehouse_) warehouse_->Execute("DROP DATABASE IF EXISTS " + database_);
  }

  void Insert(int partition, int offset, int order, double amount, const std::string& status) {
    warehouse_->Execute("INSERT INTO " + database_ + ".events_raw VALUES (" + std::to_string(partition) + ", " +
                        std::to_string(offset) + ", '2026-01-0" + std::to_string(1 + order % 3) + " 10:00:00', " +
                        std::to_string(order) + ", " + std::to_string(amount) + ", '" + status + "')");
  }

  std::map<std::string, std::string> Env() const {
    return {{"STREAMBUILD_CLICKHOUSE_HOST", server_.host},
            {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(server_.port)},
            {"STREAMBUILD_CLICKHOUSE_PASSWORD", server_.password}};
  }

  ProcessResult Sluice(const ScratchProject& project, std::vector<std::string> args,
                       std::map<std::string, std::string> env = {}) const {
    args.insert(args.begin() + 1, {"--database", database_});
    std::map<std::string, std::string> all = Env();
    all.insert(env.begin(), env.end());
    return project.Run(args, all);
  }

  std::string One(const std::string& sql) {
    Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "" : rows.rows[0][0].value_or("NULL");
  }
  std::string PaidCount() { return One("SELECT toString(count()) FROM " + database_ + ".tbl__paid_orders"); }
  std::string TotalOrders() { return One("SELECT toString(sum(orders)) FROM " + database_ + ".tbl__daily_totals"); }
  std::string Tables() {
    Rows rows = warehouse_->Query("SELECT name FROM system.tables WHERE database = '" + database_ + "' ORDER BY name");
    std::string names;
    for (const auto& row : rows.rows) names += row[0].value_or("") + " ";
    return names;
  }

  ClickHouseTestServer server_;
  std::string database_;
  std::unique_ptr<Warehouse> warehouse_;
};

TEST_F(BuildClickHouse, PlanChangesNothingAndWritesThePlanFiles) {
  ScratchProject project("ch_shop");
  ProcessResult plan = Sluice(project, {"plan"});
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_NE(plan.out.find("replay_tbl__paid_orders"), std::string::npos) << plan.out;
  EXPECT_EQ(Tables(), "events_raw ");
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/plan/plan.json"));
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/plan/workflow.template.sql"));
  ProcessResult json = Sluice(project, {"plan", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("\"lineage_mode\": \"offsets\""), std::string::npos) << json.out;
  EXPECT_EQ(Tables(), "events_raw ");
}

TEST_F(BuildClickHouse, BuildsFromHistoryThenFollowsTheSourceAndRebuildsWithoutLossOrDoubling) {
  ScratchProject project("ch_shop");
  ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ(PaidCount(), "2");
  EXPECT_EQ(TotalOrders(), "2");
  EXPECT_EQ(One("SELECT toString(sum(amount)) FROM " + database_ + ".tbl__daily_totals"), "17");

  Insert(0, 3, 4, 1, "paid");  // after the build: through the materialized views
  Insert(1, 2, 5, 2, "open");
  EXPECT_EQ(PaidCount(), "3");
  EXPECT_EQ(TotalOrders(), "3");

  ProcessResult again = Sluice(project, {"build", "--auto-approve", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(PaidCount(), "3");
  EXPECT_EQ(TotalOrders(), "3");
  EXPECT_EQ(One("SELECT toString(count()) FROM _sluice.fingerprints WHERE model = '" + database_ + ".paid_orders'"), "2");

  ProcessResult plan = Sluice(project, {"plan"});
  EXPECT_NE(plan.out.find("(unchanged since the last build)"), std::string::npos) << plan.out;
  project.Write("pipelines/pl__shop/paid_orders.sql",
                project.Read("pipelines/pl__shop/paid_orders.sql") + "  AND amount > 0\n");
  plan = Sluice(project, {"plan"});
  EXPECT_NE(plan.out.find("(changed since the last build)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("+  AND amount > 0"), std::string::npos) << plan.out;
}

TEST_F(BuildClickHouse, TimestampModeReplaysUpToTheCapturedTime) {
  ScratchProject project("ch_shop");
  project.Write("sources/events.yml",
                "sources:\n  - kind: stream_table\n    name: events\n    table_name: events_raw\n"
                "    replay_boundary:\n      mode: timestamp\n      columns:\n"
                "        _replay_timestamp: _replay_timestamp\n");
  ProcessResult build = Sluice(project, {"build", "--auto-approve", "--json"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_NE(build.out.find("_replay_timestamp <= '2026-01-03 10:00:00'"), std::string::npos) << build.out;
  EXPECT_EQ(PaidCount(), "2");
  Insert(0, 3, 4, 1, "paid");
  ProcessResult again = Sluice(project, {"build", "--auto-approve"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(PaidCount(), "3");
  EXPECT_EQ(TotalOrders(), "3");
}

TEST_F(BuildClickHouse, RowsArrivingDuringTheReplayLandExactlyOnce) {
  ScratchProject project("ch_shop");
  const std::filesystem::path marker = project.root() / "paused";
  const std::filesystem::path resume = project.root() / "resume";
  std::map<std::string, std::string> env = Env();
  env["SLUICE_TEST_PAUSE_AT"] = "build_before_replay_insert";
  env["SLUICE_TEST_PAUSE_MARKER"] = marker.string();
  env["SLUICE_TEST_PAUSE_RESUME"] = resume.string();
  pid_t pid = project.Start({"--database", database_, "build", "--auto-approve"}, env, "build");
  ASSERT_TRUE(WaitForFile(marker, 60));
  Insert(0, 3, 4, 1, "paid");  // the root's view exists, its history is not inserted yet
  Insert(1, 2, 6, 3, "paid");
  std::ofstream(resume) << "go\n";
  auto output = [&](const std::string& name) {
    std::ifstream in(project.root().parent_path() / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  ASSERT_EQ(WaitFor(pid), 0) << output("build.out") << output("build.err");
  EXPECT_EQ(PaidCount(), "4");
  EXPECT_EQ(TotalOrders(), "4");
  EXPECT_EQ(One("SELECT toString(count()) FROM (SELECT order_id FROM " + database_ +
                ".tbl__paid_orders GROUP BY order_id HAVING count() > 1)"),
            "0");
  EXPECT_NE(output("build.out").find("(2 replay windows)"), std::string::npos) << output("build.out");
}

TEST_F(BuildClickHouse, AKillAtEveryPhaseLeavesABuildThatTheNextOneCompletes) {
  int paid = 2;
  for (const std::string point : {"build_after_teardown", "build_after_realization", "build_before_replay_insert",
                                  "build_after_replay"}) {
    ScratchProject project("ch_shop");
    const std::filesystem::path marker = project.root() / "paused";
    std::map<std::string, std::string> env = Env();
    env["SLUICE_TEST_PAUSE_AT"] = point;
    env["SLUICE_TEST_PAUSE_MARKER"] = marker.string();
    pid_t pid = project.Start({"--database", database_, "build", "--auto-approve"}, env, "killed");
    ASSERT_TRUE(WaitForFile(marker, 60)) << point;
    kill(pid, SIGKILL);
    WaitFor(pid);
    ProcessResult rerun = Sluice(project, {"build", "--auto-approve"});
    ASSERT_EQ(rerun.exit_code, 0) << point << rerun.out << rerun.err;
    EXPECT_EQ(PaidCount(), std::to_string(paid)) << point;
    EXPECT_EQ(TotalOrders(), std::to_string(paid)) << point;
    Insert(0, 100 + paid, 10 + paid, 1, "paid");  // the views are live again, all the way down
    ++paid;
    EXPECT_EQ(PaidCount(), std::to_string(paid)) << point;
    EXPECT_EQ(TotalOrders(), std::to_string(paid)) << point;
  }
}

TEST_F(BuildClickHouse, AFailingErrorAuditFailsTheBuildAfterTheDataIsBuilt) {
  ScratchProject project("ch_shop");
  Insert(0, 3, 4, -5, "paid");
  ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1) << build.out << build.err;
  EXPECT_NE(build.out.find("SLU-AUDIT-001"), std::string::npos) << build.out;
  EXPECT_EQ(PaidCount(), "3");
}

TEST_F(BuildClickHouse, AMissingAdoptedTableIsALocatedErrorAndNothingIsCreated) {
  ScratchProject project("ch_shop");
  warehouse_->Execute("DROP TABLE " + database_ + ".events_raw");
  ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1);
  EXPECT_NE(build.err.find("sources/events.yml"), std::string::npos) << build.err;
  EXPECT_NE(build.err.find("SLU-SOURCE-020"), std::string::npos) << build.err;
  EXPECT_EQ(Tables(), "");
}

TEST_F(BuildClickHouse, AMistypedBoundaryColumnIsALocatedError) {
  ScratchProject project("ch_shop");
  warehouse_->Execute("DROP TABLE " + database_ + ".events_raw");
  warehouse_->Execute("CREATE TABLE " + database_ +
                      ".events_raw (_replay_partition Int32, _replay_offset String, _replay_timestamp DateTime, "
                      "order_id UInt64, amount Float64, status String) ENGINE = MergeTree() ORDER BY _replay_partition");
  ProcessResult plan = Sluice(project, {"plan"});
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_NE(plan.err.find("sources/events.yml"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("SLU-SOURCE-022"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("'_replay_offset'"), std::string::npos) << plan.err;
}

TEST_F(BuildClickHouse, AFeatureTheServerLacksIsOneLocatedErrorNamingTheVersion) {
  ScratchProject project("ch_shop");
  project.Write("pipelines/pl__shop/paid_orders.sql",
                "MODEL (order_by [\"_replay_partition\", \"_replay_offset\"]);\n\nSELECT\n"
                "  order_id::UInt64 AS order_id,\n  CAST(amount AS Float64) AS amount,\n"
                "  CAST(_replay_partition AS Int32) AS _replay_partition,\n"
                "  CAST(_replay_offset AS Int64) AS _replay_offset,\n"
                "  CAST(_replay_timestamp AS DateTime) AS _replay_timestamp\nFROM __source(\"events\")\n");
  ProcessResult plan = Sluice(project, {"plan"});
  EXPECT_EQ(plan.exit_code, 1) << plan.out;
  EXPECT_NE(plan.err.find("pipelines/pl__shop/paid_orders.sql:4:11"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("SLU-CLICKHOUSE-001"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("18.16"), std::string::npos) << plan.err;
  ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1);
  EXPECT_EQ(Tables(), "events_raw ");
}

TEST_F(BuildClickHouse, AFailingStatementNamesTheModelItBuilds) {
  ScratchProject project("ch_shop");
  std::string model = project.Read("pipelines/pl__shop/paid_orders.sql");
  model.replace(model.find("CAST(amount AS Float64)"), 23, "CAST(no_such_function(amount) AS Float64)");
  project.Write("pipelines/pl__shop/paid_orders.sql", model);
  ProcessResult build = Sluice(project, {"build", "--auto-approve", "--json"});
  EXPECT_EQ(build.exit_code, 1) << build.out << build.err;
  bool located = false;
  const nlohmann::json steps = nlohmann::json::parse(build.out)["steps"];
  for (const nlohmann::json& step : steps) {
    if (!step.contains("diagnostics")) continue;
    for (const nlohmann::json& d : step["diagnostics"]) {
      EXPECT_EQ(d["file"], "pipelines/pl__shop/paid_orders.sql") << step.dump();
      located = true;
    }
  }
  EXPECT_TRUE(located) << build.out;
  ProcessResult text = Sluice(project, {"build", "--auto-approve"});
  EXPECT_NE(text.out.find("    pipelines/pl__shop/paid_orders.sql: error[SLU-WAREHOUSE-021]"), std::string::npos)
      << text.out;
}

TEST_F(BuildClickHouse, AProtectedPipelineNeedsItsToken) {
  ScratchProject project("ch_shop");
  project.Write("pipelines/pl__shop/pipeline.toml", "[protection]\nwarning = \"feeds billing\"\nconfirmation = \"SHOP\"\n");
  ProcessResult refused = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("--confirm SHOP"), std::string::npos) << refused.err;
  EXPECT_EQ(Tables(), "events_raw ");
  ProcessResult confirmed = Sluice(project, {"build", "--auto-approve", "--confirm", "SHOP"});
  EXPECT_EQ(confirmed.exit_code, 0) << confirmed.out << confirmed.err;
}

TEST_F(BuildClickHouse, JsonAndEventsNeedAutoApprove) {
  ScratchProject project("ch_shop");
  EXPECT_EQ(Sluice(project, {"build", "--json"}).exit_code, 2);
  ProcessResult events = Sluice(project, {"build", "--auto-approve", "--events"});
  ASSERT_EQ(events.exit_code, 0) << events.err;
  EXPECT_NE(events.out.find("{\"event\":\"step_started\""), std::string::npos) << events.out;
  EXPECT_NE(events.out.find("\"event\":\"build_finished\""), std::string::npos) << events.out;
}

}  // namespace
}  // namespace sluice::testing

namespace sluice::testing {
namespace {

// A managed Kafka source on 18.16, whose Kafka engine has no virtual columns for the landing view: plan shows the
// source's difference from the warehouse and the blocker (exit 1); build refuses before changing anything.
TEST(BuildClickHouseKafka, AChangedSourceIsShownAndAnOldServerIsRefusedBeforeAnyChange) {
  ClickHouseTestServer server = RequireClickHouseTestServer();
  const std::string database = UniqueClickHouseDatabase("kafka");
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(ClickHouseTestConfig(server, "default"));
  warehouse->Execute("CREATE DATABASE " + database);
  warehouse->Execute("CREATE TABLE " + database +
                     ".kafka__orders (message String) ENGINE = Kafka SETTINGS kafka_broker_list = 'broker:9092', "
                     "kafka_topic_list = 'shop.orders.v1', kafka_group_name = 'g', kafka_format = 'JSONEachRow'");
  ScratchProject project("ch_kafka");
  const std::map<std::string, std::string> env = {{"STREAMBUILD_CLICKHOUSE_HOST", server.host},
                                                  {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(server.port)},
                                                  {"STREAMBUILD_CLICKHOUSE_PASSWORD", server.password}};
  ProcessResult plan = project.Run({"--database", database, "plan"}, env);
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_NE(plan.out.find("kafka_topic_list: 'shop.orders.v1' in the warehouse, 'shop.orders' in the project"),
            std::string::npos)
      << plan.out;
  EXPECT_NE(plan.err.find("sources/orders.yml"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("SLU-CLICKHOUSE-002"), std::string::npos) << plan.err;
  ProcessResult build = project.Run({"--database", database, "build", "--auto-approve"}, env);
  EXPECT_EQ(build.exit_code, 1);
  EXPECT_NE(build.err.find("SLU-CLICKHOUSE-002"), std::string::npos) << build.err;
  Rows tables = warehouse->Query("SELECT name FROM system.tables WHERE database = '" + database + "'");
  EXPECT_EQ(tables.rows.size(), 1u);
  warehouse->Execute("DROP DATABASE " + database);
}

}  // namespace
}  // namespace sluice::testing
