// End-to-end tests of `sluice run` / `status` / `runs` / `logs` on the `shop` fixture, checking the data
// in the DuckDB file itself.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "core/clock.hpp"
#include "e2e/sluice_process.hpp"
#include "e2e/warehouse_queries.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

TEST(RunE2E, MaterializesEveryAssetInDependencyOrder) {
  ScratchProject project("shop");
  ProcessResult result = MustRun(project, {"run", "--from", "2026-03-01", "--to", "2026-03-05"});
  EXPECT_NE(result.out.find("[7/7]"), std::string::npos) << result.out;
  EXPECT_EQ(One(project, "SELECT count(*) FROM raw.events"), "20");
  EXPECT_EQ(One(project, "SELECT count(*) FROM core.clean_events"), "20");
  EXPECT_EQ(One(project, "SELECT amount FROM core.user_totals_table WHERE user_id = 2"), "160");
  EXPECT_EQ(Rows(project, "SELECT * FROM core.top_users"), (std::vector<std::string>{"dee|170", "cy|165"}));
  EXPECT_EQ(Rows(project, "SELECT event_date, events, amount FROM core.daily_totals ORDER BY 1"),
            (std::vector<std::string>{"2026-03-01|4|50", "2026-03-02|4|90", "2026-03-03|4|130", "2026-03-04|4|170",
                                      "2026-03-05|4|210"}));
  // The ledger records every write with the run that made it.
  json runs = RunsJson(project);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "SUCCESS");
  EXPECT_EQ(runs[0]["partition_start"], "2026-03-01");
  EXPECT_EQ(runs[0]["partition_end"], "2026-03-05");
  std::string run_id = runs[0]["run_id"];
  EXPECT_EQ(One(project, "SELECT count(DISTINCT asset) FROM _sluice.ledger WHERE run_id = '" + run_id + "'"), "7");
  EXPECT_EQ(One(project, "SELECT row_count FROM _sluice.ledger WHERE asset = 'core.daily_totals'"), "5");
}

TEST(RunE2E, AFileNamedLikeANamespaceIsNotAmbiguous) {
  // DuckDB names the attached file's catalog after its stem: "raw" here, also the seeds' schema.
  ScratchProject project("shop");
  project.Write("streambuild_project.toml", std::string(R"(name = "shop"
adapter = "duckdb"
default_target = "test"

[naming]
table_prefix = ""
view_prefix = ""

[targets.test]
database = "raw"

[targets.test.connection]
path = "raw.duckdb"
)"));
  MustRun(project, {"run", "--from", "2026-03-01", "--to", "2026-03-02"});
  auto warehouse = DuckDbWarehouse::Open(project.root() / "raw.duckdb", true, {});
  EXPECT_EQ(warehouse->Query("SELECT count(*) FROM raw.raw.events").rows.at(0).at(0), "20");
  EXPECT_EQ(warehouse->Query("SELECT count(*) FROM raw.core.daily_totals").rows.at(0).at(0), "2");
}

TEST(RunE2E, SeedsReloadOnlyWhenTheFileChanges) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--select", "events", "users"});
  ProcessResult again = MustRun(project, {"run", "--select", "events"});
  EXPECT_NE(again.out.find("UNCHANGED raw.events"), std::string::npos) << again.out;
  project.Write("seeds/events.csv", "event_id,user_id,event_date,amount\n1,1,2026-03-01,5\n");
  ProcessResult changed = MustRun(project, {"run", "--select", "events"});
  EXPECT_NE(changed.out.find("OK        raw.events"), std::string::npos) << changed.out;
  EXPECT_EQ(One(project, "SELECT count(*) FROM raw.events"), "1");
}

