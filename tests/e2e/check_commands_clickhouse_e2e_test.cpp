// End-to-end tests of `sluice test` and `sluice audit` on ClickHouse (the CTest fixture's server, 18.16 from Debian)
// with the `quality_clickhouse` fixture: tests that pass and fail through the variant for servers without
// isNotDistinctFrom, and audits that pass, fail and are deferred. Each test works in a database of its own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_project.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

const char* kFailingTest = R"(TEST (name "wrong totals");

WITH __ref__orders AS (
  SELECT 1 AS id, 'ada' AS customer, 30 AS amount, toNullable('paid') AS status
  UNION ALL SELECT 2, 'ada', 30, toNullable('paid')
),
__expected__customer_totals AS (
  SELECT 'ada' AS customer, 60 AS total, 3 AS orders
),
__assert__nobody_named_ada AS (
  SELECT customer FROM __ref("customer_totals") WHERE customer = 'ada'
)
SELECT 1
)";

TEST(CheckCommandsClickHouseE2E, TestsPassAndFailOnAServerWithoutIsNotDistinctFrom) {
  ClickHouseProject project("quality_clickhouse", "quality");
  const Capabilities capabilities = project.Open()->capabilities();
  ProcessResult passing = project.Run({"test"});
  EXPECT_EQ(passing.exit_code, 0) << passing.out << passing.err;
  EXPECT_NE(passing.out.find("PASS  orders  (tests/staging/orders.sql)"), std::string::npos) << passing.out;
  EXPECT_NE(passing.out.find("PASS  totals leave refunds out"), std::string::npos) << passing.out;
  // What ran is the variant the server can run; the compiled artifact keeps isNotDistinctFrom.
  const std::string ran = project.files().Read("target/run/tests/orders/orders.sql");
  EXPECT_EQ(ran.find("isNotDistinctFrom") == std::string::npos, !capabilities.is_not_distinct_from) << ran;
  if (capabilities.server_version.starts_with("18.")) {
    EXPECT_FALSE(capabilities.is_not_distinct_from);
    EXPECT_NE(ran.find("isNull(l.`id`) = isNull(r.`id`) AND assumeNotNull(l.`id`) = assumeNotNull(r.`id`)"),
              std::string::npos)
        << ran;
  }
  ASSERT_EQ(project.Run({"compile"}).exit_code, 0);
  EXPECT_NE(project.files().Read("target/compiled/tests/orders/orders.sql").find("isNotDistinctFrom"),
            std::string::npos);

  project.files().Write("tests/sales/wrong.sql", kFailingTest);
  ProcessResult failing = project.Run({"test", "tests/sales"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  EXPECT_NE(failing.out.find("    diff        customer  total  orders  count\n"
                             "    missing     ada       60     3       1\n"
                             "    unexpected  ada       60     2       1\n"),
            std::string::npos)
      << failing.out;
  EXPECT_NE(failing.out.find("    unexpected  ('ada')  1\n"), std::string::npos) << failing.out;
  EXPECT_NE(failing.out.find("tests: 1 passed, 1 failed, 0 with errors, of 2 tests"), std::string::npos);
}

TEST(CheckCommandsClickHouseE2E, AuditsAreDeferredUntilMaterializedThenPassFailOrWarm) {
  ClickHouseProject project("quality_clickhouse", "quality");
  ProcessResult before = project.Run({"audit", "--json"});
  EXPECT_EQ(before.exit_code, 0) << before.out << before.err;
  EXPECT_EQ(json::parse(before.out)["counts"]["deferred"], 3);

  ProcessResult run = project.Run({"run"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  ProcessResult after = project.Run({"audit", "--json"});
  EXPECT_EQ(after.exit_code, 0) << after.out << after.err;  // the failing audit is a warning
  const json doc = json::parse(after.out);
  std::map<std::string, json> audits;
  for (const json& audit : doc["audits"]) audits[audit["name"]] = audit;
  EXPECT_EQ(audits["positive_amounts"]["status"], "pass");
  EXPECT_EQ(audits["known_status"]["status"], "fail");
  EXPECT_EQ(audits["known_status"]["failing_rows"], 1);
  EXPECT_EQ(audits["known_status"]["sample"]["rows"], (json{{"4", "cyd", nullptr}}));
  EXPECT_EQ(audits["settled_totals"]["status"], "deferred");
  EXPECT_NE(audits["settled_totals"]["reason"].get<std::string>().find("warming up"), std::string::npos);

  project.files().Write(
      "audits/sales/minimum_order.sql",
      "AUDIT (severity error);\nSELECT id, customer, amount FROM __ref(\"orders\") WHERE amount < 6\n");
  ProcessResult failing = project.Run({"audit", "--select", "orders"});
  EXPECT_EQ(failing.exit_code, 1) << failing.out << failing.err;
  EXPECT_NE(failing.out.find("FAIL      minimum_order (error)  1 failing row  audits/sales/minimum_order.sql"),
            std::string::npos)
      << failing.out;
  EXPECT_NE(failing.out.find("    id  customer  amount\n    3   bob       5\n"), std::string::npos) << failing.out;
}

}  // namespace
}  // namespace sluice::testing
