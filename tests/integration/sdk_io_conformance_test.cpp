// The exact I/O of code assets (seed 000), one suite every backend runs: DuckDB on a temporary file, ClickHouse on
// the 18.16 test server. Definitions come from the SDK (sdk::ToDefinitions) and run through the engine's one write
// path (RunExecutor), as `run` does: full replacement of unpartitioned assets, daily tables created on first write and
// then replaced exactly for the window's dates, inputs filtered to the window, output restricted to it with the
// dropped rows counted, namespaces created before the first write, run-time expression errors located at the asset.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>

#include "engine/run_executor.hpp"
#include "sdk/sdk_definitions.hpp"
#include "sluice/dg.hpp"
#include "sql/dialect.hpp"
#include "state/open_state_store.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;
namespace ibis = sluice::ibis;

Date D(const char* text) { return *Date::Parse(text); }

dg::AssetSpec Spec(dg::AssetKey key) {
  dg::AssetSpec spec;
  spec.key = std::move(key);
  spec.io_manager_key = WAREHOUSE_IO_MANAGER_KEY;
  return spec;
}

dg::AssetSpec Daily(dg::AssetKey key) {
  dg::AssetSpec spec = Spec(std::move(key));
  spec.partitions_def = dg::DailyPartitionsDefinition("2026-01-01");
  spec.metadata = warehouse_asset_metadata({.partition_by_date = "event_date"});
  return spec;
}

// One row per partition key of the run: (event_date, version).
ibis::Table RowPerKey(const dg::AssetExecutionContext& context, int64_t version) {
  std::vector<ibis::Row> rows;
  for (const std::string& key : context.partition_keys()) rows.push_back({{"event_date", D(key.c_str())}, {"v", version}});
  return ibis::memtable(rows, {{"event_date", "date"}, {"v", "int64"}});
}

class SdkIoConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    namespace_ = testing::UniqueClickHouseDatabase("sdk");
    other_ = namespace_ + "_silver";
    dir_ = fs::temp_directory_path() / ("sluice_sdk_io_" + namespace_);
    fs::create_directories(dir_);
    if (GetParam() == "duckdb") {
      WarehouseConfig config;
      config.adapter = "duckdb";
      config.connection = {{"path", (dir_ / "w.duckdb").string()}};
      warehouse_ = OpenWarehouse(config);
    } else {
      testing::ClickHouseTestServer server = testing::RequireClickHouseTestServer();
      warehouse_ = OpenWarehouse(testing::ClickHouseTestConfig(server, namespace_));
    }
    state_ = OpenStateStore(dir_);
  }
  void TearDown() override {
    if (warehouse_ != nullptr && GetParam() == "clickhouse") {
      for (const std::string& name : {other_, namespace_}) {  // the connection's own database last
        warehouse_->Execute("DROP DATABASE IF EXISTS " + sql::QuoteIdentifier(sql::Dialect::kClickHouse, name));
      }
    }
    warehouse_.reset();
    state_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Runs every asset of `code` (one-part keys in this test's namespace) over [from, to], or unpartitioned.
  RunOutcome Run(const dg::Definitions& code, std::optional<std::string> from = std::nullopt,
                 std::optional<std::string> to = std::nullopt, std::vector<std::string> select = {}) {
    definitions_ = std::make_unique<Definitions>(sdk::ToDefinitions(code, namespace_));
    RunPlan plan = PlanRun(*definitions_, RunRequest{select, from, to, false}, D("2026-12-01"));
    SystemClock clock;
    RunExecutor executor(*definitions_, *warehouse_, *state_, *state_, *state_, clock,
                         ExecutorOptions{1, dir_.string()});
    RunOutcome outcome = executor.Execute(plan, RunExecutor::NewRunId(clock), nullptr);
    for (const StepOutcome& step : outcome.steps) {  // shown when a test fails
      for (const Diagnostic& d : step.diagnostics) std::printf("%s: %s\n", d.code.c_str(), d.message.c_str());
    }
    return outcome;
  }

  // "date:v" per row, ordered.
  std::vector<std::string> RowsOf(const std::string& name_space, const std::string& table) {
    sluice::Rows rows = warehouse_->Query("SELECT event_date, v FROM " + warehouse_->QualifiedName(Relation{name_space, table}) +
                                  " ORDER BY event_date, v");
    std::vector<std::string> out;
    for (const auto& row : rows.rows) out.push_back(row[0].value_or("NULL") + ":" + row[1].value_or("NULL"));
    return out;
  }

  std::string namespace_, other_;
  fs::path dir_;
  std::unique_ptr<Warehouse> warehouse_;
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<Definitions> definitions_;
};

TEST_P(SdkIoConformance, UnpartitionedAssetsAreReplacedWholeInTheDefaultNamespace) {
  auto version = std::make_shared<int64_t>(1);
  auto orders = dg::asset(Spec("orders"), [version] {
    std::vector<ibis::Row> rows;
    for (int64_t i = 0; i < 3 - *version; ++i) rows.push_back({{"event_date", D("2026-01-01")}, {"v", *version * 10 + i}});
    return ibis::memtable(rows, {{"event_date", "date"}, {"v", "int64"}});
  });
  dg::Definitions code{{orders}, warehouse_resources()};
  ASSERT_EQ(Run(code).status, RunStatus::kSuccess);
  EXPECT_EQ(RowsOf(namespace_, "orders"), (std::vector<std::string>{"2026-01-01:10", "2026-01-01:11"}));
  *version = 2;
  ASSERT_EQ(Run(code).status, RunStatus::kSuccess);
  EXPECT_EQ(RowsOf(namespace_, "orders"), (std::vector<std::string>{"2026-01-01:20"}));
}

TEST_P(SdkIoConformance, DailyAssetsReplaceExactlyTheirWindowsDates) {
  auto version = std::make_shared<int64_t>(1);
  auto daily = dg::asset(Daily({other_, "daily_orders"}),
                         [version](const dg::AssetExecutionContext& context) { return RowPerKey(context, *version); });
  dg::Definitions code{{daily}, warehouse_resources()};
  EXPECT_FALSE(warehouse_->Describe(Relation{other_, "daily_orders"}));
  RunOutcome first = Run(code, "2026-01-01", "2026-01-05");
  ASSERT_EQ(first.status, RunStatus::kSuccess);
  EXPECT_EQ(first.steps[0].rows_written, 5);
  *version = 2;
  ASSERT_EQ(Run(code, "2026-01-02", "2026-01-03").status, RunStatus::kSuccess);
  EXPECT_EQ(RowsOf(other_, "daily_orders"), (std::vector<std::string>{"2026-01-01:1", "2026-01-02:2", "2026-01-03:2",
                                                                    "2026-01-04:1", "2026-01-05:1"}));
  std::vector<LedgerEntry> ledger;
  for (LedgerEntry& entry : warehouse_->ReadLedger()) {
    if (entry.relation && entry.relation->name_space == other_) ledger.push_back(entry);
  }
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[1].window, (DateWindow{D("2026-01-02"), D("2026-01-04")}));
}

