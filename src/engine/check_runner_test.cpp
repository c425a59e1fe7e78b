// Unit tests of the check runner: test and audit selection, which statement a test runs, list decoding, and
// tests and audits run on a real DuckDB file (the `quality` fixture's definitions, its models written by hand
// so the ledger's times are known).
#include "engine/check_runner.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>

#include "project/project_loader.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice {
namespace {

using std::chrono::seconds;

const Project& Quality() {
  static const Project project =
      LoadProject(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / "quality", LoadOptions{});
  return project;
}

const Definitions& Defs() { return Quality().definitions; }

// A fresh DuckDB file in its own folder.
class ScratchWarehouse {
 public:
  ScratchWarehouse() {
    static int counter = 0;
    folder_ = std::filesystem::temp_directory_path() /
              ("sluice_check_runner_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    warehouse_ = DuckDbWarehouse::Open(folder_ / "quality.duckdb", false, {});
  }
  ~ScratchWarehouse() {
    warehouse_.reset();
    std::filesystem::remove_all(folder_);
  }
  DuckDbWarehouse& operator*() { return *warehouse_; }
  DuckDbWarehouse* operator->() { return warehouse_.get(); }

  // Writes `model`'s relation as `select_sql`, with its ledger row; returns the row's written_at.
  std::chrono::system_clock::time_point Materialize(const std::string& model, const std::string& select_sql) {
    const Asset& asset = *Defs().FindByName(model);
    warehouse_->EnsureSchema(asset.key.name_space());
    LedgerEntry ledger{asset.key.ToString(), std::nullopt, "test_run", 0, "hash", "", std::nullopt};
    WriteResult written =
        warehouse_->ReplaceTable(Relation{asset.key.name_space(), asset.relation_name}, select_sql, ledger);
    return *ParseUtc(written.written_at);
  }

 private:
  std::filesystem::path folder_;
  std::unique_ptr<DuckDbWarehouse> warehouse_;
};

const char* kOrders =
    "SELECT * FROM (VALUES (1, 'ada', 30, 'paid'), (4, 'cyd', 8, NULL)) AS t(id, customer, amount, status)";
const char* kTotals = "SELECT 'ada' AS customer, 42 AS total, 2 AS orders";

std::vector<std::string> TestNames(const std::vector<const TestSpec*>& tests) {
  std::vector<std::string> names;
  for (const TestSpec* test : tests) names.push_back(test->name);
  return names;
}

std::vector<std::string> AuditNames(const std::vector<const AuditSpec*>& audits) {
  std::vector<std::string> names;
  for (const AuditSpec* audit : audits) names.push_back(audit->name);
  return names;
}

std::string ErrorCode(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front().code;
  }
  return "no error";
}

std::map<std::string, AuditResult> ByName(const std::vector<AuditResult>& results) {
  std::map<std::string, AuditResult> by_name;
  for (const AuditResult& result : results) by_name[result.audit->name] = result;
  return by_name;
}

// ---- Selection ----

TEST(TestSelection, PathsChooseFilesOrFoldersRelativeToTheProject) {
  EXPECT_EQ(TestNames(SelectTests(Defs(), {})), (std::vector<std::string>{"orders", "totals leave refunds out"}));
  EXPECT_EQ(TestNames(SelectTests(Defs(), {{"tests/sales"}, {}, {}})),
            std::vector<std::string>{"totals leave refunds out"});
  EXPECT_EQ(TestNames(SelectTests(Defs(), {{"./tests/staging/orders.sql"}, {}, {}})),
            std::vector<std::string>{"orders"});
  EXPECT_EQ(TestNames(SelectTests(Defs(), {{"tests/"}, {}, {}})).size(), 2u);
  EXPECT_EQ(ErrorCode([] { SelectTests(Defs(), {{"tests/sal"}, {}, {}}); }), "SLU-SELECT-003");
  EXPECT_EQ(ErrorCode([] { SelectTests(Defs(), {{"tests/missing.sql"}, {}, {}}); }), "SLU-SELECT-003");
}

TEST(TestSelection, SelectKeepsTestsTargetingASelectedModel) {
  EXPECT_EQ(TestNames(SelectTests(Defs(), {{}, {"orders"}, {}})), std::vector<std::string>{"orders"});
  EXPECT_EQ(TestNames(SelectTests(Defs(), {{}, {"+customer_totals"}, {}})).size(), 2u);
  EXPECT_EQ(TestNames(SelectTests(Defs(), {{}, {"customer_totals"}, {}})),
            std::vector<std::string>{"totals leave refunds out"});
  EXPECT_TRUE(SelectTests(Defs(), {{}, {"orders_raw"}, {}}).empty());           // a source is no test target
  EXPECT_TRUE(SelectTests(Defs(), {{"tests/sales"}, {"orders"}, {}}).empty());  // both filters apply
  EXPECT_EQ(ErrorCode([] { SelectTests(Defs(), {{}, {"nope"}, {}}); }), "SLU-SELECT-001");
}

TEST(AuditSelection, AnAuditRunsWhenItReferencesASelectedModel) {
  EXPECT_EQ(AuditNames(SelectAudits(Defs(), {})),
            (std::vector<std::string>{"known_status", "positive_amounts", "settled_totals"}));
  EXPECT_EQ(AuditNames(SelectAudits(Defs(), {"customer_totals"})), std::vector<std::string>{"settled_totals"});
  EXPECT_EQ(AuditNames(SelectAudits(Defs(), {"orders"})),
            (std::vector<std::string>{"known_status", "positive_amounts"}));
  EXPECT_EQ(AuditNames(SelectAudits(Defs(), {"+customer_totals"})).size(), 3u);
  EXPECT_EQ(AuditNames(SelectAudits(Defs(), {"pipeline:sales"})).size(), 3u);
  EXPECT_EQ(ErrorCode([] { SelectAudits(Defs(), {"pipeline:nope"}); }), "SLU-SELECT-001");
}

// ---- The statement a test runs ----

TEST(TestStatement, ServersWithoutIsNotDistinctFromRunTheLegacyClickHouseVariant) {
  TestSpec clickhouse;
  clickhouse.sql = "WITH … isNotDistinctFrom …\n";
  clickhouse.legacy_clickhouse_sql = "SELECT … isNull(a) = isNull(b) …\n";
  Capabilities old_server;
  old_server.is_not_distinct_from = false;
  Capabilities new_server;
  new_server.is_not_distinct_from = true;
  EXPECT_EQ(&TestSqlFor(clickhouse, old_server), &clickhouse.legacy_clickhouse_sql);
  EXPECT_EQ(&TestSqlFor(clickhouse, new_server), &clickhouse.sql);
  TestSpec duckdb;  // no variant: always its own statement
  duckdb.sql = "WITH … IS NOT DISTINCT FROM …\n";
  EXPECT_EQ(&TestSqlFor(duckdb, old_server), &duckdb.sql);
}

TEST(ListElementsTest, ReadsDuckDbAndClickHouseRenderings) {
  using Elements = std::vector<std::optional<std::string>>;
  EXPECT_EQ(ListElements("[NULL, 'a, b', x, 'it\\'s', '', a b, 'a\\\\b']"),
            (Elements{std::nullopt, "a, b", "x", "it's", "", "a b", "a\\b"}));
  EXPECT_EQ(ListElements("['1','4',NULL,'tab\\there']"), (Elements{"1", "4", std::nullopt, "tab\there"}));
  EXPECT_EQ(ListElements("[]"), Elements{});
  EXPECT_EQ(ListElements("['NULL']"), Elements{"NULL"});
  EXPECT_EQ(ListElements("[\"json\", null]"), (Elements{"json", "null"}));
  EXPECT_EQ(ListElements("['('ada')']"), Elements{"('ada')"});  // ClickHouse, escapes removed by TabSeparated
  EXPECT_EQ(ListElements("['it's', 'b']"), (Elements{"it's", "b"}));
  EXPECT_FALSE(ListElements("{a}"));
  EXPECT_FALSE(ListElements("['open]"));
  EXPECT_FALSE(ListElements("['a', b'c]"));
}

// ---- Tests on DuckDB ----

TEST(RunTestsOnDuckDb, TheFixtureTestsPass) {
  ScratchWarehouse warehouse;  // nothing materialized: tests read their mocks only
  std::vector<std::string> seen;
  TestRequest request;
  request.on_result = [&](const TestResult& result) { seen.push_back(result.test->name); };
  std::vector<TestResult> results = RunTests(Defs(), *warehouse, request);
  ASSERT_EQ(results.size(), 2u);
  for (const TestResult& result : results) {
    EXPECT_EQ(result.status, TestStatus::kPass) << result.test->name;
    EXPECT_EQ(result.sql, result.test->sql);
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"orders", "totals leave refunds out"}));
}

