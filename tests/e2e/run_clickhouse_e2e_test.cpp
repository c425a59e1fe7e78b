// End-to-end tests of `sluice run` and `sluice test` on ClickHouse (the CTest fixture's server, 18.16 from Debian)
// with the `quality_clickhouse` fixture: errors of a model's SQL located in the model file, a model using what the
// server lacks refused before anything is written, and SQL tests of a model that reads its partition's bounds.
// Each test works in a database of its own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_project.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(RunClickHouseE2E, AnUnknownFunctionIsLocatedAtItsUseInTheModel) {
  ClickHouseProject project("quality_clickhouse", "run");
  project.files().Write("pipelines/sales/orders.sql", R"(MODEL (
  description "orders, typed",
  order_by ["id"],
);

-- no_such_function(customer) in a comment is not the use
SELECT
  CAST(id AS Int64) AS id,
  CAST(no_such_function(customer) AS String) AS customer,
  CAST(amount AS Int64) AS amount,
  CAST(status AS Nullable(String)) AS status
FROM __source("orders_raw")
)");
  ProcessResult result = project.Run({"run", "--select", "+orders"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_TRUE(Has(result.out, "pipelines/sales/orders.sql:9:8: error[SLU-WAREHOUSE-021]")) << result.out;
  EXPECT_TRUE(Has(result.out, " 9 |   CAST(no_such_function(customer) AS String) AS customer")) << result.out;
}

TEST(RunClickHouseE2E, AWindowFunctionOnAServerWithoutThemIsRefusedBeforeAnythingIsWritten) {
  ClickHouseProject project("quality_clickhouse", "run");
  if (project.Open()->capabilities().window_functions) GTEST_SKIP() << "the server has window functions";
  project.files().Write("pipelines/sales/ranked.sql", R"(MODEL (order_by ["id"]);
SELECT
  CAST(id AS Int64) AS id,
  CAST(row_number() OVER (PARTITION BY customer ORDER BY id) AS UInt64) AS rank
FROM __ref("orders")
)");
  ProcessResult result = project.Run({"run"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_TRUE(Has(result.err, "pipelines/sales/ranked.sql:4:21: error[SLU-CLICKHOUSE-001]: this model uses window "
                              "functions (OVER), which the ClickHouse server"))
      << result.err;
  EXPECT_TRUE(Has(result.err, " 4 |   CAST(row_number() OVER (PARTITION BY customer ORDER BY id) AS UInt64) AS rank"))
      << result.err;
  // Nothing of the run was written: not even the seed and the models before the refused one.
  for (const TableInfo& table : project.Open()->ListRelations()) {
    EXPECT_NE(table.relation.name_space, project.database()) << table.relation.ToString();
  }
  const json runs = json::parse(project.Run({"runs", "--json"}).out)["runs"];
  ASSERT_EQ(runs.size(), 1u) << runs.dump(2);
  EXPECT_EQ(runs[0]["status"], "FAILURE");
}

TEST(RunClickHouseE2E, ASeedValueThatDoesNotConvertPointsAtItsLineAndColumnInTheSeedFile) {
  ClickHouseProject project("quality_clickhouse", "run");
  project.files().Write("sources/seeds.yml", R"(sources:
  - kind: seed
    name: orders_raw
    path: seeds/orders.csv
    columns:
      amount: BIGINT
)");
  std::string orders = project.files().Read("seeds/orders.csv");
  const size_t third = orders.find('\n', orders.find('\n', orders.find('\n') + 1) + 1) + 1;  // line 4
  const size_t amount = orders.find(',', orders.find(',', third) + 1) + 1;
  orders.insert(amount, "about ");
  project.files().Write("seeds/orders.csv", orders);
  ProcessResult result = project.Run({"run", "--select", "orders_raw"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_TRUE(Has(result.out, "seeds/orders.csv:4:" + std::to_string(amount - third + 1) +
                                  ": error[SLU-WAREHOUSE-025]: loading the seed "))
      << result.out;
  EXPECT_TRUE(Has(result.out, "of column amount does not convert to BIGINT")) << result.out;
}

TEST(RunClickHouseE2E, TestsRenderPartitionBoundsAsToDate) {
  ClickHouseProject project("quality_clickhouse", "run");
  project.files().Write("pipelines/sales/daily_orders.sql",
                        R"(MODEL (partitions (daily (column "order_date", start_date "2026-03-01")), order_by ["order_date"]);
SELECT CAST(order_date AS Date) AS order_date, CAST(count() AS UInt64) AS orders
FROM __ref("orders")
WHERE order_date >= @partition_start() AND order_date < @partition_end()
GROUP BY order_date
)");
  project.files().Write("tests/sales/daily_orders.sql", R"(TEST (partition "2026-03-02");
WITH __ref__orders AS (
  SELECT toDate('2026-03-01') AS order_date
  UNION ALL SELECT @partition_start()
  UNION ALL SELECT toDate('2026-03-02')
  UNION ALL SELECT @partition_end()
),
__expected__daily_orders AS (SELECT toDate('2026-03-02') AS order_date, 2 AS orders)
SELECT 1
)");
  ProcessResult result = project.Run({"test", "tests/sales/daily_orders.sql"});
  EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_TRUE(Has(result.out, "PASS  daily_orders  (tests/sales/daily_orders.sql, partition 2026-03-02)"))
      << result.out;
  const std::string ran = project.files().Read("target/run/tests/daily_orders/daily_orders.sql");
  EXPECT_TRUE(Has(ran, "order_date >= toDate('2026-03-02') AND order_date < toDate('2026-03-03')")) << ran;
}

}  // namespace
}  // namespace sluice::testing
