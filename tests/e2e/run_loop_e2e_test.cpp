// End-to-end tests of what surrounds a run on the `shop` fixture: missing upstreams, waiting for the warehouse
// file (another sluice writer, a DuckDB reader), cancel, full refresh and schema changes, clean, the statements
// under target/run, and the run's machine-readable summary.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

#include "core/clock.hpp"
#include "core/file_system.hpp"
#include "e2e/sluice_process.hpp"
#include "e2e/warehouse_queries.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

// Waits up to 30 s for `needle` in a started process's output file (e.g. "../second.err").
bool WaitForText(const ScratchProject& project, const std::string& file, const std::string& needle) {
  for (int i = 0; i < 1500; ++i) {
    if (project.Read(file).find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

bool HasRelation(const ScratchProject& project, const std::string& schema, const std::string& name) {
  return One(project, "SELECT count(*) FROM information_schema.tables WHERE table_schema = '" + schema +
                          "' AND table_name = '" + name + "'") == "1";
}

constexpr const char* kDailyFromDaily = R"(MODEL (
  partitions (daily (column "event_date", start_date "2026-03-01")),
);

SELECT
  CAST(event_date AS DATE) AS event_date,
  CAST(amount * 2 AS BIGINT) AS doubled
FROM __ref("daily_totals")
)";

TEST(RunLoopE2E, AStepWhoseUpstreamWasNeverMaterializedIsSkippedWithTheReason) {
  ScratchProject project("shop");
  ProcessResult result = project.Run({"run", "--select", "user_totals", "--partition", "2026-03-01"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("SKIPPED   core.user_totals  (upstream core.clean_events was never materialized (the "
                            "warehouse has no core.clean_events); run it first (--select +user_totals) or pass "
                            "--allow-missing-upstream)"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(result.out.find("Did you mean"), std::string::npos) << result.out;
  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["status"], "FAILURE");
  EXPECT_NE(runs[0]["error"].get<std::string>().find("never materialized"), std::string::npos) << runs[0].dump();
  EXPECT_FALSE(HasRelation(project, "core", "user_totals_table"));

  // Allowed, it runs, and fails on the missing table as DuckDB reports it.
  ProcessResult allowed =
      project.Run({"run", "--select", "user_totals", "--partition", "2026-03-01", "--allow-missing-upstream"});
  EXPECT_EQ(allowed.exit_code, 1);
  EXPECT_NE(allowed.out.find("FAILED    core.user_totals"), std::string::npos) << allowed.out;

  // A partitioned upstream must hold every date of the window.
  project.Write("pipelines/core/daily_doubled.sql", kDailyFromDaily);
  MustRun(project, {"run", "--select", "+daily_doubled", "--partition", "2026-03-01"});
  ProcessResult gap = project.Run({"run", "--select", "daily_doubled", "--from", "2026-03-01", "--to", "2026-03-03"});
  EXPECT_EQ(gap.exit_code, 1);
  EXPECT_NE(gap.out.find("(upstream core.daily_totals was never materialized for 2026-03-02 .. 2026-03-03; run it "
                         "first (--select +daily_doubled)"),
            std::string::npos)
      << gap.out;
  // Not counted as done.
  json status = json::parse(MustRun(project, {"status", "--json"}).out);
  for (const json& asset : status["assets"]) {
    if (asset["asset"] == "core.daily_doubled") {
      EXPECT_EQ(asset["partitions"]["done"], 1) << asset.dump();
    }
  }
  MustRun(project, {"run", "--select", "daily_doubled", "--partition", "2026-03-01"});

  // After the warehouse file is deleted, nothing downstream pretends to run.
  project.Remove("warehouse.duckdb");
  ProcessResult deleted = project.Run({"run", "--select", "top_users"});
  EXPECT_EQ(deleted.exit_code, 1);
  EXPECT_NE(deleted.out.find("SKIPPED   core.top_users  (upstream core.user_totals was never materialized"),
            std::string::npos)
      << deleted.out;
}

TEST(RunLoopE2E, LogsAreInTimeOrder) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01", "--threads", "4"});
  std::string run_id = RunsJson(project)[0]["run_id"];
  json logs = json::parse(MustRun(project, {"logs", run_id, "--json"}).out);
  ASSERT_GT(logs["events"].size(), 10u);
  std::string previous;
  for (const json& event : logs["events"]) {
    EXPECT_LE(previous, event["at"].get<std::string>()) << logs.dump(2);
    previous = event["at"];
  }
}

TEST(RunLoopE2E, ARunWaitingForTheWriterIsVisibleAndCanBeCanceled) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--select", "users"});
  std::string users = One(project, "SELECT count(*) FROM raw.users");
  std::string marker = (project.root() / "paused").string();
  project.Write("seeds/users.csv", "user_id,user_name\n1,ann\n");
  pid_t first = project.Start({"run", "--select", "users"},
                              {{"SLUICE_TEST_PAUSE_AT", "after_write_before_commit"}, {"SLUICE_TEST_PAUSE_MARKER", marker}},
                              "first");
  ASSERT_TRUE(WaitForFile(marker, 60));
  pid_t second = project.Start({"run", "--select", "users"}, {}, "second");
  ASSERT_TRUE(WaitForText(project, "../second.err", "waiting")) << project.Read("../second.err");

  json runs = RunsJson(project);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0]["status"], "QUEUED");
  EXPECT_NE(runs[0]["waiting_for"].get<std::string>().find("pid " + std::to_string(first)), std::string::npos)
      << runs[0].dump();
  EXPECT_NE(MustRun(project, {"runs"}).out.find("WAITING"), std::string::npos);

  ::kill(second, SIGTERM);
  EXPECT_EQ(WaitFor(second), 130) << project.Read("../second.err");
  EXPECT_NE(project.Read("../second.err").find("canceled by SIGTERM while waiting"), std::string::npos)
      << project.Read("../second.err");
  ::kill(first, SIGKILL);
  WaitFor(first);
  runs = RunsJson(project);
  EXPECT_EQ(runs[0]["status"], "CANCELED") << runs.dump(2);
  EXPECT_EQ(One(project, "SELECT count(*) FROM raw.users"), users);
}