TEST(RunTestsOnDuckDb, FailingRowsAreReadPerCaseAndSorted) {
  ScratchWarehouse warehouse;
  TestSpec test;
  test.name = "by hand";
  test.file = "tests/by_hand.sql";
  test.sql =
      "SELECT 1 AS _case_index, 'unexpected' AS _diff_type, ['ada', CAST(NULL AS VARCHAR)] AS _row_values, "
      "CAST(1 AS BIGINT) AS _multiplicity\n"
      "UNION ALL SELECT 1, 'missing', ['ada', 'x, y'], 2\n"
      "UNION ALL SELECT 2, 'unexpected', ['{''id'': 3}'], 1\n";
  TestResult result = RunTest(test, *warehouse);
  ASSERT_EQ(result.status, TestStatus::kFail);
  ASSERT_EQ(result.differences.size(), 3u);
  EXPECT_EQ(result.differences[0].case_index, 1);
  EXPECT_EQ(result.differences[0].diff_type, "missing");
  EXPECT_EQ(result.differences[0].values, (std::vector<std::optional<std::string>>{"ada", "x, y"}));
  EXPECT_EQ(result.differences[0].multiplicity, 2);
  EXPECT_EQ(result.differences[1].values, (std::vector<std::optional<std::string>>{"ada", std::nullopt}));
  EXPECT_EQ(result.differences[2].case_index, 2);
  EXPECT_EQ(result.differences[2].values, (std::vector<std::optional<std::string>>{"{'id': 3}"}));
}

