#include "orchestrate/daemon.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/logical_datetime.hpp"
#include "core/pause_point.hpp"
#include "core/tick_plan.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/dataset_sensor.hpp"

namespace sluice::orchestrate {

namespace {

using std::chrono::system_clock;

constexpr const char* kJobTag = "sluice/job";
constexpr const char* kTriggerTag = "sluice/trigger";
constexpr const char* kRunKeyTag = "sluice/run_key";

system_clock::time_point ParseStoredTime(const std::string& text, system_clock::time_point fallback) {
  std::optional<system_clock::time_point> parsed = ParseUtc(text);
  return parsed ? *parsed : fallback;
}

// The asset materialization log and the job's runs, as the sensor algorithm reads them.
class StoreSensorHistory final : public SensorHistory {
 public:
  StoreSensorHistory(StateStore& store, const std::string& job) : store_(store), job_(job) {}

  std::optional<DatasetMaterialization> LatestAfter(const std::string& uri, int64_t after) override {
    std::optional<AssetMaterializationRecord> record = store_.LatestAssetMaterialization(uri, after);
    if (!record) return std::nullopt;
    return Convert(*record);
  }

  std::vector<DatasetMaterialization> Recent(const std::string& uri, int limit) override {
    std::vector<DatasetMaterialization> converted;
    for (const AssetMaterializationRecord& record : store_.RecentAssetMaterializations(uri, limit)) {
      converted.push_back(Convert(record));
    }
    return converted;
  }

  std::optional<system_clock::time_point> PreviousSuccess(system_clock::time_point before) override {
    std::optional<system_clock::time_point> best;
    for (const RunRecord& run : store_.RunsOfJob(job_, -1)) {
      if (run.status != RunStatus::kSuccess) continue;
      auto tag = run.tags.find("logical_datetime");
      if (tag == run.tags.end()) continue;
      try {
        system_clock::time_point logical = ParseLogicalDatetime(tag->second);
        if (logical < before && (!best || logical > *best)) best = logical;
      } catch (const Error&) {
        // A run whose tag is not a datetime was not started by a sensor or schedule: it says nothing here.
      }
    }
    return best;
  }

 private:
  static DatasetMaterialization Convert(const AssetMaterializationRecord& record) {
    return DatasetMaterialization{record.sequence, record.asset, record.partition, record.metadata};
  }