TEST(RunLoopE2E, AReaderInAnotherProcessMakesTheRunWait) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--select", "users"});
  // The reader is a child forked before this process loads DuckDB; it holds the file until `release` closes.
  int ready[2], release[2];
  // Close-on-exec, so that the sluice processes started meanwhile do not hold the pipes open.
  ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
  ASSERT_EQ(::pipe2(release, O_CLOEXEC), 0);
  pid_t reader = ::fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    ::close(release[1]);
    auto warehouse = DuckDbWarehouse::Open(project.root() / "warehouse.duckdb", true, {});
    [[maybe_unused]] ssize_t ignored = ::write(ready[1], "r", 1);
    char byte;
    ignored = ::read(release[0], &byte, 1);  // returns when the parent closes its end
    ::_exit(0);
  }
  ::close(release[0]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);

  ProcessResult impatient = project.Run({"run", "--select", "users", "--wait-timeout", "0.5"});
  EXPECT_EQ(impatient.exit_code, 1);
  EXPECT_NE(impatient.err.find("error[SLU-WAREHOUSE-007]: gave up waiting after 1s for "), std::string::npos)
      << impatient.err;
  EXPECT_NE(impatient.err.find("(pid " + std::to_string(reader)), std::string::npos) << impatient.err;

  pid_t patient = project.Start({"run", "--select", "users"}, {}, "patient");
  EXPECT_TRUE(WaitForText(project, "../patient.err", "waiting for ")) << project.Read("../patient.err");
  ::close(release[1]);
  int status = 0;
  ::waitpid(reader, &status, 0);
  EXPECT_EQ(WaitFor(patient), 0) << project.Read("../patient.err");
}

