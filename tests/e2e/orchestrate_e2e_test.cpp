// End-to-end tests of the orchestrator: `sluice daemon` on a scratch copy of examples/starbake, with the Starlake CLI
// replaced by the test double (tests/support/starlake_double.cpp) and the clock started with --now. They cover the
// path from a schedule tick to the load's materializations and from the KPI sensor to the transforms, restarts
// without duplicate runs, missed ticks, one active daemon per store, SIGTERM, and kill -9 at named pause points.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

constexpr const char* kBeforeMidnight = "2026-07-17T23:59:59Z";
constexpr const char* kAfterMidnight = "2026-07-18T00:00:02Z";

// examples/starbake with its DAG modules imported into pipelines/, pointing at the test double.
class Starbake {
 public:
  Starbake() : project_("examples/starbake") {
    for (const char* dag : {"dags/starbake_load.py", "dags/starbake_kpi.py"}) {
      std::string text = project_.Read(dag);
      Replace(text, "@STARLAKE@", STARLAKE_DOUBLE);
      Replace(text, "@SL_ROOT@", (project_.root() / "starlake").string());
      project_.Write(dag, text);
      ProcessResult imported = project_.Run({"starlake", "import", (project_.root() / dag).string(), "--output",
                                             (project_.root() / "pipelines").string()});
      EXPECT_EQ(imported.exit_code, 0) << imported.out << imported.err;
    }
  }

  const ScratchProject& project() const { return project_; }
  std::string log() const { return (project_.root() / "starlake_calls.jsonl").string(); }
  std::map<std::string, std::string> Env(const std::map<std::string, std::string>& extra = {}) const {
    std::map<std::string, std::string> env{{"STARLAKE_DOUBLE_LOG", log()}};
    env.insert(extra.begin(), extra.end());
    return env;
  }

  ProcessResult Daemon(const std::string& now, const std::string& until,
                       const std::map<std::string, std::string>& extra = {}) const {
    return project_.Run({"daemon", "--now", now, "--until", until, "--interval", "100", "--sensor-interval", "0"},
                        Env(extra));
  }

  // The verbs the double was called with, in order.
  std::vector<std::string> Calls() const {
    std::vector<std::string> verbs;
    std::ifstream in(log());
    for (std::string line; std::getline(in, line);) verbs.push_back(json::parse(line)["argv"][0]);
    return verbs;
  }

  json Runs() const {
    ProcessResult listed = project_.Run({"runs", "--json"});
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    return json::parse(listed.out)["runs"];
  }

  void WriteScript(const std::string& script) const { project_.Write("double_script.txt", script); }
  std::string script() const { return (project_.root() / "double_script.txt").string(); }

 private:
  static void Replace(std::string& text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
  }

  ScratchProject project_;
};

int CountRunsOfJob(const json& runs, const std::string& job) {
  int count = 0;
  for (const json& run : runs) count += run["selection"] == job ? 1 : 0;
  return count;
}

const json* RunOfJob(const json& runs, const std::string& job) {
  for (const json& run : runs) {
    if (run["selection"] == job) return &run;
  }
  return nullptr;
}