TEST(RunE2E, FailedModelKeepsItsTableAndStopsOnlyItsDownstream) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  std::vector<std::string> before = Rows(project, "SELECT * FROM core.user_totals_table ORDER BY user_id");
  // Fails mid-query: the cast succeeds for the first rows and fails on user 3.
  project.Write("pipelines/core/user_totals.sql", R"(MODEL (relation_name "user_totals_table");
SELECT
  CAST(CASE WHEN e.user_id < 3 THEN CAST(e.user_id AS VARCHAR) ELSE 'not a number' END AS BIGINT) AS user_id,
  CAST(u.user_name AS VARCHAR) AS user_name,
  CAST(e.amount AS BIGINT) AS amount
FROM __ref("clean_events") AS e
JOIN __ref("dim_users", ref_type='reference') AS u ON u.user_id = e.user_id
)");
  ProcessResult result = project.Run({"run", "--partition", "2026-03-02"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("FAILED    core.user_totals"), std::string::npos) << result.out;
  // Located in the model file, at the failing cast, not at DuckDB's line of the statement it ran.
  EXPECT_NE(result.out.find("pipelines/core/user_totals.sql:3:3: error[SLU-WAREHOUSE-025]: writing "
                            "core.user_totals_table failed: Conversion Error: Could not convert string 'not a number'"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("SKIPPED   core.top_users"), std::string::npos) << result.out;
  // Its sibling ran and wrote its new partition.
  EXPECT_NE(result.out.find("OK        core.daily_totals [2026-03-02]"), std::string::npos) << result.out;
  EXPECT_EQ(One(project, "SELECT count(*) FROM core.daily_totals"), "2");
  EXPECT_EQ(Rows(project, "SELECT * FROM core.user_totals_table ORDER BY user_id"), before);
  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["status"], "FAILURE");
  std::string run_id = runs[0]["run_id"];
  EXPECT_EQ(One(project, "SELECT count(*) FROM _sluice.ledger WHERE run_id = '" + run_id +
                             "' AND asset IN ('core.user_totals', 'core.top_users')"),
            "0");
  json logs = json::parse(MustRun(project, {"logs", run_id, "--json"}).out);
  bool failed_event = false, skipped_event = false;
  for (const json& event : logs["events"]) {
    failed_event |= event["kind"] == "step_failed" && event["payload"]["asset"] == "core.user_totals";
    skipped_event |= event["kind"] == "step_skipped" && event["payload"]["asset"] == "core.top_users";
  }
  EXPECT_TRUE(failed_event);
  EXPECT_TRUE(skipped_event);
}

TEST(RunE2E, ABinderErrorPointsAtTheModelFile) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  project.Write("pipelines/core/user_totals.sql", R"(MODEL (relation_name "user_totals_table");
-- a header comment, so DuckDB's line numbers would be off
SELECT
  CAST(e.user_id AS BIGINT) AS user_id,
  CAST(u.user_name AS VARCHAR) AS user_name,
  CAST(e.amount_typo AS BIGINT) AS amount
FROM __ref("clean_events") AS e
JOIN __ref("dim_users", ref_type='reference') AS u ON u.user_id = e.user_id
)");
  ProcessResult result = project.Run({"run", "--select", "user_totals", "--partition", "2026-03-01"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("pipelines/core/user_totals.sql:6:8: error[SLU-WAREHOUSE-024]"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find(" 6 |   CAST(e.amount_typo AS BIGINT) AS amount"), std::string::npos) << result.out;
  // The event log keeps the location too.
  json logs = json::parse(MustRun(project, {"logs", RunsJson(project)[0]["run_id"], "--json"}).out);
  bool located = false;
  for (const json& event : logs["events"]) {
    if (event["kind"] != "step_failed") continue;
    const json& d = event["payload"]["diagnostics"][0];
    located = d["file"] == "pipelines/core/user_totals.sql" && d["line"] == 6 && d["column"] == 8;
  }
  EXPECT_TRUE(located) << logs.dump(2);
}

TEST(RunE2E, ASeedValueThatDoesNotConvertPointsAtItsLineAndColumnInTheSeedFile) {
  ScratchProject project("shop");
  std::string events = project.Read("seeds/events.csv");
  const std::string row = "3,3,2026-03-01,13\n";
  ASSERT_NE(events.find(row), std::string::npos);
  events.replace(events.find(row), row.size(), "3,3,2026-03-01,13 euros\n");
  project.Write("seeds/events.csv", events);
  ASSERT_EQ(project.Run({"compile"}).exit_code, 0);  // the file is valid CSV; the value is the column type's problem
  ProcessResult result = project.Run({"run", "--select", "events"});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("seeds/events.csv:4:16: error[SLU-WAREHOUSE-025]: loading the seed raw.events: the value "
                            "`13 euros` of column amount does not convert to BIGINT"),
            std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find(" 4 | 3,3,2026-03-01,13 euros"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("hint: fix the value, or change the type of amount under the seed's `columns`"),
            std::string::npos)
      << result.out;
}

TEST(RunE2E, RerunningOnePartitionReplacesOnlyItsDates) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--from", "2026-03-01", "--to", "2026-03-05"});
  std::vector<std::string> before = Rows(project, "SELECT * FROM core.daily_totals ORDER BY event_date");
  // New amounts for every day; only 2026-03-03 is re-run.
  std::string csv = "event_id,user_id,event_date,amount\n";
  for (int day = 1; day <= 5; ++day) csv += std::to_string(day) + ",1,2026-03-0" + std::to_string(day) + ",1000\n";
  project.Write("seeds/events.csv", csv);
  ProcessResult result = MustRun(project, {"run", "--select", "+daily_totals", "--partition", "2026-03-03"});
  // The model's SELECT covers all five days; four days' rows fall outside the window and are dropped.
  EXPECT_NE(result.out.find("1 rows (4 outside the window dropped)"), std::string::npos) << result.out;
  std::vector<std::string> after = Rows(project, "SELECT * FROM core.daily_totals ORDER BY event_date");
  ASSERT_EQ(after.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    if (i == 2) {
      EXPECT_EQ(after[i], "2026-03-03|1|1000");
    } else {
      EXPECT_EQ(after[i], before[i]) << "date " << i + 1 << " must be untouched";
    }
  }
  std::string run_id = RunsJson(project)[0]["run_id"];
  json logs = json::parse(MustRun(project, {"logs", run_id, "--json"}).out);
  bool counted = false;
  for (const json& event : logs["events"]) {
    if (event["kind"] == "materialization" && event["payload"]["asset"] == "core.daily_totals") {
      counted = event["payload"]["rows_dropped"] == 4 && event["payload"]["window_start"] == "2026-03-03" &&
                event["payload"]["window_end"] == "2026-03-04";
    }
  }
  EXPECT_TRUE(counted) << logs.dump(2);
}

