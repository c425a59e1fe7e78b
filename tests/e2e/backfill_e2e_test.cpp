// End-to-end tests of multi-run backfills on the `backfill` fixture: 40 days of a daily model with
// `backfill_policy (multi_run 5)`, a single-run daily model downstream (so 5 wins for both), an unpartitioned total
// after them and the seed before: 10 chunks. The crash test SIGKILLs `sluice` at seeded random moments and at the
// named pause points, resumes until the backfill completes, and checks the data against a clean run's and that the
// ledger holds every (asset, day) exactly once.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "e2e/sluice_process.hpp"
#include "e2e/warehouse_queries.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kRange = {"--from", "2026-01-01", "--to", "2026-02-09"};

std::vector<std::string> RunArgs(std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"run"};
  args.insert(args.end(), kRange.begin(), kRange.end());
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// What the data must be: rows per day of both daily models, and the total.
std::vector<std::string> DataSummary(const ScratchProject& project) {
  std::vector<std::string> summary = Rows(project,
                                          "SELECT event_date, count(*), sum(amount) FROM daily.daily_events "
                                          "GROUP BY event_date ORDER BY event_date");
  for (const std::string& row : Rows(project, "SELECT * FROM daily.daily_summary ORDER BY event_date")) {
    summary.push_back("summary " + row);
  }
  for (const std::string& row : Rows(project, "SELECT * FROM daily.event_totals")) summary.push_back("totals " + row);
  return summary;
}

json BackfillsJson(const ScratchProject& project) {
  return json::parse(MustRun(project, {"backfills", "--json"}).out)["backfills"];
}

TEST(BackfillE2E, ARangeRunsAsABackfillOfChunksAndIsListed) {
  ScratchProject project("backfill");
  ProcessResult result = MustRun(project, RunArgs({"--json"}));
  json summary = json::parse(result.out);
  EXPECT_EQ(summary["status"], "COMPLETED_SUCCESS") << result.out;
  EXPECT_EQ(summary["partitions"]["total"], 80);
  EXPECT_EQ(summary["partitions"]["done"], 80);
  EXPECT_EQ(summary["chunks"].size(), 10u);
  EXPECT_TRUE(summary["resume"].is_null());
  std::string id = summary["backfill_id"];

  json listed = BackfillsJson(project);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["backfill_id"], id);
  EXPECT_EQ(listed[0]["chunk_counts"]["success"], 10);
  json shown = json::parse(MustRun(project, {"backfills", "show", id, "--json"}).out);
  ASSERT_EQ(shown["chunks"].size(), 10u);
  EXPECT_EQ(shown["chunks"][0]["assets"], json({"raw.events"}));
  EXPECT_EQ(shown["chunks"][1]["partition_start"], "2026-01-01");
  EXPECT_EQ(shown["chunks"][1]["partition_end"], "2026-01-05");
  EXPECT_EQ(shown["chunks"][1]["assets"], json({"daily.daily_events", "daily.daily_summary"}));
  EXPECT_EQ(shown["chunks"][9]["assets"], json({"daily.event_totals"}));
  EXPECT_EQ(shown["runs"].size(), 10u);
  // Each chunk is a run of its own, with its window.
  json runs = RunsJson(project);
  ASSERT_EQ(runs.size(), 10u);
  EXPECT_EQ(One(project, "SELECT count(*) FROM daily.daily_summary"), "40");
  EXPECT_EQ(One(project, "SELECT days FROM daily.event_totals"), "40");

  // Plain lines, one per chunk, when stdout is not a terminal; a finished backfill has nothing to resume.
  ProcessResult again = MustRun(project, RunArgs({"--max-concurrent-runs", "3"}));
  EXPECT_NE(again.out.find("chunk 2/10 [2026-01-01 .. 2026-01-05]"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("COMPLETED_SUCCESS: 80/80 partitions done"), std::string::npos) << again.out;
  EXPECT_EQ(again.out.find("\033[K"), std::string::npos);
  ProcessResult resumed = MustRun(project, {"backfills", "resume", id});
  EXPECT_NE(resumed.out.find("nothing to resume"), std::string::npos) << resumed.out;

  // status shows the per-partition state.
  json status = json::parse(MustRun(project, {"status", "--json"}).out);
  bool seen = false;
  for (const json& asset : status["assets"]) {
    if (asset["asset"] != "daily.daily_events") continue;
    seen = true;
    EXPECT_EQ(asset["partitions"]["done"], 40) << asset.dump();
    EXPECT_EQ(asset["partitions"]["failed"], 0) << asset.dump();
  }
  EXPECT_TRUE(seen);
}