TEST_P(SdkIoConformance, InputsAreFilteredToTheWindowAndOutputOutsideItIsDroppedAndCounted) {
  auto upstream = dg::asset(Daily("events"), [](const dg::AssetExecutionContext& context) { return RowPerKey(context, 7); });
  dg::AssetSpec copy_spec = Daily("copied");
  copy_spec.ins = {{"events", dg::AssetIn("events")}};
  auto copied = dg::asset(copy_spec, [](const dg::Inputs& inputs) { return inputs["events"]; });
  // Ignores its window: five days of rows whatever the run owns.
  auto greedy = dg::asset(Daily("greedy"), [] {
    std::vector<ibis::Row> rows;
    for (const char* day : {"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"}) {
      rows.push_back({{"event_date", D(day)}, {"v", int64_t{1}}});
    }
    return ibis::memtable(rows, {{"event_date", "date"}, {"v", "int64"}});
  });
  dg::Definitions code{{upstream, copied, greedy}, warehouse_resources()};
  ASSERT_EQ(Run(code, "2026-01-01", "2026-01-10", {"events"}).status, RunStatus::kSuccess);
  RunOutcome outcome = Run(code, "2026-01-03", "2026-01-04", {"copied", "greedy"});
  ASSERT_EQ(outcome.status, RunStatus::kSuccess);
  EXPECT_EQ(RowsOf(namespace_, "copied"), (std::vector<std::string>{"2026-01-03:7", "2026-01-04:7"}));
  const StepOutcome& copy_step = outcome.steps[0].key.name() == "copied" ? outcome.steps[0] : outcome.steps[1];
  const StepOutcome& greedy_step = outcome.steps[0].key.name() == "greedy" ? outcome.steps[0] : outcome.steps[1];
  EXPECT_EQ(copy_step.rows_dropped, 0);
  EXPECT_EQ(greedy_step.rows_written, 2);
  EXPECT_EQ(greedy_step.rows_dropped, 3);
  EXPECT_EQ(RowsOf(namespace_, "greedy"), (std::vector<std::string>{"2026-01-03:1", "2026-01-04:1"}));
}

TEST_P(SdkIoConformance, ExpressionErrorsAtRunTimeFailTheStepAtTheAssetsDefinition) {
  auto upstream = dg::asset(Spec("raw"), [] {
    return ibis::memtable({{{"event_date", D("2026-01-01")}, {"v", int64_t{1}}}}, {{"event_date", "date"}, {"v", "int64"}});
  });
  dg::AssetSpec spec = Spec("broken");
  spec.ins = {{"raw", dg::AssetIn("raw")}};
  int line = __LINE__ + 1;
  auto broken = dg::asset(spec, [](const dg::Inputs& inputs) { return inputs["raw"].filter(inputs["raw"]["amount"] > 0); });
  RunOutcome outcome = Run(dg::Definitions{{upstream, broken}, warehouse_resources()});
  EXPECT_EQ(outcome.status, RunStatus::kFailure);
  const StepOutcome& step = outcome.steps[1];
  EXPECT_EQ(step.status, StepStatus::kFailed);
  ASSERT_FALSE(step.diagnostics.empty());
  EXPECT_EQ(step.diagnostics[0].code, "SLU-EXPR-001");
  EXPECT_EQ(step.diagnostics[0].location.file, __FILE__);
  EXPECT_EQ(step.diagnostics[0].location.line, line);
  EXPECT_NE(step.diagnostics[0].message.find("amount"), std::string::npos);
  EXPECT_FALSE(warehouse_->Describe(Relation{namespace_, "broken"}));
}

TEST_P(SdkIoConformance, ADailyOutputWithoutItsDateColumnIsRefused) {
  auto wrong = dg::asset(Daily("wrong"), [] {
    return ibis::memtable({{{"event_date", "2026-01-01"}, {"v", int64_t{1}}}}, {{"event_date", "string"}, {"v", "int64"}});
  });
  RunOutcome outcome = Run(dg::Definitions{{wrong}, warehouse_resources()}, "2026-01-01", "2026-01-01");
  ASSERT_EQ(outcome.steps[0].status, StepStatus::kFailed);
  EXPECT_EQ(outcome.steps[0].diagnostics[0].code, "SLU-RUN-009");
}

INSTANTIATE_TEST_SUITE_P(Backends, SdkIoConformance, ::testing::Values("duckdb", "clickhouse"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace sluice