TEST(RunE2E, AFullRefreshEndingAtAChosenDayIsRefusedAndWritesNothing) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--from", "2026-03-01", "--to", "2026-03-05"});
  const std::vector<std::string> before = Rows(project, "SELECT * FROM core.daily_totals ORDER BY event_date");
  const size_t runs_before = RunsJson(project).size();
  for (const std::vector<std::string>& window :
       {std::vector<std::string>{"--partition", "2026-03-02"},
        std::vector<std::string>{"--from", "2026-03-01", "--to", "2026-03-02"}}) {
    std::vector<std::string> args = {"run", "--select", "daily_totals", "--full-refresh"};
    args.insert(args.end(), window.begin(), window.end());
    ProcessResult refused = project.Run(args);
    EXPECT_EQ(refused.exit_code, 2) << refused.out << refused.err;
    EXPECT_NE(refused.err.find("SLU-CLI-004"), std::string::npos) << refused.err;
    EXPECT_NE(refused.err.find("--from A --to B"), std::string::npos) << refused.err;
  }
  EXPECT_EQ(Rows(project, "SELECT * FROM core.daily_totals ORDER BY event_date"), before);
  EXPECT_EQ(RunsJson(project).size(), runs_before);
}

TEST(RunE2E, KillBeforeCommitKeepsPreviousTableAndMarksRunFailed) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  std::vector<std::string> before = Rows(project, "SELECT * FROM core.clean_events ORDER BY event_id");
  project.Write("seeds/events.csv", "event_id,user_id,event_date,amount\n99,1,2026-03-01,1\n");
  std::string marker = (project.root() / "paused").string();
  pid_t pid = project.Start({"run", "--select", "events", "--threads", "1"},
                            {{"SLUICE_TEST_PAUSE_AT", "after_write_before_commit"}, {"SLUICE_TEST_PAUSE_MARKER", marker}},
                            "paused_run");
  ASSERT_TRUE(WaitForFile(marker, 60));
  // While the writer holds the file, read commands still answer from the state store.
  ProcessResult status = project.Run({"runs", "--json"});
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(json::parse(status.out)["runs"][0]["status"], "STARTED");
  ::kill(pid, SIGKILL);
  EXPECT_EQ(WaitFor(pid), 128 + SIGKILL);

  EXPECT_EQ(Rows(project, "SELECT * FROM core.clean_events ORDER BY event_id"), before);
  EXPECT_EQ(One(project, "SELECT count(*) FROM raw.events"), "20");
  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["status"], "FAILURE");
  EXPECT_EQ(runs[0]["error"], "process died");
  EXPECT_EQ(runs[1]["status"], "SUCCESS");
}

