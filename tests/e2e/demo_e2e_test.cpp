// The README's example: examples/orders_demo compiles and runs end to end on embedded DuckDB, and the
// numbers in docs/getting-started.md are what it produces.
#include <gtest/gtest.h>

#include "e2e/sluice_process.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice::testing {
namespace {

TEST(DemoE2E, OrdersDemoRunsEndToEnd) {
  ScratchProject project("examples/orders_demo");
  ASSERT_EQ(project.Run({"compile"}).exit_code, 0);
  ProcessResult run = project.Run({"run", "--from", "2026-11-01", "--to", "2026-11-07"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("[7/7]"), std::string::npos) << run.out;
  ProcessResult one_day = project.Run({"run", "--select", "daily_revenue", "--partition", "2026-11-03"});
  ASSERT_EQ(one_day.exit_code, 0) << one_day.out << one_day.err;
  ProcessResult status = project.Run({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.err;
  EXPECT_NE(status.out.find("7/"), std::string::npos) << status.out;

  auto warehouse = DuckDbWarehouse::Open(project.root() / ".sluice" / "dev.duckdb", true, {});
  auto value = [&](const std::string& sql) { return warehouse->Query(sql).rows.at(0).at(0).value_or("NULL"); };
  EXPECT_EQ(value("SELECT count(*) FROM raw.orders"), "49");
  EXPECT_EQ(value("SELECT count(*) FROM sales.orders_enriched"), value("SELECT count(*) FROM sales.stg_orders WHERE status <> 'cancelled'"));
  // Gold equals a direct aggregation of silver, day by day and in total.
  EXPECT_EQ(value("SELECT sum(revenue) FROM sales.daily_revenue"), value("SELECT sum(amount) FROM sales.orders_enriched"));
  EXPECT_EQ(value("SELECT count(DISTINCT order_date) FROM sales.daily_revenue"), "7");
  EXPECT_EQ(value("SELECT sum(revenue) FROM sales.revenue_by_region"), value("SELECT sum(revenue) FROM sales.daily_revenue"));
}

// docs/deployments.md's worked example: examples/staged_orders deployed, changed, deployed again, rolled back.
TEST(DemoE2E, StagedOrdersDeploysAChangeAndRollsBack) {
  ScratchProject project("examples/staged_orders");
  ProcessResult plan = project.Run({"plan"});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  EXPECT_NE(plan.out.find("2 object(s): 2 create, 0 rebuild, 0 no_op"), std::string::npos) << plan.out;
  ProcessResult backfill = project.Run({"backfill", "--json"});
  ASSERT_EQ(backfill.exit_code, 0) << backfill.out << backfill.err;
  ProcessResult audit = project.Run({"audit", "backfill"});
  ASSERT_EQ(audit.exit_code, 0) << audit.out << audit.err;
  EXPECT_NE(audit.out.find("(backfilled): ready"), std::string::npos) << audit.out;
  ProcessResult publish = project.Run({"publish"});
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  auto value = [&](const std::string& sql) {
    auto warehouse = DuckDbWarehouse::Open(project.root() / ".sluice" / "dev.duckdb", true, {});
    return warehouse->Query(sql).rows.at(0).at(0).value_or("NULL");
  };
  EXPECT_EQ(value("SELECT count(*) FROM shop.tbl__paid_orders"), "5");
  EXPECT_EQ(value("SELECT count(*) FROM shop.tbl__daily_revenue"), "4");
  EXPECT_EQ(value("SELECT sum(revenue) FROM shop.tbl__daily_revenue"), value("SELECT sum(amount) FROM shop.tbl__paid_orders"));
  ProcessResult build = project.Run({"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1);
  EXPECT_NE(build.err.find("SLU-DEPLOY-006"), std::string::npos) << build.err;
  // `run` never replaces a stable view.
  ProcessResult run = project.Run({"run", "--select", "paid_orders"});
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("SLU-DEPLOY-001"), std::string::npos) << run.err;
  EXPECT_EQ(value("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'shop' AND "
                  "table_name = 'tbl__paid_orders' AND table_type = 'VIEW'"),
            "1");

  std::string model = project.Read("pipelines/pl__orders/paid_orders.sql");
  const std::string amount = "  CAST(amount AS DOUBLE) AS amount,\n";
  model.insert(model.find(amount) + amount.size(), "  CAST(amount >= 100 AS BOOLEAN) AS large,\n");
  project.Write("pipelines/pl__orders/paid_orders.sql", model);
  plan = project.Run({"plan"});
  EXPECT_NE(plan.out.find("(columns changed; +large non_breaking, seedable)"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("(upstream paid_orders is rebuilt)"), std::string::npos) << plan.out;
  ASSERT_EQ(project.Run({"backfill"}).exit_code, 0);
  ASSERT_EQ(project.Run({"publish"}).exit_code, 0);
  EXPECT_EQ(value("SELECT count(*) FROM shop.tbl__paid_orders WHERE large"), "1");
  ProcessResult rollback = project.Run({"deployment", "rollback", "--previous"});
  ASSERT_EQ(rollback.exit_code, 0) << rollback.out << rollback.err;
  EXPECT_EQ(value("SELECT count(*) FROM information_schema.columns WHERE table_schema = 'shop' AND "
                  "table_name = 'tbl__paid_orders' AND column_name = 'large'"),
            "0");
  EXPECT_EQ(value("SELECT count(*) FROM shop.tbl__paid_orders"), "5");
}

}  // namespace
}  // namespace sluice::testing
