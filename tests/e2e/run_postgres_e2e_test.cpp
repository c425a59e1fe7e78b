// examples/orders_demo on the PostgreSQL test server, its run history in PostgreSQL too ([state] url): `sluice run` over a week (a backfill of the daily model), one
// partition replaced, `sluice build` and `status`, and a kill -9 at the write's pause point before COMMIT, which must
// leave the previous data and ledger as they were and let a rerun converge. The rows are checked against the same
// project run on DuckDB.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "e2e/sluice_process.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

std::vector<std::string> RowsOf(Warehouse& warehouse, const std::string& sql) {
  std::vector<std::string> rows;
  for (const auto& row : warehouse.Query(sql).rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += (i ? "|" : "") + row[i].value_or("NULL");
    rows.push_back(line);
  }
  return rows;
}

constexpr const char* kDailyRevenue =
    "SELECT CAST(order_date AS VARCHAR), region, CAST(orders AS VARCHAR), CAST(revenue AS VARCHAR) "
    "FROM sales.daily_revenue ORDER BY 1, 2";
constexpr const char* kRevenueByRegion =
    "SELECT region, CAST(orders AS VARCHAR), CAST(revenue AS VARCHAR) FROM sales.revenue_by_region ORDER BY 1";

class RunOnPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RequirePostgresTestServer();
    database_ = CreatePostgresTestDatabase(server_, "orders_demo");
    state_database_ = CreatePostgresTestDatabase(server_, "orders_state");
    warehouse_ = OpenWarehouse(PostgresTestConfig(server_, database_));
    // The password comes from the environment, so a test can check that no output shows it.
    project_.Write("streambuild_project.toml", R"(name = "orders_demo"
adapter = "postgres"
default_target = "dev"

[naming]
table_prefix = ""
view_prefix = ""

[targets.dev]
database = "raw"

[targets.dev.connection]
host = ")" + server_.host + R"("
port = )" + std::to_string(server_.port) + R"(
username = ")" + server_.user + R"("
password = "${ENV:PGW_TEST_PASSWORD}"
dbname = ")" + database_ + R"("

[state]
url = "postgresql://)" + server_.user + R"(:${ENV:PGW_TEST_PASSWORD}@)" + server_.host + ":" +
                                                 std::to_string(server_.port) + "/" + state_database_ + R"("
)");
  }

  ProcessResult Sluice(const std::vector<std::string>& args, std::map<std::string, std::string> env = {}) {
    env["PGW_TEST_PASSWORD"] = server_.password;
    ProcessResult result = project_.Run(args, env);
    EXPECT_EQ(result.out.find(server_.password), std::string::npos) << result.out;
    EXPECT_EQ(result.err.find(server_.password), std::string::npos) << result.err;
    return result;
  }

  // The same project on DuckDB, as shipped: the reference rows.
  std::vector<std::string> DuckDbRows(const std::vector<std::vector<std::string>>& runs, const std::string& sql) {
    ScratchProject reference("examples/orders_demo");
    for (const auto& args : runs) {
      ProcessResult result = reference.Run(args);
      EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    }
    auto duckdb = DuckDbWarehouse::Open(reference.root() / ".sluice/dev.duckdb", true, {});
    return RowsOf(*duckdb, sql);
  }

  std::string One(const std::string& sql) {
    std::vector<std::string> rows = RowsOf(*warehouse_, sql);
    return rows.empty() ? "<no rows>" : rows.front();
  }

  PostgresTestServer server_;
  std::string database_;
  std::string state_database_;  // the run history: PostgreSQL too, in a database of its own
  std::unique_ptr<Warehouse> warehouse_;
  ScratchProject project_{"examples/orders_demo"};
};

TEST_F(RunOnPostgres, RunsTheDemoIntoDailyPartitionsLikeDuckDb) {
  std::vector<std::string> week = {"run", "--from", "2026-11-01", "--to", "2026-11-07"};
  ProcessResult run = Sluice(week);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  std::vector<std::string> expected = DuckDbRows({week}, kDailyRevenue);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(RowsOf(*warehouse_, kDailyRevenue), expected);
  EXPECT_EQ(RowsOf(*warehouse_, kRevenueByRegion), DuckDbRows({week}, kRevenueByRegion));
  EXPECT_EQ(One("SELECT pg_get_partkeydef('sales.daily_revenue'::regclass)"), "RANGE (order_date)");
  EXPECT_EQ(One("SELECT count(*) FROM pg_inherits WHERE inhparent = 'sales.daily_revenue'::regclass"),
            One("SELECT count(DISTINCT order_date) FROM sales.daily_revenue"));
  EXPECT_EQ(One("SELECT count(*) FROM raw.orders"), DuckDbRows({week}, "SELECT count(*) FROM raw.orders").at(0));
  // The run is recorded in the PostgreSQL state store, not in a SQLite file.
  EXPECT_FALSE(std::filesystem::exists(project_.root() / ".sluice" / "state.db"));
  auto state = OpenWarehouse(PostgresTestConfig(server_, state_database_));
  EXPECT_EQ(RowsOf(*state, "SELECT status FROM public.runs"), std::vector<std::string>{"SUCCESS"});

  ProcessResult one_day = Sluice({"run", "--select", "daily_revenue", "--partition", "2026-11-03"});
  ASSERT_EQ(one_day.exit_code, 0) << one_day.out << one_day.err;
  EXPECT_EQ(RowsOf(*warehouse_, kDailyRevenue), expected);
  EXPECT_EQ(One("SELECT CAST(window_start AS TEXT) || '/' || CAST(window_end AS TEXT) FROM _sluice.ledger "
                "WHERE asset = 'sales.daily_revenue' ORDER BY written_at DESC, seq DESC LIMIT 1"),
            "2026-11-03/2026-11-04");
}