TEST(RunE2E, SecondWriterWaitsForTheFirst) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--select", "users"});
  std::string marker = (project.root() / "paused").string();
  project.Write("seeds/users.csv", "user_id,user_name\n1,ann\n");
  pid_t first = project.Start({"run", "--select", "users"},
                              {{"SLUICE_TEST_PAUSE_AT", "after_write_before_commit"}, {"SLUICE_TEST_PAUSE_MARKER", marker}},
                              "first");
  ASSERT_TRUE(WaitForFile(marker, 60));
  pid_t second = project.Start({"run", "--select", "users"}, {}, "second");
  // The second writer announces that it waits; it cannot finish while the first holds the file.
  bool announced = false;
  for (int i = 0; i < 500 && !announced; ++i) {
    announced = project.Read("../second.err").find("waiting") != std::string::npos;
    if (!announced) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(announced) << project.Read("../second.err");
  ::kill(first, SIGKILL);
  WaitFor(first);
  EXPECT_EQ(WaitFor(second), 0) << project.Read("../second.out") << project.Read("../second.err");
  EXPECT_EQ(One(project, "SELECT count(*) FROM raw.users"), "1");
}

// Runs sluice like ScratchProject::Run, but kills it after `seconds` (exit code -1 then): a hang guard for commands
// that must not wait.
ProcessResult RunWithin(const ScratchProject& project, const std::vector<std::string>& args, int seconds,
                        const std::string& stem) {
  pid_t pid = project.Start(args, {}, stem);
  ProcessResult result;
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) != pid) {
    if (std::chrono::steady_clock::now() > give_up) {
      ::kill(pid, SIGKILL);
      WaitFor(pid);
      result.out = project.Read("../" + stem + ".out");
      result.err = project.Read("../" + stem + ".err");
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = project.Read("../" + stem + ".out");
  result.err = project.Read("../" + stem + ".err");
  return result;
}

// While a run holds the DuckDB file (paused inside a write), `status` does not wait for it: it answers from the state
// store, says the warehouse is busy, and exits 0. A command that does wait for the file (`clean`) says so without
// offering a flag it does not accept.
TEST(RunE2E, StatusAnswersFromTheStateStoreWhileARunWritesTheWarehouse) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  const std::string marker = (project.root() / "paused").string();
  const std::string resume = (project.root() / "resume").string();
  pid_t writer = project.Start({"run", "--select", "daily_totals", "--partition", "2026-03-01"},
                               {{"SLUICE_TEST_PAUSE_AT", "after_write_before_commit"},
                                {"SLUICE_TEST_PAUSE_MARKER", marker},
                                {"SLUICE_TEST_PAUSE_RESUME", resume}},
                               "writer");
  ASSERT_TRUE(WaitForFile(marker, 60)) << project.Read("../writer.err");

  // The bound is a hang guard, far above what reading the state store takes.
  ProcessResult text = RunWithin(project, {"status"}, 60, "status_text");
  ProcessResult as_json = RunWithin(project, {"status", "--json"}, 60, "status_json");
  pid_t cleaner = project.Start({"clean"}, {}, "clean");
  bool announced = false;
  for (int i = 0; i < 3000 && !announced; ++i) {
    announced = project.Read("../clean.err").find("waiting for") != std::string::npos;
    if (!announced) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ofstream(resume) << "go\n";
  EXPECT_EQ(WaitFor(writer), 0) << project.Read("../writer.out") << project.Read("../writer.err");
  EXPECT_EQ(WaitFor(cleaner), 0) << project.Read("../clean.err");

  EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
  EXPECT_NE(text.out.find("note: warehouse busy: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("status from the state store"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("core.daily_totals"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("--wait-timeout"), std::string::npos) << text.out;
  EXPECT_EQ(text.err.find("--wait-timeout"), std::string::npos) << text.err;

  ASSERT_EQ(as_json.exit_code, 0) << as_json.out << as_json.err;
  json status = json::parse(as_json.out);
  ASSERT_EQ(status["notes"].size(), 1u) << status.dump(2);
  EXPECT_EQ(status["notes"][0].get<std::string>().rfind("warehouse busy: ", 0), 0u)
      << status.dump(2);
  ASSERT_EQ(status["assets"].size(), 7u) << status.dump(2);
  for (const json& asset : status["assets"]) {
    // What the state store records (the first run's writes); the warehouse's catalog was not read.
    EXPECT_EQ(asset["state"], "materialized") << asset.dump();
    EXPECT_TRUE(asset["exists"].is_null()) << asset.dump();
    EXPECT_FALSE(asset["last_materialization"].is_null()) << asset.dump();
    if (asset["asset"] == "core.daily_totals") {
      EXPECT_EQ(asset["partitions"]["done"], 1) << asset.dump();
    }
  }

  EXPECT_TRUE(announced) << project.Read("../clean.err");
  EXPECT_EQ(project.Read("../clean.err").find("--wait-timeout"), std::string::npos) << project.Read("../clean.err");

  // The run done, status reads the warehouse again.
  json after = json::parse(MustRun(project, {"status", "--json"}).out);
  EXPECT_TRUE(after["notes"].empty()) << after.dump(2);
  for (const json& asset : after["assets"]) EXPECT_EQ(asset["exists"], true) << asset.dump();
}

TEST(RunE2E, StatusRebuildsHistoryFromTheWarehouseLedger) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--from", "2026-03-01", "--to", "2026-03-02"});
  json before = json::parse(MustRun(project, {"status", "--json"}).out);
  project.Remove(".sluice");
  ProcessResult rebuilt = MustRun(project, {"status"});
  // The note says what was rebuilt, and what `runs` will (not) show.
  EXPECT_NE(rebuilt.out.find("rebuilt which assets and partitions are materialized from the warehouse ledger (7 writes "
                             "by 1 run); the runs themselves and their logs are not in the ledger, so `sluice runs` "
                             "does not list them"),
            std::string::npos)
      << rebuilt.out;
  EXPECT_TRUE(RunsJson(project).empty());
  json after = json::parse(MustRun(project, {"status", "--json"}).out);
  EXPECT_EQ(before["assets"], after["assets"]);
  for (const json& asset : after["assets"]) {
    if (asset["asset"] == "core.daily_totals") {
      EXPECT_EQ(asset["partitions"]["missing_ranges"][0][0], "2026-03-03");
      EXPECT_EQ(asset["partitions"]["done"], 2);
    }
  }
}

TEST(RunE2E, HistoryCommandsWorkWhileTheProjectDoesNotLoad) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  std::string run_id = RunsJson(project)[0]["run_id"];
  project.Write("pipelines/core/top_users.sql", "MODEL (kind view);\nSELECT FROM (");
  ASSERT_EQ(project.Run({"compile"}).exit_code, 1);
  EXPECT_EQ(RunsJson(project).size(), 1u);
  EXPECT_EQ(json::parse(MustRun(project, {"logs", run_id, "--json"}).out)["status"], "SUCCESS");
  json status = json::parse(MustRun(project, {"status", "--json"}).out);
  EXPECT_EQ(status["project_errors"][0]["file"], "pipelines/core/top_users.sql") << status.dump(2);
  ASSERT_EQ(status["assets"].size(), 7u) << status.dump(2);
  for (const json& asset : status["assets"]) {
    EXPECT_EQ(asset["state"], "materialized") << asset.dump();
    // The ledger names each relation; the catalog says which is a view.
    if (asset["asset"] == "core.top_users") {
      EXPECT_EQ(asset["kind"], "view");
      EXPECT_TRUE(asset["last_materialization"]["rows"].is_null());
    }
  }
  EXPECT_NE(MustRun(project, {"status"}).out.find("showing the run history only"), std::string::npos);
  // With the settings file itself broken, the history is still readable.
  project.Write("streambuild_project.toml", "name = ");
  EXPECT_EQ(RunsJson(project).size(), 1u);
  MustRun(project, {"logs", run_id});
  status = json::parse(MustRun(project, {"status", "--json"}).out);
  EXPECT_EQ(status["assets"].size(), 7u);
  EXPECT_EQ(status["project_errors"][0]["code"], "SLU-CONFIG-001");
}

TEST(RunE2E, LogsSayAViewWasReplacedNotHowManyRowsItHolds) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  std::string run_id = RunsJson(project)[0]["run_id"];
  const std::string logs = MustRun(project, {"logs", run_id}).out;
  EXPECT_NE(logs.find("core.top_users view created or replaced"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("core.top_users materialized"), std::string::npos) << logs;
  EXPECT_NE(logs.find("core.clean_events materialized 20 rows"), std::string::npos) << logs;
  EXPECT_NE(logs.find("core.daily_totals materialized 1 row in"), std::string::npos) << logs;
  bool view_event = false;
  const json events = json::parse(MustRun(project, {"logs", run_id, "--json"}).out)["events"];
  for (const json& event : events) {
    if (event["kind"] != "materialization") continue;
    EXPECT_EQ(event["payload"]["view"], event["payload"]["asset"] == "core.top_users") << event.dump();
    view_event = view_event || event["payload"]["view"] == true;
  }
  EXPECT_TRUE(view_event);
}

TEST(RunE2E, StatusChecksTheWarehouseCatalog) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--partition", "2026-03-01"});
  json status = json::parse(MustRun(project, {"status", "--json"}).out);
  for (const json& asset : status["assets"]) {
    EXPECT_EQ(asset["state"], "materialized") << asset.dump();
    EXPECT_EQ(asset["exists"], true) << asset.dump();
  }
  std::string text = MustRun(project, {"status"}).out;
  EXPECT_NE(text.find("core.top_users                        view      materialized"), std::string::npos) << text;
  EXPECT_EQ(text.find(" 0 rows"), std::string::npos) << text;  // a view holds no rows of its own

  project.Remove("warehouse.duckdb");
  status = json::parse(MustRun(project, {"status", "--json"}).out);
  for (const json& asset : status["assets"]) {
    EXPECT_EQ(asset["state"], "missing") << asset.dump();
    EXPECT_EQ(asset["exists"], false) << asset.dump();
    if (!asset["partitions"].is_null()) {
      EXPECT_EQ(asset["partitions"]["done"], 0) << asset.dump();
    }
  }
  text = MustRun(project, {"status"}).out;
  EXPECT_NE(text.find("core.user_totals                      table     missing"), std::string::npos) << text;
}

