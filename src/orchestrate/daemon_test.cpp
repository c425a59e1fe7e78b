// The daemon's passes against a real SQLite state store with a manual clock: schedule ticks (due, missed, stopped),
// restarts without duplicate runs, sensors reading the materialization log from their cursor, the run queue within
// its limits, and the lease.
#include "orchestrate/daemon.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <mutex>

#include "core/logical_datetime.hpp"
#include "orchestrate/orchestrate_test_support.hpp"
#include "orchestrate/starlake_dag_file.hpp"
#include "state/sqlite/sqlite_state_store.hpp"
#include "state/state_test_support.hpp"

namespace sluice::orchestrate {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;
using std::chrono::system_clock;

system_clock::time_point At(const std::string& text) { return ParseLogicalDatetime(text); }

constexpr const char* kLoadDag = R"py(
options = {'sl_env_var': '{"SL_ROOT": "/p"}'}
schedules = [{'schedule': 'None', 'cron': '0 0 * * *', 'domains': [{'name': 'starbake', 'final_name': 'starbake',
  'tables': [{'name': 'orders', 'final_name': 'orders'}]}]}]
)py";

constexpr const char* kTransformDag = R"py(
options = {'sl_env_var': '{"SL_ROOT": "/p"}', 'dataset_triggering_strategy': 'all'}
cron = "None"
dependencies = StarlakeDependencies(dependencies="""[
  {"data": {"name": "kpi.order_summary", "typ": "task", "sink": "kpi.order_summary"},
   "children": [{"data": {"name": "starbake.orders", "typ": "table", "cron": "0 0 * * *"}},
                {"data": {"name": "starbake.customers", "typ": "table", "cron": "0 0 * * *"}}]}
]""")
)py";

RunnableJob Job(const std::string& file_name, const std::string& text) {
  StarlakeDagFile file = ParseStarlakeDagFile(file_name, text);
  const EnvironmentLookup none = [](const std::string&) { return std::nullopt; };
  return RunnableJob{BuildStarlakeJobGraph(file).jobs.front(), file.options, ResolveJobOptions(file.options, none),
                     ResolveExecutorSettings(file.options, none)};
}

class DaemonTest : public testing::Test {
 protected:
  DaemonTest() : store_(SqliteStateStore::Open(scratch_.path() / "state.db")), clock_(At("2026-07-17T12:00:00Z")) {}

  std::unique_ptr<Daemon> NewDaemon(std::vector<RunnableJob> jobs, DaemonSettings settings = {}) {
    settings.sensor_interval = seconds(0);
    return std::make_unique<Daemon>(
        *store_, clock_, std::move(jobs), settings,
        [this](const RunnableJob&, const RunRecord& run, const JobRunConfig&, const std::atomic<bool>&) {
          std::unique_lock lock(mutex_);
          launched_.push_back(run.run_id);
          released_.wait(lock, [&] { return release_; });
          return JobRunOutcome{RunStatus::kSuccess, ""};
        });
  }

  void Release() {
    {
      std::lock_guard lock(mutex_);
      release_ = true;
    }
    released_.notify_all();
  }

  void Materialize(const std::string& uri, const std::string& logical) {
    AssetMaterializationRecord record;
    record.asset = uri;
    record.partition = QuoteDatetime(logical);
    record.run_id = "elsewhere";
    record.at = FormatUtc(clock_.Now());
    record.metadata = {{"sl_cron", "0 0 * * *"}};
    store_->RecordAssetMaterialization(record);
  }

  ScratchDirectory scratch_;
  std::unique_ptr<SqliteStateStore> store_;
  ManualClock clock_;
  std::mutex mutex_;
  std::condition_variable released_;
  bool release_ = true;
  std::vector<std::string> launched_;
};

TEST_F(DaemonTest, AScheduleFiresItsTickOnceWithTheIntervalThatJustClosed) {
  auto daemon = NewDaemon({Job("starbake_load.py", kLoadDag)});
  EXPECT_TRUE(daemon->EvaluateInstigators().empty()) << "first sight: only ticks after now fire";
  clock_.Set(At("2026-07-18T00:00:05Z"));
  std::vector<std::string> queued = daemon->EvaluateInstigators();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_TRUE(daemon->EvaluateInstigators().empty()) << "the same tick never fires twice";

  std::optional<RunRecord> run = store_->GetRun(queued[0]);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, RunStatus::kQueued);
  EXPECT_EQ(run->job, "starbake_load");
  EXPECT_EQ(run->tags.at("logical_datetime"), "2026-07-18T00:00:00+0000");
  EXPECT_EQ(run->tags.at("previous_logical_datetime"), "2026-07-17T00:00:00+0000");
  EXPECT_EQ(run->tags.at("sluice/trigger"), "starbake_load_schedule");

  std::vector<TickRecord> ticks = store_->TicksOf("starbake_load_schedule", -1);
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_EQ(ticks[0].status, TickStatus::kSuccess);
  EXPECT_EQ(ticks[0].tick_time, "2026-07-18T00:00:00.000Z");
  EXPECT_EQ(ticks[0].run_ids, std::vector<std::string>{queued[0]});
}

