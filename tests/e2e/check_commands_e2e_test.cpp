// End-to-end tests of `sluice test` and `sluice audit` on the `quality` fixture: docs/testing.md's worked example
// run as written, failing and erroring tests, path and selection filters, the statements under target/run/tests,
// audits that fail, warn, are deferred (never materialized, dropped, warming) or forced, and the JSON documents.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "core/file_system.hpp"
#include "e2e/sluice_process.hpp"
#include "e2e/warehouse_queries.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

// Output with what differs from run to run replaced: durations, timestamps and run ids.
std::string Normalized(const std::string& text) {
  static const std::regex kDuration(R"(\b\d+\.\d\ds\b)");
  static const std::regex kTime(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z)");
  static const std::regex kRunId(R"(\d{8}T\d{6}Z_[0-9a-f]{8})");
  std::string out = std::regex_replace(text, kDuration, "<seconds>");
  out = std::regex_replace(out, kTime, "<time>");
  return std::regex_replace(out, kRunId, "<run>");
}

const char* kFailingTest = R"(TEST (name "wrong totals");

WITH __ref__orders AS (
  SELECT 1 AS id, 'ada' AS customer, 30 AS amount, 'paid' AS status
  UNION ALL SELECT 2, 'ada', 30, 'paid'
),
__expected__customer_totals AS (
  SELECT 'ada' AS customer, 60 AS total, 3 AS orders
),
__assert__nobody_named_ada AS (
  SELECT customer FROM __ref("customer_totals") WHERE customer = 'ada'
)
SELECT 1
)";

const char* kBrokenTest = R"(TEST ();

WITH __ref__orders AS (
  SELECT no_such_function(1) AS id, 'x' AS customer, 1 AS amount, 'paid' AS status
),
__expected__customer_totals AS (
  SELECT 'x' AS customer, 1 AS total, 1 AS orders
)
SELECT 1
)";

// docs/testing.md's worked example: `sql <path>` blocks are written into the project and each `$ sluice …` line
// of a `console` block is run, its output and `(exit N)` compared with the lines under it.
TEST(CheckCommandsE2E, TheWorkedExampleOfTheDocsRunsAsWritten) {
  ScratchProject project("quality");
  const std::string page = ReadFile(std::filesystem::path(SLUICE_SOURCE_DIR) / "docs" / "testing.md");
  const std::string example = page.substr(page.find("## Worked example"));
  std::istringstream lines(example);
  std::string line, block, block_text;
  bool in_block = false;
  size_t commands = 0;
  std::vector<std::string> args;
  std::string expected;
  auto check_command = [&] {
    if (args.empty()) return;
    ProcessResult result = project.Run(args);
    // The page runs the commands in the project folder; here it is given by --project-dir.
    const std::string root = project.root().string() + "/";
    for (size_t at; (at = result.out.find(root)) != std::string::npos;) result.out.erase(at, root.size());
    std::string shown = "$ sluice";
    for (const std::string& arg : args) shown += " " + arg;
    EXPECT_EQ(Normalized(result.out + "(exit " + std::to_string(result.exit_code) + ")\n"), Normalized(expected))
        << shown << "\n"
        << result.err;
    ++commands;
    args.clear();
    expected.clear();
  };
  while (std::getline(lines, line)) {
    if (!in_block && line.starts_with("```")) {
      in_block = true;
      block = line.substr(3);
      block_text.clear();
      continue;
    }
    if (in_block && line == "```") {
      in_block = false;
      if (block == "console") check_command();
      if (block.starts_with("sql ")) project.Write(block.substr(4), block_text);
      continue;
    }
    if (!in_block) continue;
    block_text += line + "\n";
    if (block != "console") continue;
    if (line.starts_with("$ sluice ")) {
      check_command();
      std::istringstream words(line.substr(9));
      for (std::string word; words >> word;) args.push_back(word);
    } else {
      expected += line + "\n";
    }
  }
  EXPECT_EQ(commands, 7u);
}

