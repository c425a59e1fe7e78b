// One run of a Starlake job against a real SQLite state store, with the CLI replaced by a scripted process runner and
// time by a manual clock: argument vectors, skip and failure propagation, pre-load gating with and without the
// sentinel, poke timing, retries, run config, dry runs and materializations.
#include "orchestrate/starlake_job_run.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "core/logical_datetime.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/orchestrate_test_support.hpp"
#include "orchestrate/starlake_dag_file.hpp"
#include "state/sqlite/sqlite_state_store.hpp"
#include "state/state_test_support.hpp"

namespace sluice::orchestrate {
namespace {

using std::chrono::system_clock;

// The CLI as a script: each invocation pops the next exit code (0 when the script is empty) and may run an action
// (e.g. touch the not-ready marker) before returning.
struct ScriptedProcesses {
  struct Step {
    int exit_code = 0;
    std::function<void(const ExecutorInvocation&)> action;
    std::vector<std::string> output;
  };
  std::deque<Step> script;
  std::vector<ExecutorInvocation> invocations;

  std::mutex mutex;  // tasks may run on several threads

  ProcessRunner Runner() {
    return [this](const ExecutorInvocation& invocation, const std::function<void(std::string_view)>& on_line,
                  const std::atomic<bool>*) {
      Step step;
      {
        std::lock_guard lock(mutex);
        invocations.push_back(invocation);
        if (!script.empty()) {
          step = script.front();
          script.pop_front();
        }
      }
      if (step.action) step.action(invocation);
      for (const std::string& line : step.output) on_line(line);
      return ProcessOutcome{step.exit_code, false, 0, false};
    };
  }

  std::vector<std::string> Verbs() const {
    std::vector<std::string> verbs;
    for (const ExecutorInvocation& invocation : invocations) verbs.push_back(invocation.arguments.front());
    return verbs;
  }
};

const system_clock::time_point kLogical = ParseLogicalDatetime("2026-07-18T00:00:00+00:00");

constexpr const char* kLoadDag = R"py(
options = {'sl_env_var': '{"SL_ROOT": "/p", "SL_ENV": "DUCKDB"}', 'pre_load_strategy': 'imported',
           'SL_STARLAKE_PATH': '/opt/starlake/starlake.sh', 'retry_delay': '10'}
schedules = [{'schedule': 'None', 'cron': '0 0 * * *', 'domains': [{'name': 'starbake', 'final_name': 'starbake',
  'tables': [{'name': 'orders', 'final_name': 'orders'}, {'name': 'customers', 'final_name': 'customers'}]}]}]
)py";

constexpr const char* kTransformDag = R"py(
options = {'sl_env_var': '{"SL_ROOT": "/p"}', 'retries': '0'}
cron = "None"
dependencies = StarlakeDependencies(dependencies="""[
  {"data": {"name": "kpi.order_summary", "typ": "task", "sink": "kpi.order_summary"},
   "children": [{"data": {"name": "starbake.orders", "typ": "table", "cron": "0 0 * * *"}}]}
]""")
)py";

class JobRunTest : public testing::Test {
 protected:
  JobRunTest() : store_(SqliteStateStore::Open(scratch_.path() / "state.db")), clock_(kLogical) {}

  RunnableJob Job(const std::string& file_name, const std::string& text,
                  const std::map<std::string, nlohmann::json>& extra_options = {}) {
    StarlakeDagFile file = ParseStarlakeDagFile(file_name, text);
    file.options["max_parallel_tasks"] = "1";  // one task at a time, so the order of calls is the test's
    for (const auto& [key, value] : extra_options) file.options[key] = value;
    file.resolved = std::get<StarlakeDagOptions>(ResolveStarlakeOptions(file.options));
    const EnvironmentLookup no_environment = [](const std::string&) { return std::nullopt; };
    RunnableJob job{BuildStarlakeJobGraph(file).jobs.front(), file.options,
                    ResolveJobOptions(file.options, no_environment),
                    ResolveExecutorSettings(file.options, no_environment)};
    return job;
  }

  JobRunOutcome Run(const RunnableJob& job, const JobRunConfig& config = {}) {
    RunRecord run;
    run.run_id = "r1";
    run.selection = job.job.name;
    run.job = job.job.name;
    run.created_at = FormatUtc(clock_.Now());
    store_->CreateRun(run);
    JobRunContext context;
    context.store = store_.get();
    context.clock = &clock_;
    context.wait = [this](std::chrono::milliseconds duration) {
      waits_.push_back(duration);
      clock_.Advance(duration);
      return !cancel_.load();
    };
    context.run_process = processes_.Runner();
    context.cancel = &cancel_;
    context.seed = 7;
    JobRunConfig with_logical = config;
    if (!with_logical.logical_datetime) with_logical.logical_datetime = kLogical;
    return RunStarlakeJob(job, "r1", with_logical, context);
  }