TEST_F(DaemonTest, TicksMissedWhileNoDaemonRanAreSkippedExceptTheLatest) {
  NewDaemon({Job("starbake_load.py", kLoadDag)})->EvaluateInstigators();
  clock_.Set(At("2026-07-21T09:00:00Z"));  // the daemon was down for four midnights
  auto restarted = NewDaemon({Job("starbake_load.py", kLoadDag)});
  std::vector<std::string> queued = restarted->EvaluateInstigators();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(store_->GetRun(queued[0])->tags.at("logical_datetime"), "2026-07-21T00:00:00+0000");
  std::vector<TickRecord> ticks = store_->TicksOf("starbake_load_schedule", -1);  // newest recorded first
  ASSERT_EQ(ticks.size(), 4u);
  EXPECT_EQ(ticks[0].status, TickStatus::kSkipped);
  EXPECT_EQ(ticks[0].tick_time, "2026-07-20T00:00:00.000Z");
  EXPECT_NE(ticks[0].skip_reason.find("only the latest due tick fires"), std::string::npos);
  EXPECT_EQ(ticks[1].tick_time, "2026-07-19T00:00:00.000Z");
  EXPECT_EQ(ticks[2].tick_time, "2026-07-18T00:00:00.000Z");
  EXPECT_EQ(ticks[3].status, TickStatus::kSuccess) << "the fired tick is recorded first";
  EXPECT_EQ(ticks[3].tick_time, "2026-07-21T00:00:00.000Z");
}

TEST_F(DaemonTest, ADaemonStoppedBetweenClaimingARunKeyAndCreatingTheRunCreatesItOnceOnRestart) {
  NewDaemon({Job("starbake_load.py", kLoadDag)})->EvaluateInstigators();
  // A previous daemon claimed the key of the next tick and died before creating the run.
  ASSERT_FALSE(store_->ClaimRunKey("starbake_load_schedule:2026-07-18T00:00:00.000Z", "claimed_run", "x"));
  clock_.Set(At("2026-07-18T00:00:05Z"));
  auto restarted = NewDaemon({Job("starbake_load.py", kLoadDag)});
  EXPECT_EQ(restarted->EvaluateInstigators(), std::vector<std::string>{"claimed_run"});
  EXPECT_EQ(store_->ListRuns(-1).size(), 1u);
}

TEST_F(DaemonTest, AStoppedScheduleRecordsNothingAndStartingItDoesNotFireWhatItMissed) {
  auto daemon = NewDaemon({Job("starbake_load.py", kLoadDag)});
  daemon->EvaluateInstigators();
  store_->SetInstigatorStatus("starbake_load_schedule", InstigatorKind::kSchedule, InstigatorStatus::kStopped,
                              FormatUtc(clock_.Now()));
  clock_.Set(At("2026-07-19T12:00:00Z"));
  EXPECT_TRUE(daemon->EvaluateInstigators().empty());
  store_->SetInstigatorStatus("starbake_load_schedule", InstigatorKind::kSchedule, InstigatorStatus::kRunning,
                              FormatUtc(clock_.Now()));
  EXPECT_TRUE(daemon->EvaluateInstigators().empty());
  EXPECT_TRUE(store_->TicksOf("starbake_load_schedule", -1).empty());
  clock_.Set(At("2026-07-20T00:00:01Z"));
  EXPECT_EQ(daemon->EvaluateInstigators().size(), 1u);
}

TEST_F(DaemonTest, ASensorSeesMaterializationsRecordedWhileNoDaemonRanAndRequestsOneRun) {
  Materialize("starbake_orders", "2026-07-17T00:00:00+0000");
  auto daemon = NewDaemon({Job("kpi.py", kTransformDag)});
  EXPECT_TRUE(daemon->EvaluateInstigators().empty());
  std::vector<TickRecord> ticks = store_->TicksOf("kpi_sensor", -1);
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_EQ(ticks[0].status, TickStatus::kSkipped);
  EXPECT_EQ(ticks[0].skip_reason, "No materializations observed") << "ALL needs both datasets";

  Materialize("starbake_customers", "2026-07-17T00:00:00+0000");
  auto restarted = NewDaemon({Job("kpi.py", kTransformDag)});
  std::vector<std::string> queued = restarted->EvaluateInstigators();
  ASSERT_EQ(queued.size(), 1u) << store_->TicksOf("kpi_sensor", 1).front().skip_reason;
  std::optional<RunRecord> run = store_->GetRun(queued[0]);
  EXPECT_EQ(run->tags.at("logical_datetime"), "2026-07-17T00:00:00+0000");
  EXPECT_EQ(store_->GetInstigator("kpi_sensor")->cursor, "2");
  EXPECT_TRUE(restarted->EvaluateInstigators().empty()) << "consumed materializations do not trigger again";
  EXPECT_EQ(store_->TicksOf("kpi_sensor", 1).front().skip_reason, "No materializations observed");
}