TEST(RunLoopE2E, CancelInterruptsTheRunningStatementAndKeepsFinishedSteps) {
  ScratchProject project("shop");
  project.Write("pipelines/core/slow.sql", R"(MODEL ();

SELECT CAST(sum(r.range % 7) AS BIGINT) AS n
FROM __ref("clean_events") AS e, range(100000000000) AS r
)");
  pid_t run = project.Start({"run", "--select", "+slow", "--threads", "1"}, {}, "slow");
  ASSERT_TRUE(WaitForText(project, "../slow.out", "core.clean_events")) << project.Read("../slow.out");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto signaled = std::chrono::steady_clock::now();
  ::kill(run, SIGINT);
  EXPECT_EQ(WaitFor(run), 130) << project.Read("../slow.out") << project.Read("../slow.err");
  EXPECT_LT(std::chrono::steady_clock::now() - signaled, std::chrono::seconds(60));
  std::string out = project.Read("../slow.out");
  EXPECT_NE(out.find("CANCELED  core.slow  (interrupted, its write rolled back)"), std::string::npos) << out;
  EXPECT_NE(out.find("canceled by SIGINT: finished steps are kept"), std::string::npos) << out;
  EXPECT_NE(project.Read("../slow.err").find("SIGINT received: canceling the run"), std::string::npos);

  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["status"], "CANCELED");
  EXPECT_NE(runs[0]["error"].get<std::string>().find("2 step(s) finished and kept"), std::string::npos)
      << runs[0].dump();
  EXPECT_EQ(One(project, "SELECT count(*) FROM core.clean_events"), "20");
  EXPECT_FALSE(HasRelation(project, "core", "slow"));
  EXPECT_EQ(One(project, "SELECT count(*) FROM _sluice.ledger WHERE asset = 'core.slow'"), "0");
}

// Runs sluice with its stdout and stderr on a pseudo-terminal; returns the pid and the terminal's master end.
std::pair<pid_t, int> StartOnTerminal(const ScratchProject& project, const std::vector<std::string>& args) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return {-1, -1};
  std::string terminal = ::ptsname(master);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setsid();
    int slave = ::open(terminal.c_str(), O_RDWR);
    ::dup2(slave, STDOUT_FILENO);
    ::dup2(slave, STDERR_FILENO);
    std::vector<std::string> all = {SluiceBinary(), "--project-dir", project.root().string()};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& arg : all) argv.push_back(arg.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return {pid, master};
}

// Reads the terminal until `needle` shows (true) or 60 s pass.
bool ReadUntil(int master, std::string& seen, const std::string& needle) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (seen.find(needle) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    pollfd ready{master, POLLIN, 0};
    if (::poll(&ready, 1, 100) <= 0) continue;
    char buffer[4096];
    ssize_t got = ::read(master, buffer, sizeof buffer);
    if (got <= 0) return false;
    seen.append(buffer, static_cast<size_t>(got));
  }
  return seen.find(needle) != std::string::npos;
}

TEST(RunLoopE2E, AStepRunningLongerThanTwoSecondsShowsALiveLineOnATerminal) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--select", "+clean_events"});
  project.Write("pipelines/core/slow.sql", R"(MODEL ();

SELECT CAST(sum(r.range % 7) AS BIGINT) AS n
FROM __ref("clean_events") AS e, range(100000000000) AS r
)");
  auto [pid, master] = StartOnTerminal(project, {"run", "--select", "slow"});
  ASSERT_GT(pid, 0);
  std::string seen;
  // The line appears once the step has run 2 s; on a loaded machine its first refresh may already say 3 s or more.
  EXPECT_TRUE(ReadUntil(master, seen, "running core.slow (")) << seen;
  EXPECT_EQ(seen.find("running core.slow (0s)"), std::string::npos) << seen;
  EXPECT_EQ(seen.find("running core.slow (1s)"), std::string::npos) << seen;
  ::kill(pid, SIGINT);
  EXPECT_TRUE(ReadUntil(master, seen, "canceled by SIGINT")) << seen;
  // The live line is erased before the step's own line.
  EXPECT_NE(seen.find("\r\033[K[1/1] CANCELED  core.slow"), std::string::npos) << seen;
  EXPECT_EQ(WaitFor(pid), 130);
  ::close(master);

  // Not on a terminal: no live line.
  pid_t piped = project.Start({"run", "--select", "slow"}, {}, "piped");
  std::this_thread::sleep_for(std::chrono::milliseconds(3500));
  ::kill(piped, SIGTERM);
  EXPECT_EQ(WaitFor(piped), 130);
  EXPECT_EQ(project.Read("../piped.out").find("running core.slow"), std::string::npos) << project.Read("../piped.out");
}