TEST(RunE2E, DefaultPartitionIsYesterdayUtc) {
  ScratchProject project("shop");
  MustRun(project, {"run", "--select", "+daily_totals"});
  std::string yesterday = SystemClock().TodayUtc().AddDays(-1).ToString();
  json runs = RunsJson(project);
  EXPECT_EQ(runs[0]["partition_start"], yesterday);
  EXPECT_EQ(runs[0]["partition_end"], yesterday);
  // The fixture's data is from March 2026: yesterday's window has no rows, and nothing else was touched.
  EXPECT_EQ(One(project, "SELECT count(*) FROM core.daily_totals"), "0");
}

TEST(RunE2E, SelectionClosures) {
  ScratchProject project("shop");
  ProcessResult upstream = MustRun(project, {"run", "--select", "+user_totals", "--partition", "2026-03-01"});
  EXPECT_NE(upstream.out.find("[5/5]"), std::string::npos) << upstream.out;  // events, users, dim_users, clean_events, user_totals
  EXPECT_EQ(upstream.out.find("core.top_users"), std::string::npos);
  ProcessResult downstream = MustRun(project, {"run", "--select", "clean_events+", "--partition", "2026-03-01"});
  EXPECT_NE(downstream.out.find("[4/4]"), std::string::npos) << downstream.out;
  EXPECT_NE(downstream.out.find("core.top_users"), std::string::npos);
  ProcessResult pipeline = MustRun(project, {"run", "--select", "pipeline:people"});
  EXPECT_NE(pipeline.out.find("[2/2]"), std::string::npos) << pipeline.out;  // users + dim_users
  ProcessResult unknown = project.Run({"run", "--select", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("SLU-SELECT-001"), std::string::npos) << unknown.err;
}

TEST(RunE2E, UsageErrorsExitTwo) {
  ScratchProject project("shop");
  EXPECT_EQ(project.Run({"run", "--partition", "2026-03-01", "--from", "2026-03-01", "--to", "2026-03-02"}).exit_code, 2);
  EXPECT_EQ(project.Run({"frobnicate"}).exit_code, 2);
  EXPECT_EQ(project.Run({"logs"}).exit_code, 2);
  ProcessResult bad_key = project.Run({"run", "--partition", "2026-02-30"});
  EXPECT_EQ(bad_key.exit_code, 2);
  EXPECT_NE(bad_key.err.find("SLU-PARTITION-001"), std::string::npos) << bad_key.err;
  EXPECT_EQ(project.Run({"--help"}).exit_code, 0);
}

}  // namespace
}  // namespace sluice::testing