TEST_F(DaemonTest, SkippedSensorTicksArePurgedAfterAWeek) {
  auto daemon = NewDaemon({Job("kpi.py", kTransformDag)});
  daemon->EvaluateInstigators();  // a SKIPPED tick: nothing materialized
  clock_.Set(At("2026-07-24T13:00:00Z"));
  daemon->EvaluateInstigators();  // purges the week-old tick, then records a new one
  std::vector<TickRecord> ticks = store_->TicksOf("kpi_sensor", -1);
  ASSERT_EQ(ticks.size(), 1u);
  EXPECT_EQ(ticks[0].evaluated_at, "2026-07-24T13:00:00.000Z");
}

TEST_F(DaemonTest, QueuedRunsStartWithinTheTagLimitAndTheRestWait) {
  DaemonSettings settings;
  settings.tag_limits = {ParseTagLimit("sluice/job=1")};
  auto daemon = NewDaemon({Job("starbake_load.py", kLoadDag)}, settings);
  for (const char* id : {"q1", "q2"}) {
    RunRecord run;
    run.run_id = id;
    run.job = "starbake_load";
    run.selection = "starbake_load";
    run.created_at = FormatUtc(clock_.Now());
    run.tags = {{"sluice/job", "starbake_load"}};
    store_->CreateRun(run);
  }
  release_ = false;
  EXPECT_EQ(daemon->LaunchQueuedRuns(), std::vector<std::string>{"q1"});
  EXPECT_TRUE(daemon->LaunchQueuedRuns().empty()) << "q2 waits for q1";
  EXPECT_EQ(store_->GetRun("q1")->status, RunStatus::kStarted);
  EXPECT_EQ(store_->GetRun("q1")->pid, getpid());
  Release();
  daemon->WaitForRuns();
  EXPECT_EQ(store_->GetRun("q1")->status, RunStatus::kSuccess);
  EXPECT_EQ(daemon->LaunchQueuedRuns(), std::vector<std::string>{"q2"});
  daemon->WaitForRuns();
  EXPECT_EQ(store_->GetRun("q2")->status, RunStatus::kSuccess);
}

TEST_F(DaemonTest, ARunOfAJobNoLongerDefinedFailsWithAClearError) {
  auto daemon = NewDaemon({Job("starbake_load.py", kLoadDag)});
  RunRecord run;
  run.run_id = "q1";
  run.job = "gone";
  run.created_at = FormatUtc(clock_.Now());
  store_->CreateRun(run);
  daemon->LaunchQueuedRuns();
  EXPECT_EQ(store_->GetRun("q1")->status, RunStatus::kFailure);
  EXPECT_NE(store_->GetRun("q1")->error.find("job gone is not defined"), std::string::npos);
}

TEST_F(DaemonTest, ASecondDaemonExitsWhileTheFirstHoldsTheLease) {
  // The lease held by a live process that is not this one: the parent (the test runner's shell or ctest).
  const int64_t other = getppid();
  // Heartbeats are in real time, whatever the daemon's clock.
  const system_clock::time_point now = system_clock::now();
  ASSERT_TRUE(
      store_->AcquireDaemonLease(other, ProcessStartTime(other), FormatUtc(now), FormatUtc(now - minutes(1))).acquired);
  auto daemon = NewDaemon({});
  std::atomic<bool> stop{false};
  std::string message;
  // `until` already passed: a daemon that wrongly took the lease returns 0 after one pass instead of running on.
  EXPECT_EQ(daemon->Run(stop, false, clock_.Now(), message, [](const std::string&) {}), 1);
  EXPECT_NE(message.find("another daemon (pid " + std::to_string(other)), std::string::npos) << message;
}

TEST(TagLimit, Parses) {
  TagLimit limit = ParseTagLimit("team:kpi=2");
  EXPECT_EQ(limit.key, "team");
  EXPECT_EQ(limit.value, std::optional<std::string>("kpi"));
  EXPECT_EQ(limit.limit, 2);
  EXPECT_FALSE(ParseTagLimit("sluice/job=1").value);
  EXPECT_THROW(ParseTagLimit("x"), Error);
  EXPECT_THROW(ParseTagLimit("x=0"), Error);
}

}  // namespace
}  // namespace sluice::orchestrate
