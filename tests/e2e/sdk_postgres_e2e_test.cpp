// examples/sdk_orders on the PostgreSQL test server, configured only through SEGMENTSTREAM_WAREHOUSE_* and the
// credential variables, its run history in PostgreSQL as well (SLUICE_STATE_URL): the seed's two examples written and
// read back, daily partitions made, the runs recorded, the password never printed.
#include <gtest/gtest.h>

#include "e2e/sluice_process.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

using testing::ProcessResult;
using testing::ScratchProject;

TEST(SdkProgramOnPostgres, RunsBothSeedExamplesFromTheEnvironmentAlone) {
  testing::PostgresTestServer server = testing::RequirePostgresTestServer();
  std::string database = testing::CreatePostgresTestDatabase(server, "sdk");
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(testing::PostgresTestConfig(server, database));
  // The run history in PostgreSQL too (SLUICE_STATE_URL), in a database of its own.
  const std::string state_database = testing::CreatePostgresTestDatabase(server, "sdk_state");
  std::map<std::string, std::string> env{
      {"SLUICE_STATE_URL", testing::PostgresTestUrl(server, state_database)},
      {"SEGMENTSTREAM_WAREHOUSE_ENGINE", "postgres"},
      {"SEGMENTSTREAM_WAREHOUSE_CATALOG",
       "postgresql://" + server.host + ":" + std::to_string(server.port) + "/" + database},
      {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "analytics"},
      {"PGUSER", server.user},
      {"SEGMENTSTREAM_WAREHOUSE_PASSWORD", server.password}};
  ScratchProject folder("examples/sdk_orders");
  ProcessResult first = folder.RunProgram(SDK_ORDERS_BINARY, {"run", "--select", "orders+"}, env);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  ProcessResult daily = folder.RunProgram(
      SDK_ORDERS_BINARY, {"run", "--select", "daily_orders", "--from", "2026-01-01", "--to", "2026-01-12"}, env);
  ASSERT_EQ(daily.exit_code, 0) << daily.out << daily.err;
  ProcessResult again =
      folder.RunProgram(SDK_ORDERS_BINARY, {"run", "--select", "daily_orders", "--partition", "2026-01-05"}, env);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  auto scalar = [&](const std::string& sql) { return warehouse->Query(sql).rows.at(0).at(0).value_or("NULL"); };
  EXPECT_EQ(scalar("SELECT order_id || ':' || CAST(amount AS TEXT) FROM bronze.orders"), "o-1:100");
  EXPECT_EQ(scalar("SELECT count(*) FROM silver.orders"), "1");
  EXPECT_EQ(scalar("SELECT count(*) || ' ' || min(event_date) || ' ' || max(event_date) FROM silver.daily_orders"),
            "12 2026-01-01 2026-01-12");
  EXPECT_EQ(scalar("SELECT pg_get_partkeydef('silver.daily_orders'::regclass)"), "RANGE (event_date)");
  EXPECT_EQ(scalar("SELECT count(*) FROM pg_inherits WHERE inhparent = 'silver.daily_orders'::regclass"), "12");
  EXPECT_EQ(scalar("SELECT count(*) FROM _sluice.ledger WHERE asset = 'silver.daily_orders'"), "3");
  for (const ProcessResult* result : {&first, &daily, &again}) {
    EXPECT_EQ(result->out.find(server.password), std::string::npos);
    EXPECT_EQ(result->err.find(server.password), std::string::npos);
  }
  EXPECT_EQ(folder.Read("target/run/silver/daily_orders.sql").find(server.password), std::string::npos);
  std::unique_ptr<Warehouse> state = OpenWarehouse(testing::PostgresTestConfig(server, state_database));
  // Three commands, one of them a backfill of several runs: every run recorded, every one a success.
  EXPECT_EQ(state->Query("SELECT count(*) >= 3 AND bool_and(status = 'SUCCESS') FROM public.runs").rows.at(0).at(0),
            "t");
}

}  // namespace
}  // namespace sluice
