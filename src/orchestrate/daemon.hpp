// The daemon (issue 25 point 1): one loop host for the schedules and dataset sensors of the Starlake jobs, and the
// queue of the runs they request.
//
// Each pass:
//   1. Schedules (one per job with a cron, named `<job>_schedule`): the ticks due since the schedule's cursor (the last
//      tick it fired, else the time it was started) are planned by PlanDueTicks: the latest fires, the earlier ones are
//      recorded as SKIPPED ticks. A fired tick's run has logical_datetime = the tick and previous_logical_datetime =
//      the tick before, so a daily schedule requests the day that just closed.
//   2. Sensors (one per job with sensor datasets, `<job>_sensor`), at most once per sensor interval:
//      EvaluateDatasetSensor over the asset materialization log from the sensor's cursor (a sequence number, so a
//      materialization recorded while no daemon ran is still seen), its tick recorded with the skip reason or error.
//      The "previous" partition of §6.6 falls back to the start_date option, else to the epoch: a job's first
//      sensor-triggered run has all history as its interval.
//   3. The queue: workers found dead (RunQueue::ReapDeadWorkers) have their runs marked FAILURE or queued again
//      (RecoverLostRuns, `lost_run_retries`); then, unless the runs are left to `sluice worker` processes
//      (`local_runs` false), the daemon's own RunWorker claims QUEUED runs, oldest first, within the run limits (its
//      total, and per tag over every worker), each on its own thread.
// Every tick is recorded with its cursor in one transaction. A run request has a run key (`<instigator>:<tick time>`
// or `<instigator>:<cursor>`) claimed before the run is created, so a daemon restarted between the two creates the
// same run rather than a second one. Schedules and sensors are RUNNING unless stopped (`schedules stop`).
//
// SKIPPED ticks (a sensor records one per evaluation) are purged once an hour when older than keep_skipped_ticks;
// ticks that requested runs or failed are kept.
// One daemon per state store: Run takes the store's daemon lease and heartbeats it every pass; a second daemon waits
// for it or exits. On PostgreSQL the lease is an advisory lock held by the daemon's session, so a daemon killed on any
// machine loses it at once. On stop (SIGTERM), no new tick is evaluated and no run started; running runs finish their
// task in flight, then skip the rest and end CANCELED; the lease is released.
// Thread-safety: one thread calls Pass/Run; runs execute on threads the daemon owns.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "core/cron_schedule.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/run_worker.hpp"
#include "orchestrate/starlake_job_run.hpp"
#include "state/state_store.hpp"

namespace sluice::orchestrate {

// A run limit by tag (TagLimit, state/state_store.hpp); the tags a run carries include `sluice/job` (its job) and
// `sluice/trigger` (the schedule or sensor that requested it).
// `key=limit` or `key:value=limit`; throws SLU-DAEMON-003 otherwise.
TagLimit ParseTagLimit(std::string_view text);

struct DaemonSettings {
  std::chrono::milliseconds pass_interval{1000};  // the pause between two passes
  std::chrono::seconds sensor_interval{30};       // the least time between two evaluations of one sensor
  int max_concurrent_runs = 4;
  std::vector<TagLimit> tag_limits;
  std::chrono::seconds lease_stale_after{60};     // a holder silent this long has lost the lease
  std::chrono::hours keep_skipped_ticks{24 * 7};  // SKIPPED ticks older than this are purged (hourly)
  bool local_runs = true;                         // false: only `sluice worker` processes run the queued runs
  std::chrono::seconds worker_stale_after{60};    // a worker silent this long is dead
  int lost_run_retries = 0;                       // times a run lost with its worker is queued again
};

std::string ScheduleName(const StarlakeJob& job);  // <job>_schedule
std::string SensorName(const StarlakeJob& job);    // <job>_sensor

class Daemon {
 public:
  Daemon(StateStore& store, const Clock& clock, std::vector<RunnableJob> jobs, DaemonSettings settings,
         RunLauncher launcher);
  ~Daemon();  // waits for the runs it started

  // Steps 1 and 2: evaluates the schedules and due sensors, records their ticks and queues the runs they request.
  // Returns the ids of the runs queued.
  std::vector<std::string> EvaluateInstigators();
  // Step 3: recovers the runs of dead workers, then (with local runs) starts queued runs within the limits; returns
  // the ids of the runs started.
  std::vector<std::string> LaunchQueuedRuns();
  // Runs still executing on the daemon's threads.
  int RunningCount();
  // Waits until every started run has finished.
  void WaitForRuns();
  // Asks running runs to stop after their task in flight.
  void CancelRuns();

  // The loop: takes the lease (waiting for it when `wait_for_lease`, else returning 1 with `message` saying who holds
  // it), then passes until `stop` is set, or, with `until`, until the clock passes it and nothing runs. Returns 0.
  int Run(const std::atomic<bool>& stop, bool wait_for_lease,
          std::optional<std::chrono::system_clock::time_point> until, std::string& message,
          const std::function<void(const std::string& line)>& announce);

 private:
  // A schedule's cron and zone, parsed once; `error` instead when the pipeline's values do not parse.
  struct ParsedSchedule {
    std::optional<CronSchedule> cron;
    std::optional<TimeZone> zone;
    std::string error;
  };

  // The stored state of instigator `name` from `states` (one read per pass), created RUNNING when it is new.
  InstigatorState StateOf(const std::string& name, InstigatorKind kind,
                          const std::map<std::string, InstigatorState>& states);
  void EvaluateSchedule(const RunnableJob& job, const ParsedSchedule& schedule, const InstigatorState& state,
                        std::vector<std::string>& queued);
  void EvaluateSensor(const RunnableJob& job, const InstigatorState& state, std::vector<std::string>& queued);
  // Claims `run_key` and creates its QUEUED run (or finds the one a previous daemon created for it).
  std::string QueueRun(const RunnableJob& job, const std::string& trigger, const std::string& run_key,
                       const JobRunConfig& config);
  std::string NewRunId();

  StateStore& store_;
  const Clock& clock_;
  std::vector<RunnableJob> jobs_;
  std::vector<ParsedSchedule> schedules_;  // by job, for jobs with a cron
  DaemonSettings settings_;
  std::unique_ptr<RunWorker> worker_;  // null without local runs
  std::map<std::string, std::chrono::system_clock::time_point> sensor_evaluated_;
  std::optional<std::chrono::system_clock::time_point> last_purge_;
  std::function<void(const std::string&)> announce_ = [](const std::string&) {};
  int64_t pid_ = 0;
  int64_t pid_start_time_ = 0;
  uint64_t run_counter_ = 0;
};

}  // namespace sluice::orchestrate
