// The sluice binary keeping its state in PostgreSQL (SLUICE_STATE_URL, or the project's [state] url) while the data
// stays in the project's DuckDB file: runs are recorded in the database, `runs` / `status` read them back, and
// `status` on an empty state database rebuilds the materializations from the warehouse ledger; one daemon is active per
// database, and a waiting one takes over when it is killed.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/postgres/pg_connection.hpp"
#include "e2e/sluice_process.hpp"
#include "support/postgres_test_server.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

class StatePostgresE2E : public ::testing::Test {
 protected:
  void SetUp() override { server_ = RequirePostgresTestServer(); }

  std::string NewDatabaseUrl(const std::string& hint) {
    return PostgresTestUrl(server_, CreatePostgresTestDatabase(server_, hint));
  }

  // The first value of a query on the state database at `url`.
  static std::string Value(const std::string& url, const std::string& sql) {
    return pg::Connection::Open(url)->Exec(sql).Scalar().value_or("NULL");
  }

  static ProcessResult MustRun(const ScratchProject& project, const std::vector<std::string>& args,
                               const std::map<std::string, std::string>& env) {
    ProcessResult result = project.Run(args, env);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    return result;
  }

  PostgresTestServer server_;
};

TEST_F(StatePostgresE2E, RunsAreRecordedInPostgresqlAndStatusRebuildsFromTheLedgerOnAnEmptyDatabase) {
  ScratchProject project("examples/orders_demo");
  const std::string url = NewDatabaseUrl("e2e_state");
  const std::map<std::string, std::string> env = {{"SLUICE_STATE_URL", url}};

  ProcessResult run = MustRun(project, {"run", "--from", "2026-11-01", "--to", "2026-11-07"}, env);
  EXPECT_NE(run.out.find("[7/7]"), std::string::npos) << run.out;
  EXPECT_FALSE(std::filesystem::exists(project.root() / ".sluice" / "state.db")) << "the state went to SQLite";

  // The run, its events and its materializations are rows of the PostgreSQL database.
  EXPECT_EQ(Value(url, "SELECT count(*) FROM runs"), "1");
  const std::string run_id = Value(url, "SELECT run_id FROM runs");
  EXPECT_EQ(Value(url, "SELECT status FROM runs"), "SUCCESS");
  EXPECT_NE(Value(url, "SELECT count(*) FROM events WHERE run_id = " + pg::QuoteLiteral(run_id)), "0");
  EXPECT_EQ(Value(url, "SELECT count(*) FROM events WHERE kind = 'run_finished'"), "1");
  EXPECT_NE(Value(url, "SELECT count(*) FROM materializations"), "0");

  json runs = json::parse(MustRun(project, {"runs", "--json"}, env).out)["runs"];
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["run_id"], run_id);
  EXPECT_EQ(runs[0]["status"], "SUCCESS");
  json logs = json::parse(MustRun(project, {"logs", run_id, "--json"}, env).out);
  EXPECT_EQ(logs["status"], "SUCCESS");
  json before = json::parse(MustRun(project, {"status", "--json"}, env).out);
  ASSERT_FALSE(before["assets"].empty());

  // A fresh, empty state database: status rebuilds which partitions are materialized from the DuckDB ledger.
  const std::string fresh = NewDatabaseUrl("e2e_rebuilt");
  const std::map<std::string, std::string> fresh_env = {{"SLUICE_STATE_URL", fresh}};
  ProcessResult rebuilt = MustRun(project, {"status"}, fresh_env);
  EXPECT_NE(rebuilt.out.find("rebuilt which assets and partitions are materialized from the warehouse ledger"),
            std::string::npos)
      << rebuilt.out;
  EXPECT_NE(Value(fresh, "SELECT count(*) FROM materializations"), "0");
  EXPECT_EQ(Value(fresh, "SELECT count(*) FROM runs"), "0");
  json after = json::parse(MustRun(project, {"status", "--json"}, fresh_env).out);
  EXPECT_EQ(before["assets"], after["assets"]);
  EXPECT_TRUE(json::parse(MustRun(project, {"runs", "--json"}, fresh_env).out)["runs"].empty());
}