TEST(RunLoopE2E, SchemaChangesAddColumnsOrAskForAFullRefresh) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--from", "2026-03-01", "--to", "2026-03-02"});
  std::string model = project.Read("pipelines/core/daily_totals.sql");
  std::string added = model;
  added.replace(added.find("FROM __ref"), 0, ", CAST(max(amount) AS BIGINT) AS biggest\n");
  project.Write("pipelines/core/daily_totals.sql", added);
  MustRun(project, {"run", "--select", "daily_totals", "--partition", "2026-03-03"});
  EXPECT_EQ(Rows(project, "SELECT event_date, biggest IS NULL FROM core.daily_totals ORDER BY 1"),
            (std::vector<std::string>{"2026-03-01|true", "2026-03-02|true", "2026-03-03|false"}));

  std::string retyped = model;
  retyped.replace(retyped.find("CAST(sum(amount) AS BIGINT)"), 27, "CAST(sum(amount) AS VARCHAR)");
  project.Write("pipelines/core/daily_totals.sql", retyped);
  ProcessResult refused = project.Run({"run", "--select", "daily_totals", "--partition", "2026-03-04"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("pipelines/core/daily_totals.sql: error[SLU-WAREHOUSE-013]: the SELECT for "
                             "core.daily_totals no longer matches its table: column \"biggest\" is no longer selected; "
                             "column \"amount\" was BIGINT and is now VARCHAR"),
            std::string::npos)
      << refused.out;
  EXPECT_NE(refused.out.find("--full-refresh"), std::string::npos) << refused.out;
  EXPECT_EQ(One(project, "SELECT count(*) FROM core.daily_totals"), "3");

  ProcessResult rebuilt = MustRun(project, {"run", "--select", "daily_totals", "--full-refresh"});
  EXPECT_NE(rebuilt.out.find("(full refresh)"), std::string::npos) << rebuilt.out;
  EXPECT_EQ(One(project, "SELECT count(*) FROM core.daily_totals"), "5");
  EXPECT_EQ(One(project, "SELECT data_type FROM information_schema.columns WHERE table_name = 'daily_totals' AND "
                         "column_name = 'amount'"),
            "VARCHAR");
  std::string yesterday = SystemClock().TodayUtc().AddDays(-1).ToString();
  json status = json::parse(MustRun(project, {"status", "--json"}).out);
  for (const json& asset : status["assets"]) {
    if (asset["asset"] != "core.daily_totals") continue;
    EXPECT_EQ(asset["partitions"]["missing"], 0) << asset.dump();
  }
  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["partition_start"], "2026-03-01");
  EXPECT_EQ(runs[0]["partition_end"], yesterday);
}