TEST_F(RunOnPostgres, AKillBeforeCommitLeavesThePreviousDataAndARerunConverges) {
  ProcessResult run = Sluice({"run", "--from", "2026-11-01", "--to", "2026-11-07"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  const std::vector<std::string> before = RowsOf(*warehouse_, kDailyRevenue);
  // The demo's orders change and reach the silver tables, so a completed rewrite of the gold day would differ.
  project_.Write("seeds/orders.csv", project_.Read("seeds/orders.csv") + "9001,1,2026-11-03,paid,1000.00\n");
  ProcessResult upstream = Sluice({"run", "--select", "orders", "stg_orders", "orders_enriched"});
  ASSERT_EQ(upstream.exit_code, 0) << upstream.out << upstream.err;
  const std::string ledger_before = One("SELECT count(*) FROM _sluice.ledger");
  const std::filesystem::path marker = project_.root() / "paused";
  std::map<std::string, std::string> env = {{"SLUICE_TEST_PAUSE_AT", "after_write_before_commit"},
                                            {"SLUICE_TEST_PAUSE_MARKER", marker.string()},
                                            {"PGW_TEST_PASSWORD", server_.password}};
  pid_t pid = project_.Start({"run", "--select", "daily_revenue", "--partition", "2026-11-03"}, env, "killed");
  ASSERT_TRUE(WaitForFile(marker, 60)) << project_.Read("../killed.err");
  // Paused inside the write's transaction, its rows deleted and inserted (the table's row locks held): readers see
  // the previous contents.
  EXPECT_EQ(One("SELECT count(*) FROM pg_locks AS l JOIN pg_class AS c ON c.oid = l.relation WHERE c.relname = "
                "'daily_revenue' AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()"),
            "1");
  EXPECT_EQ(RowsOf(*warehouse_, kDailyRevenue), before);
  ::kill(pid, SIGKILL);
  EXPECT_EQ(WaitFor(pid), 128 + SIGKILL);
  EXPECT_EQ(RowsOf(*warehouse_, kDailyRevenue), before);
  EXPECT_EQ(One("SELECT count(*) FROM _sluice.ledger"), ledger_before);

  ProcessResult rerun = Sluice({"run", "--select", "daily_revenue", "--partition", "2026-11-03"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_EQ(One("SELECT count(*) FROM _sluice.ledger"), std::to_string(std::stoi(ledger_before) + 1));
  std::vector<std::string> after = RowsOf(*warehouse_, kDailyRevenue);
  EXPECT_NE(after, before);
  // Only 2026-11-03 changed.
  auto day = [](const std::vector<std::string>& rows, bool on_third) {
    std::vector<std::string> out;
    for (const std::string& row : rows) {
      if ((row.rfind("2026-11-03", 0) == 0) == on_third) out.push_back(row);
    }
    return out;
  };
  EXPECT_EQ(day(after, false), day(before, false));
  EXPECT_NE(day(after, true), day(before, true));
}

// `sluice build` (direct mode) writes every model through the same transactional writes, then `status` reads the
// ledger with a read-only session.
TEST_F(RunOnPostgres, BuildWritesEveryModelAndStatusReadsTheLedger) {
  ProcessResult build = Sluice({"build", "--auto-approve"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ(One("SELECT count(DISTINCT asset) FROM _sluice.ledger"), "7");
  EXPECT_EQ(One("SELECT pg_get_partkeydef('sales.daily_revenue'::regclass)"), "RANGE (order_date)");
  EXPECT_EQ(One("SELECT count(*) FROM sales.revenue_by_region"),
            One("SELECT count(DISTINCT region) FROM sales.daily_revenue"));
  ProcessResult status = Sluice({"status"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_NE(status.out.find("sales.daily_revenue"), std::string::npos) << status.out;
}

}  // namespace
}  // namespace sluice::testing