TEST_F(StatePostgresE2E, TheProjectsStateUrlIsUsedWithItsEnvironmentTemplateAndTheVariableWins) {
  ScratchProject project("examples/orders_demo");
  const std::string configured = NewDatabaseUrl("e2e_configured");
  project.Write("streambuild_project.toml",
                project.Read("streambuild_project.toml") + "\n[state]\nurl = \"${ENV:ORDERS_STATE_URL}\"\n");
  MustRun(project, {"run", "--partition", "2026-11-01"}, {{"ORDERS_STATE_URL", configured}});
  EXPECT_EQ(Value(configured, "SELECT count(*) FROM runs"), "1");
  EXPECT_FALSE(std::filesystem::exists(project.root() / ".sluice" / "state.db"));

  // SLUICE_STATE_URL wins over the file (whose ${ENV:…} need not even be set then).
  const std::string overriding = NewDatabaseUrl("e2e_override");
  MustRun(project, {"run", "--partition", "2026-11-02"}, {{"SLUICE_STATE_URL", overriding}});
  EXPECT_EQ(Value(overriding, "SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(Value(configured, "SELECT count(*) FROM runs"), "1");

  // The file's URL with its variable unset: the template error, naming the variable and not opening SQLite.
  ProcessResult unset = project.Run({"runs"});
  EXPECT_EQ(unset.exit_code, 1);
  EXPECT_NE(unset.err.find("ORDERS_STATE_URL"), std::string::npos) << unset.err;
}

// The daemon lease on PostgreSQL: one `sluice daemon` is active; a second exits, a third waits and takes over as soon
// as the first is killed with SIGKILL (its session, and with it the advisory lock, ends).
TEST_F(StatePostgresE2E, OneDaemonIsActiveAndAWaitingOneTakesOverWhenItIsKilled) {
  ScratchProject project("examples/orders_demo");
  const std::string url = NewDatabaseUrl("e2e_daemons");
  const std::map<std::string, std::string> env = {{"SLUICE_STATE_URL", url}};
  // The pid the lease row names, or 0 (also before the first daemon created the tables).
  auto holder = [&]() -> long {
    try {
      const std::string pid = Value(url, "SELECT COALESCE(MAX(pid), 0) FROM daemon_lease");
      return std::stol(pid);
    } catch (const pg::PgError&) {
      return 0;
    }
  };
  auto wait_for_holder = [&](long pid) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (holder() != pid && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return holder() == pid;
  };

  const pid_t first = project.Start({"daemon", "--interval", "100"}, env, "first");
  ASSERT_TRUE(wait_for_holder(first)) << project.Read("../first.err");
  ProcessResult second = project.Run({"daemon", "--interval", "100"}, env);
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_NE(second.err.find("another daemon (pid " + std::to_string(first)), std::string::npos) << second.err;

  const pid_t waiting = project.Start({"daemon", "--wait", "--interval", "100"}, env, "waiting");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(holder(), first);
  ASSERT_EQ(kill(first, SIGKILL), 0);
  WaitFor(first);
  EXPECT_TRUE(wait_for_holder(waiting)) << project.Read("../waiting.err");
  ASSERT_EQ(kill(waiting, SIGTERM), 0);
  EXPECT_EQ(WaitFor(waiting), 0) << project.Read("../waiting.err");
}

TEST_F(StatePostgresE2E, AnUnsupportedStateUrlIsRefusedWithState001AndAHint) {
  ScratchProject project("examples/orders_demo");
  ProcessResult refused = project.Run({"runs"}, {{"SLUICE_STATE_URL", "mysql://u:hunter2@h/db"}});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("SLU-STATE-001"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("postgresql://"), std::string::npos) << refused.err;
  EXPECT_EQ(refused.err.find("hunter2"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace sluice::testing