  std::vector<std::string> Skipped() {
    std::vector<std::string> skipped;
    for (const StoredEvent& stored : store_->EventsForRun("r1")) {
      if (const auto* event = std::get_if<StepSkippedEvent>(&stored.event)) skipped.push_back(event->asset);
    }
    return skipped;
  }

  std::vector<std::string> Materialized() {
    std::vector<std::string> assets;
    for (const StoredEvent& stored : store_->EventsForRun("r1")) {
      if (const auto* event = std::get_if<MaterializationEvent>(&stored.event)) assets.push_back(event->asset);
    }
    return assets;
  }

  std::string Notes() {
    std::string notes;
    for (const StoredEvent& stored : store_->EventsForRun("r1")) {
      if (const auto* event = std::get_if<StepNoteEvent>(&stored.event)) notes += event->note + "\n";
    }
    return notes;
  }

  ScratchDirectory scratch_;
  std::unique_ptr<SqliteStateStore> store_;
  ManualClock clock_;
  ScriptedProcesses processes_;
  std::vector<std::chrono::milliseconds> waits_;
  std::atomic<bool> cancel_{false};
};

TEST_F(JobRunTest, ALoadJobRunsEveryStepWithTheExactArgumentVectorsAndMaterializesItsDatasets) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag);
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kSuccess) << outcome.error;
  ASSERT_EQ(processes_.Verbs(), (std::vector<std::string>{"preload", "stage", "load", "load"}));
  const ExecutorInvocation& preload = processes_.invocations[0];
  EXPECT_EQ(preload.program, "/opt/starlake/starlake.sh");
  EXPECT_EQ(preload.cwd, std::optional<std::string>("/p"));
  EXPECT_EQ(preload.arguments,
            (std::vector<std::string>{"preload", "--domain", "starbake", "--tables", "orders,customers", "--strategy",
                                      "imported", "--options",
                                      "SL_ROOT=/p,SL_ENV=DUCKDB,SL_RUN_MODE=main,SL_LOG_LEVEL=info"}));
  EXPECT_EQ(processes_.invocations[2].arguments,
            (std::vector<std::string>{"load", "--scheduledDate", "2026-07-18T00:00:00+0000", "--domains", "starbake",
                                      "--tables", "orders", "--options", "SL_ROOT=/p,SL_ENV=DUCKDB"}));
  EXPECT_EQ(Materialized(), (std::vector<std::string>{"starbake_orders", "starbake_customers", "starbake_load"}));

  std::optional<AssetMaterializationRecord> orders = store_->LatestAssetMaterialization("starbake_orders", 0);
  ASSERT_TRUE(orders);
  EXPECT_EQ(orders->run_id, "r1");
  EXPECT_EQ(orders->partition, QuoteDatetime("2026-07-18T00:00:00+0000"));
  EXPECT_EQ(orders->metadata["sl_uri"], "starbake_orders");
  EXPECT_EQ(orders->metadata["asset"], "starbake.orders");
  EXPECT_EQ(orders->metadata["sl_cron"], "0 0 * * *");
  EXPECT_EQ(orders->metadata["sl_scheduled_date"], "2026-07-18T00:00:00+0000");
  EXPECT_EQ(orders->metadata["sl_dry_run"], false);
}

TEST_F(JobRunTest, ANotReadyPreloadSkipsTheDomainButStillRecordsThePipelineEnd) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag);
  processes_.script.push_back({1, nullptr, {"nothing to load"}});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kSuccess);
  EXPECT_EQ(processes_.Verbs(), (std::vector<std::string>{"preload"}));
  const std::vector<std::string> skipped = Skipped();
  EXPECT_EQ(skipped.size(), 4u);  // the preload itself, the stage and both loads
  EXPECT_EQ(Materialized(), (std::vector<std::string>{"starbake_load"}));
  EXPECT_NE(Notes().find("nothing to load"), std::string::npos) << "the CLI's output is kept in the run's log";
}