TEST(RunTestsOnDuckDb, AFailingStatementIsAnErrorAtTheTestFile) {
  ScratchWarehouse warehouse;
  TestSpec test;
  test.name = "broken";
  test.file = "tests/broken.sql";
  test.sql = "SELECT no_such_column FROM (SELECT 1 AS id) AS t\n";
  TestResult result = RunTest(test, *warehouse);
  ASSERT_EQ(result.status, TestStatus::kError);
  ASSERT_FALSE(result.errors.empty());
  EXPECT_EQ(result.errors.front().location.file, "tests/broken.sql");
  EXPECT_NE(result.errors.front().message.find("no_such_column"), std::string::npos) << result.errors.front().message;
}

// ---- Audits on DuckDB ----

TEST(RunAuditsOnDuckDb, ModelsNotMaterializedDeferTheirAuditsUnlessForced) {
  ScratchWarehouse warehouse;
  std::vector<AuditResult> results = RunAudits(Defs(), *warehouse, {});
  ASSERT_EQ(results.size(), 3u);
  for (const AuditResult& result : results) {
    EXPECT_EQ(result.status, AuditStatus::kDeferred) << result.audit->name;
    EXPECT_NE(result.deferred_reason.find("is not materialized yet"), std::string::npos) << result.deferred_reason;
    EXPECT_FALSE(FailsTheCommand(result));
  }
  AuditRequest force;
  force.force = true;
  std::map<std::string, AuditResult> forced = ByName(RunAudits(Defs(), *warehouse, force));
  EXPECT_EQ(forced["positive_amounts"].status, AuditStatus::kError);
  EXPECT_EQ(forced["positive_amounts"].errors.front().location.file, "audits/sales/positive_amounts.sql");
  EXPECT_TRUE(FailsTheCommand(forced["positive_amounts"]));
  EXPECT_EQ(forced["known_status"].status, AuditStatus::kError);
  EXPECT_FALSE(FailsTheCommand(forced["known_status"]));  // a warning
}