TEST(BackfillE2E, AFailedChunkIsReportedAndResumeFinishesIt) {
  ScratchProject project("backfill");
  std::string model = project.Read("pipelines/daily/daily_summary.sql");
  std::string broken = model;
  broken.replace(broken.find("CAST(count(*) AS BIGINT)"), 24,
                 "CAST(CASE WHEN max(event_date) = DATE '2026-01-13' THEN error('boom') ELSE count(*) END AS BIGINT)");
  project.Write("pipelines/daily/daily_summary.sql", broken);
  ProcessResult failed = project.Run(RunArgs({"--json"}));
  EXPECT_EQ(failed.exit_code, 1) << failed.out << failed.err;
  json summary = json::parse(failed.out);
  EXPECT_EQ(summary["status"], "COMPLETED_FAILED");
  EXPECT_EQ(summary["partitions"]["failed"], 5);
  std::string id = summary["backfill_id"];
  EXPECT_EQ(summary["resume"], "sluice backfills resume " + id);

  json status = json::parse(MustRun(project, {"status", "--json"}).out);
  for (const json& asset : status["assets"]) {
    if (asset["asset"] != "daily.daily_summary") continue;
    EXPECT_EQ(asset["partitions"]["failed"], 5) << asset.dump();
    EXPECT_EQ(asset["partitions"]["failed_ranges"], json::parse(R"([["2026-01-11", "2026-01-15"]])")) << asset.dump();
  }
  EXPECT_NE(MustRun(project, {"status"}).out.find("5 failed (2026-01-11..2026-01-15)"), std::string::npos);

  project.Write("pipelines/daily/daily_summary.sql", model);
  ProcessResult resumed = MustRun(project, {"backfills", "resume", id, "--json"});
  json after = json::parse(resumed.out);
  EXPECT_EQ(after["status"], "COMPLETED_SUCCESS") << resumed.out;
  ASSERT_EQ(after["chunks"].size(), 2u);  // the failed chunk's daily_summary step, then the totals
  EXPECT_EQ(after["chunks"][0]["steps"].size(), 1u);
  EXPECT_EQ(One(project, "SELECT events FROM daily.event_totals"), "120");
}

TEST(BackfillE2E, CancelFromAnotherProcessStopsLaunchingChunks) {
  ScratchProject project("backfill");
  std::string marker = (project.root() / "paused").string();
  std::string go_on = (project.root() / "go_on").string();
  pid_t pid = project.Start(RunArgs({"--max-concurrent-runs", "1"}),
                            {{"SLUICE_TEST_PAUSE_AT", "backfill_chunk_finished"},
                             {"SLUICE_TEST_PAUSE_MARKER", marker},
                             {"SLUICE_TEST_PAUSE_RESUME", go_on}},
                            "canceled");
  ASSERT_TRUE(WaitForFile(marker, 60));
  json listed = BackfillsJson(project);
  ASSERT_EQ(listed.size(), 1u);
  std::string id = listed[0]["backfill_id"];
  EXPECT_EQ(listed[0]["status"], "REQUESTED");
  ProcessResult cancel = MustRun(project, {"backfills", "cancel", id});
  EXPECT_NE(cancel.out.find("CANCELING"), std::string::npos) << cancel.out;
  project.Write("go_on", "");
  EXPECT_EQ(WaitFor(pid), 1) << project.Read("../canceled.out") << project.Read("../canceled.err");
  json shown = json::parse(MustRun(project, {"backfills", "show", id, "--json"}).out);
  EXPECT_EQ(shown["status"], "CANCELED");
  EXPECT_EQ(shown["chunks"][0]["status"], "success");
  EXPECT_EQ(shown["chunks"][9]["status"], "pending");
  json after = json::parse(MustRun(project, {"backfills", "resume", id, "--json"}).out);
  EXPECT_EQ(after["status"], "COMPLETED_SUCCESS");
}