TEST(OrchestrateE2E, TheDaemonTakesStarbakeFromTheMidnightTickToTheKpiMaterializations) {
  Starbake starbake;
  ProcessResult daemon = starbake.Daemon(kBeforeMidnight, kAfterMidnight);
  ASSERT_EQ(daemon.exit_code, 0) << daemon.err;
  EXPECT_TRUE(Has(daemon.err, "daemon stopped")) << daemon.err;

  EXPECT_EQ(starbake.Calls(),
            (std::vector<std::string>{"preload", "stage", "load", "load", "load", "transform", "transform"}));
  const json runs = starbake.Runs();
  ASSERT_EQ(runs.size(), 2u) << runs.dump(2);
  for (const json& run : runs) EXPECT_EQ(run["status"], "SUCCESS") << run.dump(2);
  EXPECT_EQ(CountRunsOfJob(runs, "starbake_load"), 1);
  EXPECT_EQ(CountRunsOfJob(runs, "starbake_kpi"), 1);

  // The KPI run came from the sensor, with the load's logical datetime.
  ProcessResult sensor = starbake.project().Run({"sensors", "show", "starbake_kpi_sensor", "-n", "1000", "--json"});
  ASSERT_EQ(sensor.exit_code, 0) << sensor.err;
  const json shown = json::parse(sensor.out);
  bool requested = false;
  for (const json& tick : shown["ticks"]) requested |= tick["status"] == "SUCCESS";
  // (the sensor was evaluated every pass: -n 1000 reaches back to its request)
  EXPECT_TRUE(requested) << shown.dump(2);
  EXPECT_EQ(shown["datasets"][0]["latest_materialization"]["partition"], "2026-07-18T00.00.00_0000");
  // Each dataset names the asset (`domain.table`) its URI was made from.
  for (const json& dataset : shown["datasets"]) {
    ASSERT_TRUE(dataset["asset"].is_string()) << dataset.dump();
    std::string uri = dataset["asset"].get<std::string>();
    std::replace(uri.begin(), uri.end(), '.', '_');
    EXPECT_EQ(uri, dataset["uri"]) << dataset.dump();
  }

  ProcessResult schedules = starbake.project().Run({"schedules", "list", "--json"});
  ASSERT_EQ(schedules.exit_code, 0) << schedules.err;
  const json schedule = json::parse(schedules.out)["schedules"][0];
  EXPECT_EQ(schedule["name"], "starbake_load_schedule");
  EXPECT_EQ(schedule["last_tick"]["status"], "SUCCESS");
  EXPECT_EQ(schedule["last_tick"]["tick_time"], "2026-07-18T00:00:00.000Z");

  // The runs are ordinary runs: their log holds the steps and the CLI's output.
  const json* kpi = RunOfJob(runs, "starbake_kpi");
  ASSERT_NE(kpi, nullptr);
  ProcessResult logs = starbake.project().Run({"logs", (*kpi)["run_id"]});
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_TRUE(Has(logs.out, "kpi_order_summary_task")) << logs.out;
  EXPECT_TRUE(Has(logs.out, "sl_data_interval_end='2026-07-18T00:00:00+0000'")) << logs.out;
}

TEST(OrchestrateE2E, ARestartedDaemonLaunchesNothingTwice) {
  Starbake starbake;
  ASSERT_EQ(starbake.Daemon(kBeforeMidnight, kAfterMidnight).exit_code, 0);
  const size_t calls = starbake.Calls().size();
  ProcessResult again = starbake.Daemon(kBeforeMidnight, kAfterMidnight);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(starbake.Runs().size(), 2u);
  EXPECT_EQ(starbake.Calls().size(), calls);
}

TEST(OrchestrateE2E, ASensorSeesMaterializationsRecordedWhileNoDaemonRan) {
  Starbake starbake;
  ProcessResult load = starbake.project().Run(
      {"starlake", "run", "starbake_load", "--logical-datetime", "2026-07-18T00:00:00Z"}, starbake.Env());
  ASSERT_EQ(load.exit_code, 0) << load.err;
  ProcessResult stopped = starbake.project().Run({"schedules", "stop", "starbake_load_schedule"});
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  ProcessResult daemon = starbake.Daemon("2026-07-18T10:00:00Z", "2026-07-18T10:00:02Z");
  ASSERT_EQ(daemon.exit_code, 0) << daemon.err;
  const json runs = starbake.Runs();
  ASSERT_EQ(CountRunsOfJob(runs, "starbake_kpi"), 1) << runs.dump(2);
  const json* kpi = RunOfJob(runs, "starbake_kpi");
  EXPECT_EQ((*kpi)["status"], "SUCCESS");
  EXPECT_EQ((*kpi)["tags"]["logical_datetime"], "2026-07-18T00:00:00+0000");
  EXPECT_EQ((*kpi)["tags"]["sluice/trigger"], "starbake_kpi_sensor");
}