TEST(CheckCommandsE2E, PassingTestsExitZeroAndLeaveTheirStatementsUnderTargetRun) {
  ScratchProject project("quality");
  MustRun(project, {"compile"});
  ProcessResult result = MustRun(project, {"test"});
  EXPECT_NE(result.out.find("PASS  orders  (tests/staging/orders.sql)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tests: 2 passed, 0 failed, 0 with errors, of 2 tests"), std::string::npos);
  EXPECT_EQ(project.Read("target/run/tests/orders/orders.sql"),
            project.Read("target/compiled/tests/orders/orders.sql"));
  EXPECT_EQ(project.Read("target/run/tests/customer_totals/totals leave refunds out.sql"),
            project.Read("target/compiled/tests/customer_totals/totals leave refunds out.sql"));

  // The folder is replaced: a later run of one test leaves only its statement.
  MustRun(project, {"test", "tests/staging"});
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/tests/orders/orders.sql"));
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target/run/tests/customer_totals"));
}

TEST(CheckCommandsE2E, AFailingTestExitsOneAndPrintsTheDifferingRowsPerCase) {
  ScratchProject project("quality");
  project.Write("tests/sales/wrong.sql", kFailingTest);
  ProcessResult result = project.Run({"test"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("FAIL  wrong totals  (tests/sales/wrong.sql)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("  case 1 __expected__customer_totals"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("    diff        customer  total  orders  count\n"
                            "    missing     ada       60     3       1\n"
                            "    unexpected  ada       60     2       1\n"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("  case 2 __assert__nobody_named_ada"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("    unexpected  {'customer': ada}  1\n"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tests: 2 passed, 1 failed, 0 with errors, of 3 tests"), std::string::npos);
}

TEST(CheckCommandsE2E, ATestWhoseSqlFailsIsAFailureNamingItsFileAndTheOthersStillRun) {
  ScratchProject project("quality");
  project.Write("tests/broken.sql", kBrokenTest);
  ProcessResult result = project.Run({"test"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("ERROR broken  (tests/broken.sql)"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tests/broken.sql:1:1: error[SLU-WAREHOUSE-021]:"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("no_such_function"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("tests: 2 passed, 0 failed, 1 with errors, of 3 tests"), std::string::npos);
}

// A daily model that reads its window's bounds, and a test of it for each way of choosing the test's day.
void AddDailyOrders(const ScratchProject& project) {
  project.Write("pipelines/sales/orders_dated.sql", R"(MODEL ();
SELECT CAST(id AS BIGINT) AS id, CAST(DATE '2026-03-01' AS DATE) AS order_date
FROM __ref("orders")
)");
  project.Write("pipelines/sales/daily_orders.sql", R"(MODEL (partitions (daily (column "order_date", start_date "2026-03-01")));
SELECT CAST(order_date AS DATE) AS order_date, CAST(count(*) AS BIGINT) AS orders
FROM __ref("orders_dated")
WHERE order_date >= @partition_start() AND order_date < @partition_end()
GROUP BY order_date
)");
  project.Write("tests/sales/daily_orders.sql", R"(TEST (name "daily orders on a chosen day", partition "2026-03-02");
WITH __ref__orders_dated AS (
  SELECT 1 AS id, DATE '2026-03-01' AS order_date
  UNION ALL SELECT 2, @partition_start()
  UNION ALL SELECT 3, DATE '2026-03-02'
  UNION ALL SELECT 4, @partition_end()
),
__expected__daily_orders AS (SELECT DATE '2026-03-02' AS order_date, 2 AS orders)
SELECT 1

TEST (name "daily orders on the first day");
WITH __ref__orders_dated AS (
  SELECT 1 AS id, DATE '2026-03-01' AS order_date
  UNION ALL SELECT 2, DATE '2026-03-02'
),
__expected__daily_orders AS (SELECT DATE '2026-03-01' AS order_date, 1 AS orders)
SELECT 1
)");
}

TEST(CheckCommandsE2E, TestsOfAModelUsingPartitionBoundsRunItForOneDay) {
  ScratchProject project("quality");
  AddDailyOrders(project);
  ProcessResult result = project.Run({"test", "tests/sales/daily_orders.sql"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_NE(result.out.find("PASS  daily orders on a chosen day  (tests/sales/daily_orders.sql, partition 2026-03-02)"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("PASS  daily orders on the first day  (tests/sales/daily_orders.sql, partition 2026-03-01)"),
            std::string::npos)
      << result.out;
  const std::string ran = project.Read("target/run/tests/daily_orders/daily orders on a chosen day.sql");
  EXPECT_NE(ran.find("order_date >= DATE '2026-03-02' AND order_date < DATE '2026-03-03'"), std::string::npos) << ran;
  const json doc = json::parse(project.Run({"test", "tests/sales/daily_orders.sql", "--json"}).out);
  EXPECT_EQ(doc["tests"][0]["partition"], "2026-03-02");
  // A day before the model's first is refused at the test file, before anything runs.
  std::string tests = project.Read("tests/sales/daily_orders.sql");
  tests.replace(tests.find("2026-03-02\");"), 10, "2026-02-27");
  project.Write("tests/sales/daily_orders.sql", tests);
  ProcessResult early = project.Run({"test"});
  EXPECT_EQ(early.exit_code, 1) << early.out << early.err;
  EXPECT_NE(early.err.find("tests/sales/daily_orders.sql:1:54: error[SLU-TEST-022]: TEST partition 2026-02-27 is "
                           "before model 'daily_orders' starts (start_date 2026-03-01)"),
            std::string::npos)
      << early.err;
}

TEST(CheckCommandsE2E, PathsAndSelectionChooseTheTests) {
  ScratchProject project("quality");
  project.Write("tests/sales/wrong.sql", kFailingTest);
  auto names = [&](const std::vector<std::string>& args) {
    std::vector<std::string> run = {"test", "--json"};
    run.insert(run.end(), args.begin(), args.end());
    ProcessResult result = project.Run(run);
    const json doc = json::parse(result.out);
    std::vector<std::string> out;
    for (const json& test : doc["tests"]) out.push_back(test["name"]);
    return out;
  };
  EXPECT_EQ(names({"tests/staging"}), std::vector<std::string>{"orders"});
  EXPECT_EQ(names({"tests/sales/wrong.sql"}), std::vector<std::string>{"wrong totals"});
  EXPECT_EQ(names({(project.root() / "tests" / "staging" / "orders.sql").string()}),
            std::vector<std::string>{"orders"});  // absolute, inside the project
  EXPECT_EQ(names({"--select", "orders"}), std::vector<std::string>{"orders"});
  EXPECT_EQ(names({"--select", "customer_totals"}),
            (std::vector<std::string>{"totals leave refunds out", "wrong totals"}));
  EXPECT_EQ(names({"tests/sales", "--select", "+customer_totals"}).size(), 2u);
  EXPECT_EQ(names({"--select", "orders customer_totals", "tests/staging"}), std::vector<std::string>{"orders"});
  EXPECT_EQ(project.Run({"test", "tests/staging"}).exit_code, 0);  // the failing test is not chosen

  ProcessResult unknown_path = project.Run({"test", "tests/nowhere"});
  EXPECT_EQ(unknown_path.exit_code, 2);
  EXPECT_NE(unknown_path.err.find("error[SLU-SELECT-003]: test path tests/nowhere: no test file is there"),
            std::string::npos)
      << unknown_path.err;
  ProcessResult unknown_model = project.Run({"test", "--select", "nope"});
  EXPECT_EQ(unknown_model.exit_code, 2);
  EXPECT_NE(unknown_model.err.find("SLU-SELECT-001"), std::string::npos) << unknown_model.err;
}

TEST(CheckCommandsE2E, TestJsonListsEveryTestWithItsFailures) {
  ScratchProject project("quality");
  project.Write("tests/sales/wrong.sql", kFailingTest);
  project.Write("tests/broken.sql", kBrokenTest);
  ProcessResult result = project.Run({"test", "--json"});
  EXPECT_EQ(result.exit_code, 1);
  json doc = json::parse(result.out);
  EXPECT_EQ(doc["status"], "fail");
  EXPECT_EQ(doc["counts"], (json{{"pass", 2}, {"fail", 1}, {"error", 1}}));
  ASSERT_EQ(doc["tests"].size(), 4u);
  const json& broken = doc["tests"][0];
  EXPECT_EQ(broken["name"], "broken");
  EXPECT_EQ(broken["status"], "error");
  EXPECT_EQ(broken["errors"][0]["file"], "tests/broken.sql");
  EXPECT_EQ(broken["errors"][0]["code"], "SLU-WAREHOUSE-021");
  const json& wrong = doc["tests"][3];
  EXPECT_EQ(wrong["name"], "wrong totals");
  EXPECT_EQ(wrong["status"], "fail");
  EXPECT_EQ(wrong["targets"], json::array({"customer_totals"}));
  EXPECT_EQ(wrong["run_path"], "target/run/tests/customer_totals/wrong totals.sql");
  ASSERT_EQ(wrong["failures"].size(), 3u);
  EXPECT_EQ(wrong["failures"][0], (json{{"case_index", 1},
                                        {"case", "__expected__customer_totals"},
                                        {"diff_type", "missing"},
                                        {"columns", {"customer", "total", "orders"}},
                                        {"values", {"ada", "60", "3"}},
                                        {"multiplicity", 1}}));
  EXPECT_EQ(wrong["failures"][2]["columns"], json::array({"row"}));
  EXPECT_EQ(doc["tests"][1]["status"], "pass");
  EXPECT_EQ(doc["tests"][1]["failures"], json::array());
}

TEST(CheckCommandsE2E, AuditsOfModelsNeverMaterializedAreDeferredAndForceRunsThem) {
  ScratchProject project("quality");
  ProcessResult deferred = MustRun(project, {"audit", "--select", "orders"});
  EXPECT_NE(deferred.out.find("DEFERRED  positive_amounts (error)  model 'orders' is not materialized yet"),
            std::string::npos)
      << deferred.out;
  // Forced, they run against a relation that is not there: an error, which fails an error-severity audit.
  ProcessResult forced = project.Run({"audit", "--select", "orders", "--force"});
  EXPECT_EQ(forced.exit_code, 1) << forced.out;
  EXPECT_NE(forced.out.find("ERROR     positive_amounts (error)  audits/sales/positive_amounts.sql"), std::string::npos)
      << forced.out;
  EXPECT_NE(forced.out.find("audits/sales/positive_amounts.sql:1:1: error[SLU-WAREHOUSE-"), std::string::npos)
      << forced.out;
}

TEST(CheckCommandsE2E, AnAuditOfADroppedRelationIsDeferredDespiteItsLedgerRow) {
  ScratchProject project("quality");
  MustRun(project, {"run"});
  {
    auto warehouse = DuckDbWarehouse::Open(project.root() / "warehouse.duckdb", false, {});
    warehouse->DropRelation(Relation{"analytics", "orders"});
  }
  ProcessResult result = MustRun(project, {"audit", "--select", "orders"});
  EXPECT_NE(result.out.find("DEFERRED  positive_amounts (error)  model 'orders' is recorded as materialized but "
                            "the warehouse has no analytics.orders (dropped?)"),
            std::string::npos)
      << result.out;
}

TEST(CheckCommandsE2E, AuditJsonReportsEveryStatus) {
  ScratchProject project("quality");
  MustRun(project, {"run"});
  project.Write("audits/broken.sql", "AUDIT (severity warning);\nSELECT no_such_column FROM __ref(\"orders\")\n");
  ProcessResult result = project.Run({"audit", "--json"});
  EXPECT_EQ(result.exit_code, 0) << result.out;  // the error is a warning's; error-severity audits pass or wait
  json doc = json::parse(result.out);
  EXPECT_EQ(doc["status"], "pass");
  EXPECT_EQ(doc["counts"], (json{{"pass", 1}, {"fail", 1}, {"deferred", 1}, {"error", 1}}));
  std::map<std::string, json> audits;
  for (const json& audit : doc["audits"]) audits[audit["name"]] = audit;
  EXPECT_EQ(audits["broken"]["status"], "error");
  EXPECT_EQ(audits["broken"]["errors"][0]["file"], "audits/broken.sql");
  const json& known = audits["known_status"];
  EXPECT_EQ(known["status"], "fail");
  EXPECT_EQ(known["severity"], "warning");
  EXPECT_EQ(known["failing_rows"], 1);
  EXPECT_EQ(known["sample"], (json{{"columns", {"id", "customer", "status"}}, {"rows", {{"4", "cyd", nullptr}}}}));
  EXPECT_EQ(known["reason"], nullptr);
  const json& settled = audits["settled_totals"];
  EXPECT_EQ(settled["status"], "deferred");
  EXPECT_EQ(settled["warmup_seconds"], 86400);
  EXPECT_NE(settled["reason"].get<std::string>().find("warming up"), std::string::npos);
  EXPECT_EQ(settled["sample"], nullptr);
  EXPECT_EQ(audits["positive_amounts"]["status"], "pass");
  EXPECT_EQ(audits["positive_amounts"]["referenced_models"], json::array({"orders"}));
}

}  // namespace
}  // namespace sluice::testing
