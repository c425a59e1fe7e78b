// Code programs end to end (seed 000): examples/sdk_orders (both seed examples), a program deployed with a SQL-model
// project (tests/sdk/mixed_definitions.cpp on tests/projects/sdk_mixed), and one whose definitions inspection rejects.
// Each runs in a scratch folder, its working directory, with SEGMENTSTREAM_WAREHOUSE_* set only where a test sets them.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "e2e/sluice_process.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

using testing::ProcessResult;
using testing::ScratchProject;

const std::map<std::string, std::string> kDuckDb = {{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "duckdb"},
                                                    {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "warehouse.duckdb"},
                                                    {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "analytics"}};

std::string Output(const ProcessResult& result) { return result.out + result.err; }

// The first column of each row of `sql`, on the DuckDB file `path` (read-only).
std::vector<std::string> Column(const std::filesystem::path& path, const std::string& sql) {
  WarehouseConfig config;
  config.adapter = "duckdb";
  config.connection = {{"path", path.string()}};
  config.mode = AccessMode::kReadOnly;
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  std::vector<std::string> values;
  for (const auto& row : warehouse->Query(sql).rows) values.push_back(row[0].value_or("NULL"));
  return values;
}

TEST(SdkProgram, InspectNeedsNeitherTheVariablesNorAWarehouse) {
  ScratchProject folder("examples/sdk_orders");
  ProcessResult plain = folder.RunProgram(SDK_ORDERS_BINARY, {"inspect"});
  ASSERT_EQ(plain.exit_code, 0) << Output(plain);
  EXPECT_NE(plain.out.find("silver.daily_orders → silver.daily_orders  daily from 2026-01-01 by event_date  backfill "
                           "multi_run(10)"),
            std::string::npos)
      << plain.out;
  EXPECT_NE(plain.out.find("inspection passed: 3 asset(s)"), std::string::npos);
  // A server nobody listens on: inspection never tries it.
  ProcessResult unreachable = folder.RunProgram(SDK_ORDERS_BINARY, {"inspect", "--json"},
                                                {{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "clickhouse"},
                                                 {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "127.0.0.1:1"}});
  ASSERT_EQ(unreachable.exit_code, 0) << Output(unreachable);
  nlohmann::json report = nlohmann::json::parse(unreachable.out);
  EXPECT_TRUE(report["ok"]);
  ASSERT_EQ(report["assets"].size(), 3u);
  EXPECT_EQ(report["assets"][2]["key"], "silver.orders");
  EXPECT_EQ(report["assets"][2]["inputs"][0], "orders=bronze.orders");
  EXPECT_EQ(report["assets"][2]["kinds"][0], "ibis");
  EXPECT_FALSE(std::filesystem::exists(folder.root() / "warehouse.duckdb"));
}

TEST(SdkProgram, AMissingVariableIsReportedWhenARunFirstNeedsTheWarehouse) {
  ScratchProject folder("examples/sdk_orders");
  ProcessResult none = folder.RunProgram(SDK_ORDERS_BINARY, {"run"});
  EXPECT_EQ(none.exit_code, 1);
  EXPECT_NE(none.err.find("error[SLU-SDK-001]: SEGMENTSTREAM_WAREHOUSE_ENGINE is not set"), std::string::npos)
      << none.err;
  std::map<std::string, std::string> partial = kDuckDb;
  partial.erase("SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE");
  ProcessResult missing = folder.RunProgram(SDK_ORDERS_BINARY, {"run"}, partial);
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE is not set"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(folder.root() / "warehouse.duckdb"));
  // History needs no warehouse.
  EXPECT_EQ(folder.RunProgram(SDK_ORDERS_BINARY, {"runs"}).exit_code, 0);
}

TEST(SdkProgram, RunsBothSeedExamplesOnDuckDB) {
  ScratchProject folder("examples/sdk_orders");
  ProcessResult first = folder.RunProgram(SDK_ORDERS_BINARY, {"run", "--select", "orders+"}, kDuckDb);
  ASSERT_EQ(first.exit_code, 0) << Output(first);
  ProcessResult daily = folder.RunProgram(
      SDK_ORDERS_BINARY, {"run", "--select", "daily_orders", "--from", "2026-01-01", "--to", "2026-01-25"}, kDuckDb);
  ASSERT_EQ(daily.exit_code, 0) << Output(daily);
  std::filesystem::path file = folder.root() / "warehouse.duckdb";
  EXPECT_EQ(Column(file, "SELECT order_id || ':' || amount FROM bronze.orders"), std::vector<std::string>{"o-1:100.0"});
  EXPECT_EQ(Column(file, "SELECT count(*) FROM silver.orders WHERE amount > 0"), std::vector<std::string>{"1"});
  EXPECT_EQ(Column(file, "SELECT count(*) || ' ' || min(event_date) || ' ' || max(event_date) || ' ' || sum(order_count) "
                         "FROM silver.daily_orders"),
            std::vector<std::string>{"25 2026-01-01 2026-01-25 0"});
  ProcessResult status = folder.RunProgram(SDK_ORDERS_BINARY, {"status", "--json"}, kDuckDb);
  ASSERT_EQ(status.exit_code, 0) << Output(status);
  EXPECT_NE(status.out.find("silver.daily_orders"), std::string::npos);
  ProcessResult runs = folder.RunProgram(SDK_ORDERS_BINARY, {"runs", "--json"});
  ASSERT_EQ(runs.exit_code, 0) << Output(runs);
  nlohmann::json listed = nlohmann::json::parse(runs.out)["runs"];
  ASSERT_GE(listed.size(), 2u);
  ProcessResult logs = folder.RunProgram(SDK_ORDERS_BINARY, {"logs", listed.back()["run_id"]});
  EXPECT_EQ(logs.exit_code, 0) << Output(logs);
  EXPECT_NE(logs.out.find("bronze.orders"), std::string::npos) << logs.out;
}

