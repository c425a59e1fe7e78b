// examples/sdk_orders on the ClickHouse test server (18.16), configured only through SEGMENTSTREAM_WAREHOUSE_* and the
// credential variables: the seed's two examples written and read back, the password never printed.
#include <gtest/gtest.h>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

using testing::ProcessResult;
using testing::ScratchProject;

TEST(SdkProgramOnClickHouse, RunsBothSeedExamplesFromTheEnvironmentAlone) {
  testing::ClickHouseTestServer server = testing::RequireClickHouseTestServer();
  std::string name_space = testing::UniqueClickHouseDatabase("sdk");
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(testing::ClickHouseTestConfig(server, "default"));
  // The example's keys name bronze and silver: this test owns those relations on the shared server.
  for (const char* table : {"bronze.orders", "silver.orders", "silver.daily_orders"}) {
    warehouse->Execute(std::string("DROP TABLE IF EXISTS ") + table);
  }
  std::map<std::string, std::string> env{
      {"SEGMENTSTREAM_WAREHOUSE_ENGINE", "clickhouse"},
      {"SEGMENTSTREAM_WAREHOUSE_CATALOG", server.host + ":" + std::to_string(server.port)},
      {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", name_space},
      {"SEGMENTSTREAM_WAREHOUSE_USERNAME", server.username},
      {"SEGMENTSTREAM_WAREHOUSE_PASSWORD", server.password}};
  ScratchProject folder("examples/sdk_orders");
  ProcessResult first = folder.RunProgram(SDK_ORDERS_BINARY, {"run", "--select", "orders+"}, env);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  ProcessResult daily = folder.RunProgram(
      SDK_ORDERS_BINARY, {"run", "--select", "daily_orders", "--from", "2026-01-01", "--to", "2026-01-12"}, env);
  ASSERT_EQ(daily.exit_code, 0) << daily.out << daily.err;
  ProcessResult again = folder.RunProgram(
      SDK_ORDERS_BINARY, {"run", "--select", "daily_orders", "--partition", "2026-01-05"}, env);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto scalar = [&](const std::string& sql) { return warehouse->Query(sql).rows.at(0).at(0).value_or("NULL"); };
  EXPECT_EQ(scalar("SELECT concat(order_id, ':', toString(amount)) FROM bronze.orders"), "o-1:100");
  EXPECT_EQ(scalar("SELECT count() FROM silver.orders"), "1");
  EXPECT_EQ(scalar("SELECT concat(toString(count()), ' ', toString(min(event_date)), ' ', toString(max(event_date))) "
                   "FROM silver.daily_orders"),
            "12 2026-01-01 2026-01-12");
  EXPECT_EQ(scalar("SELECT partition_key FROM system.tables WHERE database = 'silver' AND name = 'daily_orders'"),
            "event_date");
  for (const ProcessResult* result : {&first, &daily, &again}) {
    EXPECT_EQ(result->out.find(server.password), std::string::npos);
    EXPECT_EQ(result->err.find(server.password), std::string::npos);
  }
  EXPECT_EQ(folder.Read("target/run/silver/daily_orders.sql").find(server.password), std::string::npos);
  for (const char* table : {"bronze.orders", "silver.orders", "silver.daily_orders"}) {
    warehouse->Execute(std::string("DROP TABLE IF EXISTS ") + table);
  }
}

}  // namespace
}  // namespace sluice
