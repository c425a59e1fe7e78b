// A worker of the run queue (issue 27 point 3): claims QUEUED job runs from the state store and executes each on a
// thread of its own, within its run limit and the tag limits, which the store counts over every worker's STARTED
// runs (RunQueue::ClaimQueuedRun), so several `sluice worker` processes on several machines sharing one PostgreSQL
// state store never exceed a limit nor run a run twice. The daemon runs its local runs through one too.
//
// A worker registers itself in the store and heartbeats; when its process dies, the active daemon finds it
// (RunQueue::ReapDeadWorkers) and marks its runs FAILURE, or queues them again when its retry setting says so
// (RecoverLostRuns). A worker that finds itself reaped (a heartbeat answered SLU-STATE-010: it was silent for longer
// than the daemon waits) cancels its runs and stops.
// Thread-safety: one thread calls the methods; runs execute on threads the worker owns.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/clock.hpp"
#include "orchestrate/starlake_job_run.hpp"
#include "state/state_store.hpp"

namespace sluice::orchestrate {

// Runs one run of a job; the worker finishes the run record after it.
using RunLauncher = std::function<JobRunOutcome(const RunnableJob& job, const RunRecord& run,
                                                const JobRunConfig& config, const std::atomic<bool>& cancel)>;

struct WorkerSettings {
  int max_concurrent_runs = 4;      // runs of this worker at once
  std::vector<TagLimit> tag_limits;  // over every worker's runs
};

class RunWorker {
 public:
  // `jobs` must outlive the worker.
  RunWorker(StateStore& store, const Clock& clock, const std::vector<RunnableJob>& jobs, WorkerSettings settings,
            RunLauncher launcher);
  ~RunWorker();  // waits for its runs, then unregisters

  // Registers the worker (idempotent) and refreshes its heartbeat; throws SLU-STATE-010 once it has been reaped.
  // Heartbeats are in real time whatever the injected clock says, like the daemon lease.
  void Heartbeat();
  // Claims queued runs while it has room and starts each; returns their ids.
  std::vector<std::string> ClaimAndStart();
  int RunningCount();
  void WaitForRuns();
  // Asks running runs to stop after their task in flight.
  void CancelRuns();
  const WorkerRecord& identity() const { return identity_; }

 private:
  struct RunningRun {
    std::string run_id;
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  void ReapFinished();
  const RunnableJob* FindJob(const std::string& name) const;

  StateStore& store_;
  const Clock& clock_;
  const std::vector<RunnableJob>& jobs_;
  WorkerSettings settings_;
  RunLauncher launcher_;
  WorkerRecord identity_;
  bool registered_ = false;
  std::vector<RunningRun> running_;
  std::atomic<bool> cancel_runs_{false};
};

// What the active daemon does with the runs of workers found dead: each ends FAILURE ("worker … died"), and when
// `retries` allows (tag sluice/attempt, 1 for a first run) a new QUEUED run of the same job and tags is created with
// sluice/retry_of set. Returns one line per run for the daemon's log.
std::vector<std::string> RecoverLostRuns(StateStore& store, const Clock& clock, std::chrono::seconds stale_after,
                                         int retries);

}  // namespace sluice::orchestrate