TEST(RunLoopE2E, CleanListsAndDropsTheRelationsOfRemovedModels) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  project.Remove("pipelines/core/top_users.sql");
  std::string model = project.Read("pipelines/core/user_totals.sql");
  model.replace(model.find("user_totals_table"), 17, "user_totals_v2");
  project.Write("pipelines/core/user_totals.sql", model);

  std::string status = MustRun(project, {"status"}).out;
  EXPECT_NE(status.find("left behind by removed or renamed models"), std::string::npos) << status;
  json listed = json::parse(MustRun(project, {"status", "--json"}).out)["orphans"];
  EXPECT_EQ(listed, json::parse(R"([{"kind": "view", "relation": "core.top_users"},
                                    {"kind": "table", "relation": "core.user_totals_table"}])"));
  std::string dry = MustRun(project, {"clean"}).out;
  EXPECT_NE(dry.find("would drop view core.top_users"), std::string::npos) << dry;
  EXPECT_NE(dry.find("dry run: 2 relations"), std::string::npos) << dry;
  EXPECT_TRUE(HasRelation(project, "core", "top_users"));

  json applied = json::parse(MustRun(project, {"clean", "--apply", "--json"}).out);
  EXPECT_EQ(applied["relations"].size(), 2u);
  EXPECT_FALSE(HasRelation(project, "core", "top_users"));
  EXPECT_FALSE(HasRelation(project, "core", "user_totals_table"));
  EXPECT_TRUE(HasRelation(project, "core", "clean_events"));
  EXPECT_NE(MustRun(project, {"clean"}).out.find("nothing to clean"), std::string::npos);
}

TEST(RunLoopE2E, TheStatementsOfTheLastRunAreUnderTargetRunAndCanBePasted) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  std::string daily = project.Read("target/run/core/daily_totals.sql");
  EXPECT_NE(daily.find("\"warehouse\".\"core\".\"daily_totals\""), std::string::npos) << daily;
  EXPECT_NE(daily.find("FROM \"warehouse\".\"core\".\"clean_events\""), std::string::npos) << daily;
  EXPECT_NE(daily.find("COMMIT;"), std::string::npos) << daily;
  EXPECT_NE(project.Read("target/run/core/top_users.sql").find("CREATE OR REPLACE VIEW"), std::string::npos);

  {
    auto warehouse = DuckDbWarehouse::Open(project.root() / "warehouse.duckdb", false, {});
    warehouse->Execute("DELETE FROM core.daily_totals");
    warehouse->Execute(daily);  // as pasted into a DuckDB shell
  }
  EXPECT_EQ(One(project, "SELECT events FROM core.daily_totals"), "4");

  // Only the latest run's statements are kept.
  project.Write("seeds/users.csv", "user_id,user_name\n1,ann\n");
  MustRun(project, {"run", "--select", "users"});
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target/run/core/daily_totals.sql"));
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/raw/users.sql"));
}

TEST(RunLoopE2E, RunJsonIsASummaryAndRunsShowsDurationAndSteps) {
  ScratchProject project("shop");
  ProcessResult result = MustRun(project, {"run", "--partition", "2026-03-01", "--json"});
  json summary = json::parse(result.out);
  EXPECT_EQ(summary["status"], "SUCCESS");
  EXPECT_EQ(summary["counts"]["ok"], 7);
  ASSERT_EQ(summary["steps"].size(), 7u);
  for (const json& step : summary["steps"]) {
    if (step["asset"] == "core.daily_totals") {
      EXPECT_EQ(step["window"]["start"], "2026-03-01");
      EXPECT_EQ(step["rows_written"], 1);
    }
    if (step["asset"] == "core.top_users") {
      EXPECT_TRUE(step["rows_written"].is_null());
    }
  }
  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["steps"], json::parse(R"({"total": 7, "ok": 7, "failed": 0, "skipped": 0})"));
  EXPECT_GE(runs[0]["duration_ms"].get<int64_t>(), 0);
  std::string text = MustRun(project, {"runs"}).out;
  EXPECT_NE(text.find("7/7 ok"), std::string::npos) << text;

  ProcessResult failed = project.Run({"run", "--select", "top_users", "--json", "--partition", "2026-03-01"});
  EXPECT_EQ(failed.exit_code, 0) << failed.out;  // its upstream is there now
}

}  // namespace
}  // namespace sluice::testing