// The issue's test: kill -9 at random moments (seeded) and at the named pause points, resume until done.
TEST(BackfillE2E, SurvivesSigkillAnywhereAndResumesExactlyOnce) {
  ScratchProject clean("backfill");
  const auto clean_start = std::chrono::steady_clock::now();
  MustRun(clean, RunArgs());
  // Random kills land within a clean run's duration, however fast the machine is.
  const auto clean_ms = std::max<int64_t>(
      20, std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - clean_start).count());
  const std::vector<std::string> expected = DataSummary(clean);
  ASSERT_EQ(expected.size(), 81u);

  ScratchProject project("backfill");
  std::mt19937 random(20261205);
  const std::vector<std::string> pause_points = {"after_write_before_commit", "backfill_chunk_started",
                                                 "backfill_chunk_finished"};
  std::string id;
  int kills = 0;
  bool finished = false;
  for (int attempt = 0; attempt < 14 && !finished; ++attempt) {
    if (id.empty()) {
      json listed = BackfillsJson(project);
      if (!listed.empty()) id = listed[0]["backfill_id"];
    }
    std::vector<std::string> args = id.empty() ? RunArgs({"--max-concurrent-runs", "2"})
                                               : std::vector<std::string>{"backfills", "resume", id};
    std::map<std::string, std::string> env;
    const std::string marker = (project.root() / ("paused_" + std::to_string(attempt))).string();
    const int how = static_cast<int>(random() % 5);  // 0..2: a pause point; 3, 4: a random delay
    if (how < 3) {
      env = {{"SLUICE_TEST_PAUSE_AT", pause_points[static_cast<size_t>(how)]}, {"SLUICE_TEST_PAUSE_MARKER", marker}};
    }
    // Early in a run: a resume has less to do than the clean run did.
    const auto delay = std::chrono::milliseconds(5 + random() % static_cast<uint64_t>(clean_ms / 4 + 1));
    pid_t pid = project.Start(args, env, "attempt_" + std::to_string(attempt));
    if (how < 3) {
      // The process may finish without reaching the point (nothing left that passes it).
      for (int i = 0; i < 3000 && !std::filesystem::exists(marker); ++i) {
        if (::kill(pid, 0) != 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    } else {
      std::this_thread::sleep_for(delay);
    }
    ::kill(pid, SIGKILL);
    int exit_code = WaitFor(pid);
    if (exit_code == 128 + SIGKILL) {
      ++kills;
    } else {
      std::string out = project.Read("../attempt_" + std::to_string(attempt) + ".out");
      ASSERT_EQ(exit_code, 0) << out << project.Read("../attempt_" + std::to_string(attempt) + ".err");
      finished = true;
    }
  }
  EXPECT_GE(kills, 5);
  if (id.empty()) id = BackfillsJson(project)[0]["backfill_id"];
  // Whatever is left runs to the end.
  if (!finished) {
    ProcessResult last = project.Run({"backfills", "resume", id});
    ASSERT_EQ(last.exit_code, 0) << last.out << last.err;
  }
  json shown = json::parse(MustRun(project, {"backfills", "show", id, "--json"}).out);
  EXPECT_EQ(shown["status"], "COMPLETED_SUCCESS");
  EXPECT_EQ(DataSummary(project), expected);

  // Every (asset, day) of the partitioned models was written exactly once by the backfill's runs.
  std::set<std::string> runs;
  for (const json& run : shown["runs"]) runs.insert(run["run_id"].get<std::string>());
  std::map<std::string, int> writes;
  for (const std::string& row : Rows(project,
                                     "SELECT asset, run_id, CAST(d AS VARCHAR) FROM _sluice.ledger, "
                                     "range(window_start, window_end, INTERVAL 1 DAY) AS t(d) "
                                     "WHERE window_start IS NOT NULL")) {
    std::string run_id = row.substr(row.find('|') + 1);
    run_id = run_id.substr(0, run_id.find('|'));
    ASSERT_TRUE(runs.count(run_id)) << row;
    ++writes[row.substr(0, row.find('|')) + " " + row.substr(row.rfind('|') + 1, 10)];
  }
  EXPECT_EQ(writes.size(), 80u);
  for (const auto& [partition, count] : writes) EXPECT_EQ(count, 1) << partition;
  EXPECT_EQ(One(project, "SELECT count(*) FROM _sluice.ledger WHERE asset = 'daily.event_totals'"), "1");
}

}  // namespace
}  // namespace sluice::testing