TEST(SdkProgram, DefinitionsInspectionRejectsAreReportedByRuleAndNeverRun) {
  ScratchProject folder("examples/sdk_orders");
  ProcessResult inspect = folder.RunProgram(SDK_REJECTED_BINARY, {"inspect"});
  EXPECT_EQ(inspect.exit_code, 1);
  for (const char* expected :
       {"error[SLU-INSPECT-003]: asset bronze.hourly: partitions_def is a HourlyPartitionsDefinition",
        "error[SLU-INSPECT-004]: asset bronze.shifted: its DailyPartitionsDefinition is not the default: its timezone is "
        "Europe/Berlin, not UTC",
        "error[SLU-INSPECT-005]: asset bronze.undated: it is partitioned but declares no physical DATE column",
        "error[SLU-INSPECT-001]: asset a.b.c: key a/b/c has 3 part(s)",
        "error[SLU-INSPECT-002]: asset bronze.elsewhere: metadata \"project\" would override the catalog",
        "rejected_definitions.cpp:"}) {
    EXPECT_NE(inspect.err.find(expected), std::string::npos) << expected << "\n" << inspect.err;
  }
  EXPECT_NE(inspect.out.find("code  fine → <default namespace>.fine  unpartitioned"), std::string::npos) << inspect.out;
  ProcessResult run = folder.RunProgram(SDK_REJECTED_BINARY, {"run"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("SLU-INSPECT-003"), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("SLU-SDK-001"), std::string::npos) << "inspection comes before the environment";
}

TEST(SdkProgram, CodeAssetsReadTheModelsOfTheSqlProjectTheyAreDeployedWith) {
  ScratchProject folder("sdk_mixed");
  ProcessResult inspect = folder.RunProgram(SDK_MIXED_BINARY, {"inspect"});
  ASSERT_EQ(inspect.exit_code, 0) << Output(inspect);
  EXPECT_NE(inspect.out.find("code  silver.event_counts → silver.event_counts  daily from 2026-01-01 by event_date  "
                             "backfill multi_run(2)  inputs: events=raw_events"),
            std::string::npos)
      << inspect.out;
  EXPECT_NE(inspect.out.find("table  bronze.raw_events"), std::string::npos) << inspect.out;
  // And a model reads a code asset.
  EXPECT_NE(inspect.out.find("table  gold.busy_days → gold.busy_days  unpartitioned  inputs: silver.event_counts"),
            std::string::npos)
      << inspect.out;
  ProcessResult run = folder.RunProgram(SDK_MIXED_BINARY, {"run", "--from", "2026-01-01", "--to", "2026-01-04"});
  ASSERT_EQ(run.exit_code, 0) << Output(run);
  std::filesystem::path file = folder.root() / ".sluice" / "dev.duckdb";
  EXPECT_EQ(Column(file, "SELECT event_date || '=' || events FROM silver.event_counts ORDER BY event_date"),
            (std::vector<std::string>{"2026-01-01=3", "2026-01-02=3", "2026-01-03=3", "2026-01-04=3"}));
  EXPECT_EQ(Column(file, "SELECT days || ' ' || events FROM gold.totals"), std::vector<std::string>{"4 12"});
  EXPECT_EQ(Column(file, "SELECT count(*) FROM gold.busy_days"), std::vector<std::string>{"4"});
  // A one-day run of the code asset reads only that day of the model.
  ProcessResult one = folder.RunProgram(SDK_MIXED_BINARY, {"run", "--select", "event_counts", "--partition", "2026-01-02"});
  ASSERT_EQ(one.exit_code, 0) << Output(one);
  EXPECT_NE(one.out.find("silver.event_counts [2026-01-02]  1 rows"), std::string::npos) << one.out;
  // What the compute function logged is the run's event log.
  nlohmann::json runs = nlohmann::json::parse(folder.RunProgram(SDK_MIXED_BINARY, {"runs", "--json"}).out)["runs"];
  ProcessResult logs = folder.RunProgram(SDK_MIXED_BINARY, {"logs", runs[0]["run_id"]});
  EXPECT_NE(logs.out.find("INFO counting 1 day(s)"), std::string::npos) << logs.out;
}

TEST(SdkProgram, SqlProjectsGetTheSameInspection) {
  ScratchProject project("examples/orders_demo");
  ProcessResult ok = project.Run({"inspect"});
  ASSERT_EQ(ok.exit_code, 0) << Output(ok);
  EXPECT_NE(ok.out.find("table  sales.daily_revenue → sales.daily_revenue  daily from 2026-11-01 by order_date  "
                        "backfill single_run"),
            std::string::npos)
      << ok.out;
  std::string model = project.Read("pipelines/orders/daily_revenue.sql");
  model.replace(model.find("CAST(order_date AS DATE) AS order_date"), 38, "CAST(order_date AS VARCHAR) AS order_date");
  project.Write("pipelines/orders/daily_revenue.sql", model);
  ProcessResult rejected = project.Run({"inspect"});
  EXPECT_EQ(rejected.exit_code, 1) << Output(rejected);
  // The loader already holds SQL models to it, located at the cast.
  EXPECT_NE(rejected.err.find("daily_revenue.sql:8:3: error[SLU-MODEL-008]"), std::string::npos) << Output(rejected);
}

}  // namespace
}  // namespace sluice