  StateStore& store_;
  const std::string& job_;
};

// A tick of `name` evaluated at `now`, its outcome still to fill in.
TickRecord NewTick(const std::string& name, InstigatorKind kind, system_clock::time_point now) {
  TickRecord tick;
  tick.instigator = name;
  tick.kind = kind;
  tick.evaluated_at = FormatUtc(now);
  tick.tick_time = tick.evaluated_at;
  return tick;
}

Error DaemonError(const std::string& message, const std::string& hint) {
  return Error(Diagnostic{"SLU-DAEMON-003", message, {}, hint, {}});
}

}  // namespace

TagLimit ParseTagLimit(std::string_view text) {
  const size_t equals = text.rfind('=');
  if (equals == std::string_view::npos || equals == 0) {
    throw DaemonError("tag limit \"" + std::string(text) + "\" is not key=limit or key:value=limit",
                      "e.g. --tag-limit sluice/job=1 or --tag-limit team:kpi=2");
  }
  TagLimit limit;
  std::string_view tag = text.substr(0, equals);
  std::string_view number = text.substr(equals + 1);
  auto [rest, error] = std::from_chars(number.data(), number.data() + number.size(), limit.limit);
  if (error != std::errc() || rest != number.data() + number.size() || limit.limit < 1) {
    throw DaemonError("tag limit \"" + std::string(text) + "\" has a limit that is not a positive whole number",
                      "e.g. --tag-limit sluice/job=1");
  }
  const size_t colon = tag.find(':');
  limit.key = std::string(tag.substr(0, colon));
  if (colon != std::string_view::npos) limit.value = std::string(tag.substr(colon + 1));
  return limit;
}

std::string ScheduleName(const StarlakeJob& job) { return job.name + "_schedule"; }
std::string SensorName(const StarlakeJob& job) { return job.name + "_sensor"; }

Daemon::Daemon(StateStore& store, const Clock& clock, std::vector<RunnableJob> jobs, DaemonSettings settings,
               RunLauncher launcher)
    : store_(store),
      clock_(clock),
      jobs_(std::move(jobs)),
      settings_(std::move(settings)),
      pid_(getpid()),
      pid_start_time_(ProcessStartTime(getpid())) {
  for (const RunnableJob& job : jobs_) {
    ParsedSchedule parsed;
    if (job.job.cron) {
      try {
        parsed.cron = CronSchedule::Parse(*job.job.cron);
        parsed.zone = TimeZone::Named(job.resolved.timezone);
      } catch (const Error& error) {
        parsed.error = error.what();
      }
    }
    schedules_.push_back(std::move(parsed));
  }
  if (settings_.local_runs) {
    worker_ = std::make_unique<RunWorker>(store_, clock_, jobs_,
                                          WorkerSettings{settings_.max_concurrent_runs, settings_.tag_limits},
                                          std::move(launcher));
  }
}

Daemon::~Daemon() { WaitForRuns(); }

std::string Daemon::NewRunId() { return sluice::NewRunId(clock_); }

InstigatorState Daemon::StateOf(const std::string& name, InstigatorKind kind,
                                const std::map<std::string, InstigatorState>& states) {
  auto found = states.find(name);
  if (found != states.end()) return found->second;
  store_.SetInstigatorStatus(name, kind, InstigatorStatus::kRunning, FormatUtc(clock_.Now()));
  return *store_.GetInstigator(name);
}

std::vector<std::string> Daemon::EvaluateInstigators() {
  const system_clock::time_point now = clock_.Now();
  if (!last_purge_ || now - *last_purge_ >= std::chrono::hours(1)) {
    last_purge_ = now;
    store_.PurgeTicks(TickStatus::kSkipped, FormatUtc(now - settings_.keep_skipped_ticks));
  }
  std::map<std::string, InstigatorState> states;
  for (InstigatorState& state : store_.ListInstigators()) {
    std::string name = state.name;
    states.emplace(std::move(name), std::move(state));
  }
  std::vector<std::string> queued;
  for (size_t i = 0; i < jobs_.size(); ++i) {
    const RunnableJob& job = jobs_[i];
    if (job.job.cron) {
      EvaluateSchedule(job, schedules_[i], StateOf(ScheduleName(job.job), InstigatorKind::kSchedule, states), queued);
    } else if (!job.job.sensor_datasets.empty()) {
      const std::string name = SensorName(job.job);
      auto last = sensor_evaluated_.find(name);
      if (last != sensor_evaluated_.end() && clock_.Now() - last->second < settings_.sensor_interval) continue;
      sensor_evaluated_[name] = clock_.Now();
      EvaluateSensor(job, StateOf(name, InstigatorKind::kSensor, states), queued);
    }
  }
  return queued;
}

std::string Daemon::QueueRun(const RunnableJob& job, const std::string& trigger, const std::string& run_key,
                             const JobRunConfig& config) {
  const std::string now = FormatUtc(clock_.Now());
  std::string run_id = NewRunId();
  if (std::optional<std::string> claimed = store_.ClaimRunKey(run_key, run_id, now)) {
    run_id = *claimed;
    if (store_.GetRun(run_id)) return run_id;  // queued before a restart: nothing to do
    // The key was claimed but the daemon stopped before creating the run: create it now, under the claimed id.
  }
  PausePoint("daemon_after_run_key_before_run");
  RunRecord run;
  run.run_id = run_id;
  run.selection = job.job.name;
  run.job = job.job.name;
  run.created_at = now;
  run.tags = RunConfigTags(config);
  run.tags[kJobTag] = job.job.name;
  run.tags[kTriggerTag] = trigger;
  run.tags[kRunKeyTag] = run_key;
  store_.CreateRun(run);
  return run_id;
}

void Daemon::EvaluateSchedule(const RunnableJob& job, const ParsedSchedule& schedule, const InstigatorState& state,
                              std::vector<std::string>& queued) {
  if (state.status != InstigatorStatus::kRunning) return;
  const std::string& name = state.name;
  const system_clock::time_point now = clock_.Now();
  TickRecord tick = NewTick(name, InstigatorKind::kSchedule, now);
  try {
    if (!schedule.cron) throw Error(Diagnostic{"SLU-DAEMON-005", schedule.error, {}, "", {}});
    const CronSchedule& cron = *schedule.cron;
    const TimeZone& zone = *schedule.zone;
    // Ticks fire from the last evaluation that recorded a tick, or from when the schedule was (re)started, whichever
    // is later: a stopped schedule's missed ticks do not fire when it starts again.
    const system_clock::time_point last = std::max(ParseStoredTime(state.cursor, system_clock::time_point::min()),
                                                   ParseStoredTime(state.updated_at, now));
    const TickPlan plan = PlanDueTicks(cron, zone, last, now);
    if (!plan.fire) return;
    const std::string cursor = FormatUtc(*plan.fire);
    JobRunConfig config;
    config.logical_datetime = *plan.fire;
    if (std::optional<ScheduledInterval> interval =
            ScheduledDatesRange(cron, *plan.fire - std::chrono::seconds(1), zone)) {
      config.previous_logical_datetime = interval->end;
    }
    // The fired tick is recorded before the skipped ones: a daemon killed in between fires nothing twice (the run key)
    // and loses at most the record of skipped ticks.
    const std::string run_key = name + ":" + cursor;
    const std::string run_id = QueueRun(job, name, run_key, config);
    PausePoint("daemon_after_run_before_tick");
    tick.tick_time = cursor;
    tick.status = TickStatus::kSuccess;
    tick.run_keys = {run_key};
    tick.run_ids = {run_id};
    store_.RecordTick(tick, cursor);
    queued.push_back(run_id);
    for (size_t i = 0; i < plan.skipped.size(); ++i) {
      TickRecord skipped = NewTick(name, InstigatorKind::kSchedule, now);
      skipped.tick_time = FormatUtc(plan.skipped[i]);
      skipped.status = TickStatus::kSkipped;
      skipped.skip_reason = "missed while no daemon ran; only the latest due tick fires";
      if (i == 0 && plan.skipped_count > static_cast<int64_t>(plan.skipped.size())) {
        skipped.skip_reason +=
            " (" + std::to_string(plan.skipped_count - plan.skipped.size()) + " earlier missed ticks are not listed)";
      }
      store_.RecordTick(skipped, cursor);
    }
  } catch (const Error& error) {
    tick.tick_time = tick.evaluated_at;
    tick.status = TickStatus::kFailure;
    tick.error = error.what();
    store_.RecordTick(tick, state.cursor);
  }
}

void Daemon::EvaluateSensor(const RunnableJob& job, const InstigatorState& state, std::vector<std::string>& queued) {
  if (state.status != InstigatorStatus::kRunning) return;
  const std::string& name = state.name;
  TickRecord tick = NewTick(name, InstigatorKind::kSensor, clock_.Now());
  int64_t cursor = 0;
  std::from_chars(state.cursor.data(), state.cursor.data() + state.cursor.size(), cursor);
  try {
    std::vector<SensorDataset> datasets;
    for (const StarlakeDatasetRef& dataset : job.job.sensor_datasets) {
      datasets.push_back(SensorDataset{dataset.uri, dataset.cron, dataset.freshness});
    }
    SensorSettings settings;
    settings.strategy = ParseTriggeringStrategy(job.resolved.triggering_strategy);
    settings.data_cycle = job.resolved.data_cycle;
    settings.beyond_data_cycle_enabled = job.resolved.beyond_data_cycle_enabled;
    settings.optional_dataset_enabled = job.resolved.optional_dataset_enabled;
    // Without start_date the first run's previous logical datetime is the epoch: its interval is all history.
    settings.start_date = system_clock::time_point(
        std::chrono::days(job.resolved.start_date ? job.resolved.start_date->days_since_epoch() : 0));
    StoreSensorHistory history(store_, job.job.name);
    SensorEvaluation evaluation = EvaluateDatasetSensor(datasets, settings, history, cursor);
    if (!evaluation.request) {
      tick.status = TickStatus::kSkipped;
      tick.skip_reason = evaluation.skip_reason;
      store_.RecordTick(tick, state.cursor);
      return;
    }
    JobRunConfig config;
    config.logical_datetime = evaluation.request->logical_datetime;
    config.previous_logical_datetime = evaluation.request->previous_logical_datetime;
    config.sl_options = evaluation.request->sl_options;
    const std::string next_cursor = std::to_string(evaluation.cursor);
    const std::string run_key = name + ":" + next_cursor;
    const std::string run_id = QueueRun(job, name, run_key, config);
    tick.status = TickStatus::kSuccess;
    tick.run_keys = {run_key};
    tick.run_ids = {run_id};
    store_.RecordTick(tick, next_cursor);
    queued.push_back(run_id);
  } catch (const Error& error) {
    tick.status = TickStatus::kFailure;
    tick.error = error.what();
    store_.RecordTick(tick, state.cursor);
  }
}

std::vector<std::string> Daemon::LaunchQueuedRuns() {
  for (const std::string& line : RecoverLostRuns(store_, clock_, settings_.worker_stale_after,
                                                 settings_.lost_run_retries)) {
    announce_(line);
  }
  if (!worker_) return {};
  return worker_->ClaimAndStart();
}

int Daemon::RunningCount() { return worker_ ? worker_->RunningCount() : 0; }

void Daemon::WaitForRuns() {
  if (worker_) worker_->WaitForRuns();
}

void Daemon::CancelRuns() {
  if (worker_) worker_->CancelRuns();
}

int Daemon::Run(const std::atomic<bool>& stop, bool wait_for_lease, std::optional<system_clock::time_point> until,
                std::string& message, const std::function<void(const std::string& line)>& announce) {
  // Heartbeats are in real time whatever the injected clock says: daemons started with different --now values must
  // still see each other's heartbeats as fresh.
  auto lease = [&] {
    const system_clock::time_point now = system_clock::now();
    return store_.AcquireDaemonLease(pid_, pid_start_time_, FormatUtc(now),
                                     FormatUtc(now - settings_.lease_stale_after));
  };
  DaemonLease held = lease();
  bool announced_wait = false;
  while (!held.acquired) {
    message = "another daemon (pid " + std::to_string(held.holder_pid) + ", last heartbeat " + held.heartbeat_at +
              ") is active on this state store";
    if (!wait_for_lease) return 1;
    if (!announced_wait) announce(message + "; waiting for it to stop");
    announced_wait = true;
    for (int i = 0; i < 10 && !stop.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (stop.load()) return 0;
    held = lease();
  }
  announce_ = announce;
  announce("daemon started (pid " + std::to_string(pid_) + "): " + std::to_string(jobs_.size()) + " jobs" +
           (worker_ ? "" : "; queued runs are left to `sluice worker` processes"));

  while (!stop.load()) {
    if (!lease().acquired) {
      message = "the daemon lease was taken over by another daemon";
      CancelRuns();
      WaitForRuns();
      return 1;
    }
    if (worker_) {
      try {
        worker_->Heartbeat();
      } catch (const Error& error) {
        message = std::string("the daemon's own worker was found dead and reaped: ") + error.what();
        CancelRuns();
        WaitForRuns();
        return 1;
      }
    }
    for (const std::string& run_id : EvaluateInstigators()) announce("queued run " + run_id);
    for (const std::string& run_id : LaunchQueuedRuns()) announce("started run " + run_id);
    if (until && clock_.Now() >= *until && RunningCount() == 0 && store_.UnclaimedQueuedRuns().empty()) break;
    const auto pause_until = std::chrono::steady_clock::now() + settings_.pass_interval;
    while (!stop.load() && std::chrono::steady_clock::now() < pause_until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (stop.load() && RunningCount() > 0) {
    announce("stopping: " + std::to_string(RunningCount()) + " running runs finish their task in flight");
  }
  CancelRuns();
  WaitForRuns();
  store_.ReleaseDaemonLease(pid_, pid_start_time_);
  announce("daemon stopped");
  return 0;
}

}  // namespace sluice::orchestrate