TEST_F(JobRunTest, WithTheSentinelAMarkerIsConsumedAndSkipsAndACrashFailsTheRun) {
  const std::filesystem::path sentinels = scratch_.path() / "sentinels";
  const RunnableJob job = Job("starbake_load.py", kLoadDag, {{"pre_load_not_ready_sentinel_path", sentinels.string()}});
  std::filesystem::path marker;
  processes_.script.push_back({0, [&](const ExecutorInvocation& invocation) {
                                 const auto& args = invocation.arguments;
                                 auto flag = std::find(args.begin(), args.end(), "--notReadySentinel");
                                 ASSERT_NE(flag, args.end());
                                 marker = *(flag + 1);
                                 std::filesystem::create_directories(marker.parent_path());
                                 std::ofstream(marker).flush();
                               }});
  EXPECT_EQ(Run(job).status, RunStatus::kSuccess);
  EXPECT_EQ(marker, sentinels / "starbake" /
                        (SentinelScope("starbake_load", "check_starbake_incoming_files", "r1") + ".notready"));
  EXPECT_FALSE(std::filesystem::exists(marker)) << "consumed before the verdict";
  EXPECT_EQ(processes_.Verbs(), (std::vector<std::string>{"preload"}));
  EXPECT_EQ(Materialized(), (std::vector<std::string>{"starbake_load"}));
}

TEST_F(JobRunTest, WithTheSentinelAFailingPreloadFailsAndNothingBehindItRuns) {
  const RunnableJob job =
      Job("starbake_load.py", kLoadDag, {{"pre_load_not_ready_sentinel_path", (scratch_.path() / "s").string()}});
  processes_.script.push_back({2, nullptr, {}});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kFailure);
  EXPECT_NE(outcome.error.find("preload exited with 2"), std::string::npos) << outcome.error;
  EXPECT_TRUE(Materialized().empty()) << "a failure does not record the pipeline's end";
}

TEST_F(JobRunTest, ASentinelTheExecutorCannotReachFailsTheStepNotTheProcess) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag, {{"pre_load_not_ready_sentinel_path", "gs://bucket/s"}});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kFailure);
  EXPECT_NE(outcome.error.find("gs://"), std::string::npos) << outcome.error;
  EXPECT_TRUE(processes_.invocations.empty());
}

TEST_F(JobRunTest, PokeModePokesAtTheIntervalUntilTheTimeoutThenFailsOrSoftFails) {
  const RunnableJob hard =
      Job("starbake_load.py", kLoadDag,
          {{"pre_load_sensor", "true"}, {"pre_load_poke_interval", "42"}, {"pre_load_timeout", "120"}});
  for (int i = 0; i < 5; ++i) processes_.script.push_back({1, nullptr, {}});
  const JobRunOutcome outcome = Run(hard);
  EXPECT_EQ(outcome.status, RunStatus::kFailure);
  EXPECT_NE(outcome.error.find("timed out waiting for files after 120s"), std::string::npos) << outcome.error;
  EXPECT_EQ(processes_.Verbs(), (std::vector<std::string>{"preload", "preload", "preload"})) << "pokes at 0, 42, 84";
  EXPECT_EQ(waits_, (std::vector<std::chrono::milliseconds>{std::chrono::seconds(42), std::chrono::seconds(42)}));
}

TEST_F(JobRunTest, PokeModeWithSoftFailSkipsTheLoadsOnTimeoutAndProceedsWhenReady) {
  const RunnableJob soft = Job("starbake_load.py", kLoadDag,
                               {{"pre_load_sensor", "true"},
                                {"pre_load_poke_interval", "42"},
                                {"pre_load_timeout", "120"},
                                {"pre_load_sensor_soft_fail", "true"}});
  processes_.script.push_back({1, nullptr, {}});
  processes_.script.push_back({0, nullptr, {}});  // ready at the second poke
  EXPECT_EQ(Run(soft).status, RunStatus::kSuccess);
  EXPECT_EQ(processes_.Verbs(), (std::vector<std::string>{"preload", "preload", "stage", "load", "load"}));
}

TEST_F(JobRunTest, AFailedStepIsRetriedWithTheSameCommandAfterTheDelay) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag, {{"retries", "2"}, {"pre_load_strategy", "none"}});
  processes_.script.push_back({3, nullptr, {}});
  processes_.script.push_back({3, nullptr, {}});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kSuccess) << outcome.error;
  ASSERT_EQ(processes_.Verbs(), (std::vector<std::string>{"load", "load", "load", "load"}));
  EXPECT_EQ(processes_.invocations[0], processes_.invocations[1]);
  EXPECT_EQ(processes_.invocations[1], processes_.invocations[2]);
  EXPECT_EQ(waits_, (std::vector<std::chrono::milliseconds>{std::chrono::seconds(10), std::chrono::seconds(10)}));
}

