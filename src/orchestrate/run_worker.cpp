#include "orchestrate/run_worker.hpp"

#include "core/diagnostic.hpp"

namespace sluice::orchestrate {

namespace {

using std::chrono::system_clock;

constexpr const char* kAttemptTag = "sluice/attempt";
constexpr const char* kRetryOfTag = "sluice/retry_of";

}  // namespace

RunWorker::RunWorker(StateStore& store, const Clock& clock, const std::vector<RunnableJob>& jobs,
                     WorkerSettings settings, RunLauncher launcher)
    : store_(store),
      clock_(clock),
      jobs_(jobs),
      settings_(std::move(settings)),
      launcher_(std::move(launcher)),
      identity_(ThisProcessAsWorker(FormatUtc(system_clock::now()))) {}

RunWorker::~RunWorker() {
  WaitForRuns();
  if (!registered_) return;
  try {
    store_.UnregisterWorker(identity_.worker_id);
  } catch (const Error&) {
    // The store is unreachable: the daemon reaps the worker once its heartbeat is stale.
  }
}

void RunWorker::Heartbeat() {
  const std::string now = FormatUtc(system_clock::now());
  if (!registered_) {
    identity_.heartbeat_at = now;
    store_.RegisterWorker(identity_);
    registered_ = true;
    return;
  }
  store_.HeartbeatWorker(identity_.worker_id, now);
}

const RunnableJob* RunWorker::FindJob(const std::string& name) const {
  for (const RunnableJob& job : jobs_) {
    if (job.job.name == name) return &job;
  }
  return nullptr;
}

void RunWorker::ReapFinished() {
  for (auto it = running_.begin(); it != running_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = running_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<std::string> RunWorker::ClaimAndStart() {
  ReapFinished();
  std::vector<std::string> started;
  if (cancel_runs_.load()) return started;
  if (!registered_) Heartbeat();
  while (static_cast<int>(running_.size()) < settings_.max_concurrent_runs) {
    const std::string now = FormatUtc(clock_.Now());
    std::optional<RunRecord> claimed =
        store_.ClaimQueuedRun(identity_, settings_.max_concurrent_runs, settings_.tag_limits, now);
    if (!claimed) break;
    const RunnableJob* job = FindJob(claimed->job);
    JobRunConfig config;
    std::string problem;
    if (!job) {
      problem = "job " + claimed->job + " is not defined in the pipeline files of worker " + identity_.worker_id;
    } else {
      try {
        config = RunConfigFromTags(claimed->tags);
      } catch (const Error& error) {
        problem = error.what();
      }
    }
    if (!problem.empty()) {
      store_.FinishRun(claimed->run_id, RunStatus::kFailure, now, problem);
      store_.Append(claimed->run_id, now, RunFinishedEvent{RunStatusName(RunStatus::kFailure), problem});
      continue;
    }
    RunningRun running;
    running.run_id = claimed->run_id;
    running.done = std::make_shared<std::atomic<bool>>(false);
    running.thread = std::thread([this, job, run = *claimed, config, done = running.done] {
      JobRunOutcome outcome;
      try {
        outcome = launcher_(*job, run, config, cancel_runs_);
      } catch (const std::exception& error) {
        outcome = JobRunOutcome{RunStatus::kFailure, error.what()};
      }
      try {
        store_.FinishRun(run.run_id, outcome.status, FormatUtc(clock_.Now()), outcome.error);
        store_.Append(run.run_id, FormatUtc(clock_.Now()),
                      RunFinishedEvent{RunStatusName(outcome.status), outcome.error});
      } catch (const Error&) {
        // Already finished (marked by the daemon after this worker was reaped): the record stands as it is.
      }
      done->store(true);
    });
    started.push_back(claimed->run_id);
    running_.push_back(std::move(running));
  }
  return started;
}

int RunWorker::RunningCount() {
  ReapFinished();
  return static_cast<int>(running_.size());
}

void RunWorker::WaitForRuns() {
  for (RunningRun& running : running_) {
    if (running.thread.joinable()) running.thread.join();
  }
  running_.clear();
}

void RunWorker::CancelRuns() { cancel_runs_.store(true); }

std::vector<std::string> RecoverLostRuns(StateStore& store, const Clock& clock, std::chrono::seconds stale_after,
                                         int retries) {
  std::vector<std::string> lines;
  const std::string stale_before = FormatUtc(system_clock::now() - stale_after);
  for (const RunRecord& lost : store.ReapDeadWorkers(stale_before)) {
    const std::string now = FormatUtc(clock.Now());
    const std::string error = "its worker (" + lost.host + ", pid " + std::to_string(lost.pid) + ") died";
    try {
      store.FinishRun(lost.run_id, RunStatus::kFailure, now, error);
      store.Append(lost.run_id, now, RunFinishedEvent{RunStatusName(RunStatus::kFailure), error});
    } catch (const Error&) {
      continue;  // it finished meanwhile (the worker was slow, not dead): nothing was lost
    }
    int attempt = 1;
    if (auto tag = lost.tags.find(kAttemptTag); tag != lost.tags.end()) {
      try {
        attempt = std::stoi(tag->second);
      } catch (const std::exception&) {
        attempt = 1;
      }
    }
    if (attempt > retries) {
      lines.push_back("run " + lost.run_id + " failed: " + error);
      continue;
    }
    RunRecord retry;
    retry.run_id = NewRunId(clock);
    retry.selection = lost.selection;
    retry.partition_start = lost.partition_start;
    retry.partition_end = lost.partition_end;
    retry.job = lost.job;
    retry.backfill_id = lost.backfill_id;
    retry.created_at = now;
    retry.tags = lost.tags;
    retry.tags[kAttemptTag] = std::to_string(attempt + 1);
    retry.tags[kRetryOfTag] = lost.run_id;
    store.CreateRun(retry);
    lines.push_back("run " + lost.run_id + " failed: " + error + "; queued again as " + retry.run_id);
  }
  return lines;
}

}  // namespace sluice::orchestrate