TEST(OrchestrateE2E, TicksMissedWhileNoDaemonRanAreRecordedAsSkippedAndOnlyTheLatestFires) {
  Starbake starbake;
  ASSERT_EQ(starbake.Daemon(kBeforeMidnight, kAfterMidnight).exit_code, 0);
  ProcessResult later = starbake.Daemon("2026-07-21T00:00:30Z", "2026-07-21T00:00:34Z");
  ASSERT_EQ(later.exit_code, 0) << later.err;
  const json runs = starbake.Runs();
  EXPECT_EQ(CountRunsOfJob(runs, "starbake_load"), 2) << runs.dump(2);

  ProcessResult schedules = starbake.project().Run({"schedules", "list", "--json"});
  ASSERT_EQ(schedules.exit_code, 0) << schedules.err;
  const json last = json::parse(schedules.out)["schedules"][0]["last_tick"];
  EXPECT_EQ(last["tick_time"], "2026-07-21T00:00:00.000Z") << last.dump();
  EXPECT_EQ(last["status"], "SUCCESS");
}

TEST(OrchestrateE2E, AStoppedScheduleDoesNotFire) {
  Starbake starbake;
  ProcessResult stopped = starbake.project().Run({"schedules", "stop", "starbake_load_schedule"});
  ASSERT_EQ(stopped.exit_code, 0) << stopped.err;
  ASSERT_EQ(starbake.Daemon(kBeforeMidnight, kAfterMidnight).exit_code, 0);
  EXPECT_TRUE(starbake.Runs().empty());
  ProcessResult listed = starbake.project().Run({"schedules", "list"});
  EXPECT_TRUE(Has(listed.out, "STOPPED")) << listed.out;

  ProcessResult unknown = starbake.project().Run({"schedules", "start", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Has(unknown.err, "starbake_load_schedule")) << unknown.err;
}

TEST(OrchestrateE2E, SchedulesPreviewShowsTheNextTicksAndTheirIntervals) {
  Starbake starbake;
  ProcessResult preview = starbake.project().Run(
      {"schedules", "preview", "starbake_load_schedule", "-n", "2", "--json"}, {{"SLUICE_NOW", kBeforeMidnight}});
  ASSERT_EQ(preview.exit_code, 0) << preview.err;
  const json ticks = json::parse(preview.out)["ticks"];
  ASSERT_EQ(ticks.size(), 2u);
  EXPECT_EQ(ticks[0]["tick"], "2026-07-18T00:00:00.000Z");
  EXPECT_EQ(ticks[0]["previous_logical_datetime"], "2026-07-17T00:00:00+0000");
  EXPECT_EQ(ticks[0]["closed_day"], "2026-07-17");
  EXPECT_EQ(ticks[1]["tick"], "2026-07-19T00:00:00.000Z");
}

TEST(OrchestrateE2E, ASecondDaemonExitsOrWaitsWhileTheFirstIsActive) {
  Starbake starbake;
  const pid_t first =
      starbake.project().Start({"daemon", "--now", kBeforeMidnight, "--interval", "100"}, starbake.Env(), "first");
  ASSERT_TRUE(WaitForFile(starbake.project().root() / ".sluice" / "state.db", 20));
  // Wait until the first holds the lease: the second then reports it.
  ProcessResult second;
  for (int i = 0; i < 100; ++i) {
    second = starbake.Daemon(kBeforeMidnight, kAfterMidnight);
    if (second.exit_code == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(second.exit_code, 1) << second.err;
  EXPECT_TRUE(Has(second.err, "another daemon (pid " + std::to_string(first))) << second.err;
  EXPECT_TRUE(Has(second.err, "--wait")) << second.err;

  const pid_t waiting = starbake.project().Start(
      {"daemon", "--wait", "--now", kBeforeMidnight, "--until", kAfterMidnight, "--interval", "100"}, starbake.Env(),
      "waiting");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_EQ(kill(first, SIGTERM), 0);
  EXPECT_EQ(WaitFor(first), 0);
  EXPECT_EQ(WaitFor(waiting), 0);
  std::ifstream waited(starbake.project().root().parent_path() / "waiting.err");
  std::stringstream text;
  text << waited.rdbuf();
  EXPECT_TRUE(Has(text.str(), "waiting for it to stop")) << text.str();
  EXPECT_TRUE(Has(text.str(), "daemon started")) << text.str();
}

TEST(OrchestrateE2E, SigtermLetsTheStepsInFlightFinishAndCancelsTheRest) {
  Starbake starbake;
  starbake.WriteScript("load sleep_ms=1500\n");
  const pid_t daemon =
      starbake.project().Start({"daemon", "--now", kBeforeMidnight, "--interval", "100"},
                               starbake.Env({{"STARLAKE_DOUBLE_SCRIPT", starbake.script()}}), "daemon");
  // The double records a call as it starts: the preload, the stage and the three loads, sleeping.
  for (int i = 0; i < 200 && starbake.Calls().size() < 5; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(starbake.Calls().size(), 5u);
  ASSERT_EQ(kill(daemon, SIGTERM), 0);
  EXPECT_EQ(WaitFor(daemon), 0) << starbake.project().Read("../daemon.err");
  const json runs = starbake.Runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0]["status"], "CANCELED") << runs.dump(2);
  EXPECT_EQ(starbake.Calls().size(), 5u) << "the three loads in flight (run in parallel) finished";
  ProcessResult logs = starbake.project().Run({"logs", runs[0]["run_id"], "--json"});
  int materialized = 0;
  std::vector<std::string> skipped;
  const json events = json::parse(logs.out)["events"];
  for (const json& event : events) {
    materialized += event["kind"] == "materialization" ? 1 : 0;
    if (event["kind"] == "step_skipped") skipped.push_back(event["payload"]["asset"]);
  }
  EXPECT_EQ(materialized, 3) << "each load in flight recorded its dataset\n" << logs.out;
  EXPECT_EQ(skipped, std::vector<std::string>{"end"}) << "the pipeline's end did not run after SIGTERM";
}

// kill -9 at each named pause point, then a restart: the tick's run exists once, a run the dead daemon was executing
// is marked failed, and nothing fires twice.
class KillDaemonE2E : public ::testing::TestWithParam<const char*> {};

TEST_P(KillDaemonE2E, ARestartAfterKill9FiresNothingTwice) {
  Starbake starbake;
  const fs::path marker = starbake.project().root() / "paused";
  const pid_t daemon = starbake.project().Start(
      {"daemon", "--now", kBeforeMidnight, "--interval", "100"},
      starbake.Env({{"SLUICE_TEST_PAUSE_AT", GetParam()}, {"SLUICE_TEST_PAUSE_MARKER", marker.string()}}), "killed");
  ASSERT_TRUE(WaitForFile(marker, 60)) << GetParam();
  ASSERT_EQ(kill(daemon, SIGKILL), 0);
  WaitFor(daemon);

  ProcessResult restarted = starbake.Daemon(kBeforeMidnight, kAfterMidnight);
  ASSERT_EQ(restarted.exit_code, 0) << restarted.err;
  const json runs = starbake.Runs();
  EXPECT_EQ(CountRunsOfJob(runs, "starbake_load"), 1) << runs.dump(2);
  const json* load = RunOfJob(runs, "starbake_load");
  ASSERT_NE(load, nullptr);
  if (std::string(GetParam()) == "job_step_started") {
    EXPECT_EQ((*load)["status"], "FAILURE") << "the run the killed daemon was executing";
    EXPECT_TRUE(Has((*load)["error"], "died")) << load->dump(2);
  } else {
    EXPECT_EQ((*load)["status"], "SUCCESS") << "the restarted daemon created and ran the tick's one run";
  }
  ProcessResult ticks = starbake.project().Run({"schedules", "list", "--json"});
  EXPECT_EQ(json::parse(ticks.out)["schedules"][0]["last_tick"]["run_ids"][0], (*load)["run_id"]);
}

INSTANTIATE_TEST_SUITE_P(PausePoints, KillDaemonE2E,
                         ::testing::Values("daemon_after_run_key_before_run", "daemon_after_run_before_tick",
                                           "job_step_started"));

TEST(OrchestrateE2E, BadOptionsInAPipelineFileAreReportedBeforeAnythingRuns) {
  Starbake starbake;
  const std::string original = starbake.project().Read("pipelines/starbake_kpi.yml");
  std::string text = original;
  text.insert(text.find("options:\n") + 9, "  pre_load_sensor: maybe\n");
  starbake.project().Write("pipelines/starbake_kpi.yml", text);
  ProcessResult validate =
      starbake.project().Run({"pipelines", "validate", (starbake.project().root() / "pipelines").string()});
  EXPECT_EQ(validate.exit_code, 1);
  EXPECT_TRUE(Has(validate.err, "starbake_kpi.yml:4:20: error[SLU-PIPELINE-007]")) << validate.err;
  ProcessResult daemon = starbake.Daemon(kBeforeMidnight, kAfterMidnight);
  EXPECT_EQ(daemon.exit_code, 1);
  EXPECT_TRUE(Has(daemon.err, "SLU-PIPELINE-007")) << daemon.err;

  // A sentinel on a scheme the local executor cannot reach.
  text = original;
  text.insert(text.find("options:\n") + 9, "  pre_load_not_ready_sentinel_path: gs://bucket/sentinels\n");
  starbake.project().Write("pipelines/starbake_kpi.yml", text);
  ProcessResult listed = starbake.project().Run({"schedules", "list"});
  EXPECT_EQ(listed.exit_code, 1);
  EXPECT_TRUE(Has(listed.err, "SLU-PRELOAD-003")) << listed.err;
  EXPECT_TRUE(Has(listed.err, "starbake_kpi.yml")) << listed.err;
  EXPECT_TRUE(starbake.Runs().empty());
}

TEST(OrchestrateE2E, StarlakeRunRunsAJobNowWithItsRunConfig) {
  Starbake starbake;
  ProcessResult dry = starbake.project().Run(
      {"starlake", "run", "starbake_kpi", "--dry-run", "--logical-datetime", "2026-07-18", "--json"}, starbake.Env());
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_EQ(json::parse(dry.out)["status"], "SUCCESS");
  EXPECT_TRUE(starbake.Calls().empty()) << "a dry run executes nothing";

  ProcessResult run = starbake.project().Run(
      {"starlake", "run", "starbake_kpi", "--logical-datetime", "2026-07-18T00:00:00+00:00",
       "--previous-logical-datetime", "2026-07-17", "--sl-options", R"({"all": {"SL_LOG_LEVEL": "debug"}})"},
      starbake.Env());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::ifstream in(starbake.log());
  std::string first;
  std::getline(in, first);
  const json call = json::parse(first);
  EXPECT_EQ(call["argv"][2], "2026-07-18T00:00:00+0000");
  EXPECT_TRUE(Has(call["argv"].back(), "sl_data_interval_start='2026-07-17T00:00:00+0000'")) << call.dump();
  EXPECT_TRUE(Has(call["argv"].back(), "SL_LOG_LEVEL=debug")) << call.dump();

  ProcessResult bad = starbake.project().Run({"starlake", "run", "starbake_kpi", "--sl-options", "[1]"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  ProcessResult unknown = starbake.project().Run({"starlake", "run", "nope"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(Has(unknown.err, "starbake_kpi")) << unknown.err;
}

}  // namespace
}  // namespace sluice::testing