TEST_F(JobRunTest, ADomainsTablesLoadInParallel) {
  const RunnableJob job =
      Job("starbake_load.py", kLoadDag, {{"max_parallel_tasks", "4"}, {"pre_load_strategy", "none"}});
  std::mutex mutex;
  std::condition_variable changed;
  int in_flight = 0;
  int most = 0;
  for (int i = 0; i < 2; ++i) {
    processes_.script.push_back({0, [&](const ExecutorInvocation&) {
                                   std::unique_lock lock(mutex);
                                   most = std::max(most, ++in_flight);
                                   changed.notify_all();
                                   // Hold the load until the other one is in flight too (or give up after 5 s).
                                   changed.wait_for(lock, std::chrono::seconds(5), [&] { return most == 2; });
                                   --in_flight;
                                 }});
  }
  EXPECT_EQ(Run(job).status, RunStatus::kSuccess);
  EXPECT_EQ(most, 2) << "both loads ran at once";
  EXPECT_EQ(Materialized().size(), 3u);
}

TEST_F(JobRunTest, ExponentialBackoffDoublesTheDelayUpToItsCap) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag,
                              {{"retries", "3"},
                               {"pre_load_strategy", "none"},
                               {"retry_exponential_backoff", "true"},
                               {"retry_max_delay", "25"}});
  for (int i = 0; i < 3; ++i) processes_.script.push_back({1, nullptr, {}});
  EXPECT_EQ(Run(job).status, RunStatus::kSuccess);
  EXPECT_EQ(waits_, (std::vector<std::chrono::milliseconds>{std::chrono::seconds(10), std::chrono::seconds(20),
                                                            std::chrono::seconds(25)}));
}

TEST_F(JobRunTest, AStepThatKeepsFailingFailsTheRunAndBlocksTheEnd) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag, {{"retries", "1"}, {"pre_load_strategy", "none"}});
  for (int i = 0; i < 4; ++i) processes_.script.push_back({5, nullptr, {}});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kFailure);
  EXPECT_NE(outcome.error.find("exited with 5 after 2 attempts"), std::string::npos) << outcome.error;
  const std::vector<std::string> skipped = Skipped();
  EXPECT_NE(std::find(skipped.begin(), skipped.end(), "end"), skipped.end());
}

TEST_F(JobRunTest, ATransformGetsItsIntervalAndTheRunsSlOptions) {
  const RunnableJob job = Job("kpi.py", kTransformDag);
  JobRunConfig config;
  config.previous_logical_datetime = ParseLogicalDatetime("2026-07-17T00:00:00+00:00");
  config.sl_options = {{"all", {{"k", "v"}}}, {"kpi.order_summary", {{"k", "w"}, {"x", "1"}}}};
  EXPECT_EQ(Run(job, config).status, RunStatus::kSuccess);
  ASSERT_EQ(processes_.invocations.size(), 1u);
  EXPECT_EQ(processes_.invocations[0].arguments,
            (std::vector<std::string>{
                "transform", "--scheduledDate", "2026-07-18T00:00:00+0000", "--name", "kpi.order_summary", "--options",
                "SL_ROOT=/p,sl_data_interval_start='2026-07-17T00:00:00+0000',sl_data_interval_end='2026-07-18T00:00:"
                "00+0000',k=w,x=1"}));
  std::optional<AssetMaterializationRecord> summary = store_->LatestAssetMaterialization("kpi_order_summary", 0);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->metadata["sl_options"], config.sl_options);
  EXPECT_EQ(summary->metadata["sl_data_interval_start"], "2026-07-17T00:00:00+0000");
}

TEST_F(JobRunTest, OnCloudRunTheEnvironmentGoesToTheJobNotIntoOptions) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag,
                              {{"executor", "cloud_run"},
                               {"cloud_run_job_name", "starlake"},
                               {"cloud_run_project_id", "proj"},
                               {"cloud_run_job_region", "europe-west1"},
                               {"pre_load_strategy", "none"}});
  EXPECT_EQ(Run(job).status, RunStatus::kSuccess);
  ASSERT_EQ(processes_.invocations.size(), 2u);
  const ExecutorInvocation& load = processes_.invocations[0];
  EXPECT_EQ(load.program, "/usr/local/google-cloud-sdk/bin/gcloud");
  std::string joined;
  for (const std::string& argument : load.arguments) joined += argument + "\n";
  EXPECT_NE(joined.find("--update-env-vars\n^ ^SL_ROOT=/p SL_ENV=DUCKDB\n"), std::string::npos) << joined;
  const auto args = std::find(load.arguments.begin(), load.arguments.end(), "--args");
  ASSERT_NE(args, load.arguments.end()) << joined;
  EXPECT_EQ((args + 1)->find("SL_ROOT"), std::string::npos) << *(args + 1);
}