TEST(RunAuditsOnDuckDb, PassAndFailWithSampleRowsOnceMaterialized) {
  ScratchWarehouse warehouse;
  const auto written = warehouse.Materialize("orders", kOrders);
  warehouse.Materialize("customer_totals", kTotals);
  FixedClock later(written + seconds(2 * 86400));
  AuditRequest request;
  request.clock = &later;
  std::map<std::string, AuditResult> results = ByName(RunAudits(Defs(), *warehouse, request));
  EXPECT_EQ(results["positive_amounts"].status, AuditStatus::kPass);
  EXPECT_EQ(results["settled_totals"].status, AuditStatus::kPass);
  const AuditResult& known = results["known_status"];
  ASSERT_EQ(known.status, AuditStatus::kFail);
  EXPECT_EQ(known.failing_rows, 1);
  EXPECT_EQ(known.sample.columns, (std::vector<std::string>{"id", "customer", "status"}));
  ASSERT_EQ(known.sample.rows.size(), 1u);
  EXPECT_EQ(known.sample.rows[0], (std::vector<std::optional<std::string>>{"4", "cyd", std::nullopt}));
  EXPECT_FALSE(FailsTheCommand(known));  // warning severity
}

TEST(RunAuditsOnDuckDb, AnErrorSeverityFailureFailsTheCommand) {
  ScratchWarehouse warehouse;
  warehouse.Materialize("orders", "SELECT 1 AS id, 'ada' AS customer, -5 AS amount, 'paid' AS status");
  AuditRequest request;
  request.select = {"orders"};
  std::map<std::string, AuditResult> results = ByName(RunAudits(Defs(), *warehouse, request));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results["positive_amounts"].status, AuditStatus::kFail);
  EXPECT_TRUE(FailsTheCommand(results["positive_amounts"]));
}

TEST(RunAuditsOnDuckDb, AnAuditIsWarmingUntilItsWarmupHasPassedSinceTheLatestWrite) {
  ScratchWarehouse warehouse;
  warehouse.Materialize("orders", kOrders);
  const auto written = warehouse.Materialize("customer_totals", kTotals);
  AuditRequest request;
  request.select = {"customer_totals"};
  FixedClock almost(written + seconds(86400) - std::chrono::milliseconds(1));
  request.clock = &almost;
  std::vector<AuditResult> warming = RunAudits(Defs(), *warehouse, request);
  ASSERT_EQ(warming.size(), 1u);
  EXPECT_EQ(warming[0].status, AuditStatus::kDeferred);
  EXPECT_NE(warming[0].deferred_reason.find("warming up"), std::string::npos) << warming[0].deferred_reason;
  EXPECT_NE(warming[0].deferred_reason.find("warmup of 1d ends at " + FormatUtc(written + seconds(86400))),
            std::string::npos)
      << warming[0].deferred_reason;
  FixedClock exactly(written + seconds(86400));
  request.clock = &exactly;
  EXPECT_EQ(RunAudits(Defs(), *warehouse, request)[0].status, AuditStatus::kPass);
  request.clock = &almost;
  request.force = true;
  EXPECT_EQ(RunAudits(Defs(), *warehouse, request)[0].status, AuditStatus::kPass);
}

TEST(RunAuditsOnDuckDb, ADroppedRelationDefersDespiteItsLedgerRow) {
  ScratchWarehouse warehouse;
  warehouse.Materialize("orders", kOrders);
  warehouse->DropRelation(Relation{"analytics", "orders"});
  AuditRequest request;
  request.select = {"orders"};
  for (const AuditResult& result : RunAudits(Defs(), *warehouse, request)) {
    EXPECT_EQ(result.status, AuditStatus::kDeferred);
    EXPECT_NE(result.deferred_reason.find("the warehouse has no analytics.orders"), std::string::npos)
        << result.deferred_reason;
  }
}

}  // namespace
}  // namespace sluice