TEST_F(JobRunTest, ADryRunExecutesNothingAndSaysSoInItsMaterializations) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag);
  JobRunConfig config;
  config.dry_run = true;
  EXPECT_EQ(Run(job, config).status, RunStatus::kSuccess);
  EXPECT_TRUE(processes_.invocations.empty());
  std::optional<AssetMaterializationRecord> orders = store_->LatestAssetMaterialization("starbake_orders", 0);
  ASSERT_TRUE(orders);
  EXPECT_EQ(orders->metadata["sl_dry_run"], true);
  EXPECT_NE(Notes().find("dry run: /opt/starlake/starlake.sh load --scheduledDate '2026-07-18T00:00:00+0000'"),
            std::string::npos)
      << Notes();
}

TEST_F(JobRunTest, AnAckPreloadWaitsForTheAcknowledgementOfTheRunsDayThenSkips) {
  const RunnableJob job =
      Job("starbake_load.py", kLoadDag,
          {{"pre_load_strategy", "ack"}, {"ack_wait_timeout", "60"}, {"pre_load_poke_interval", "30"}});
  for (int i = 0; i < 5; ++i) processes_.script.push_back({1, nullptr, {}});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kSuccess) << "no acknowledgement skips the domain";
  ASSERT_EQ(processes_.Verbs(), (std::vector<std::string>{"preload", "preload"})) << "pokes at 0 and 30";
  const std::vector<std::string>& args = processes_.invocations[0].arguments;
  auto flag = std::find(args.begin(), args.end(), "--globalAckFilePath");
  ASSERT_NE(flag, args.end());
  EXPECT_EQ(*(flag + 1), "/p/datasets/pending/starbake/2026-07-18.ack") << "the run's logical date, not today";
}

TEST_F(JobRunTest, SecretsInTheEnvironmentOptionsDoNotReachTheEventLog) {
  const RunnableJob job =
      Job("starbake_load.py", kLoadDag,
          {{"sl_env_var", R"({"SL_ROOT": "/p", "DB_PASSWORD": "hunter2"})"}, {"pre_load_strategy", "none"}});
  EXPECT_EQ(Run(job).status, RunStatus::kSuccess);
  EXPECT_NE(processes_.invocations[0].arguments.back().find("hunter2"), std::string::npos) << "the CLI gets it";
  const std::string notes = Notes();
  EXPECT_EQ(notes.find("hunter2"), std::string::npos) << notes;
  EXPECT_NE(notes.find("DB_PASSWORD=***"), std::string::npos) << notes;
}

TEST_F(JobRunTest, ACanceledRunSkipsWhatItHasNotStartedAndEndsCanceled) {
  const RunnableJob job = Job("starbake_load.py", kLoadDag, {{"pre_load_strategy", "none"}});
  processes_.script.push_back({0, [&](const ExecutorInvocation&) { cancel_.store(true); }});
  const JobRunOutcome outcome = Run(job);
  EXPECT_EQ(outcome.status, RunStatus::kCanceled);
  EXPECT_EQ(processes_.Verbs(), (std::vector<std::string>{"load"})) << "the load in flight finished";
  EXPECT_EQ(Materialized(), (std::vector<std::string>{"starbake_orders"}));
}

TEST(RunConfig, TagsRoundTrip) {
  JobRunConfig config;
  config.logical_datetime = ParseLogicalDatetime("2026-07-18T00:00:00+00:00");
  config.previous_logical_datetime = ParseLogicalDatetime("2026-07-17T00:00:00+00:00");
  config.dry_run = true;
  config.sl_options = {{"all", {{"k", "v"}}}};
  const std::map<std::string, std::string> tags = RunConfigTags(config);
  EXPECT_EQ(tags.at("logical_datetime"), "2026-07-18T00:00:00+0000");
  EXPECT_EQ(RunConfigFromTags(tags), config);
  EXPECT_THROW(ParseSlOptions(R"({"all": 3})"), Error);
  EXPECT_THROW(ParseSlOptions(R"([1])"), Error);
}

}  // namespace
}  // namespace sluice::orchestrate
