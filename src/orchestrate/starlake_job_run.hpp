// One run of a Starlake job (reference §2.3, §4, §5): its tasks in dependency order, each running the Starlake CLI
// through the job's executor, with retries, pre-load gating and the not-ready sentinel; every step's events and
// output in the run's event log, and a materialization of each finished load, transform and pipeline end in the
// asset materialization log, which dataset sensors read.
//
// Step semantics:
//   - A task runs once every task before it produced its output, up to `max_parallel_tasks` at once (a domain's
//     tables load in parallel, as on Dagster). A task behind one that failed or was skipped is skipped, except `end`,
//     which runs unless a task failed: a skipped pre-load still records the pipeline's end (the original lost it,
//     §6.3).
//   - A failed attempt is retried by the retry policy with the same argument vector; a pre-load is never retried (its
//     waiting is the poke loop). Retries, pokes and waits stop when the run is canceled; the attempt in flight
//     finishes.
//   - Pre-load (§4.2, §4.3): one-shot, or poke mode with interval and timeout; ACK without pre_load_sensor pokes for
//     ack_wait_timeout and then skips (the original's dead option, made real). The ACK path's date is the run's
//     logical date. With the sentinel, each attempt substitutes its scope into a copy of the argument vector and the
//     marker is consumed before the verdict (DecidePreload).
//   - Dry run: nothing is executed; every command counts as a success and materializations say sl_dry_run.
// The run's status: SUCCESS when no task failed (skips are fine), FAILURE when one did, CANCELED when the run was
// canceled before its last task ran. The caller starts and finishes the run record; this appends its events.
// Thread-safety: one call runs one run; several may run at once on one StateStore.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.hpp"
#include "orchestrate/executor.hpp"
#include "orchestrate/job_options.hpp"
#include "orchestrate/local_process.hpp"
#include "orchestrate/starlake_job_graph.hpp"
#include "state/state_store.hpp"

namespace sluice::orchestrate {

// The run config of a job run (§5.1), kept on the run as tags so a restarted daemon reads it back.
struct JobRunConfig {
  std::optional<std::chrono::system_clock::time_point> logical_datetime;  // unset: the run's start time
  std::optional<std::chrono::system_clock::time_point> previous_logical_datetime;
  bool dry_run = false;
  nlohmann::json sl_options = nlohmann::json::object();  // {"all": {k: v}, "<task>": {k: v}}
  bool operator==(const JobRunConfig&) const = default;
};

// Tags: logical_datetime and previous_logical_datetime (`%Y-%m-%dT%H:%M:%S%z`, UTC), dry_run ("true" when set),
// sl_options (JSON, when not empty).
std::map<std::string, std::string> RunConfigTags(const JobRunConfig& config);
// The inverse; throws SLU-DATETIME-001 or SLU-STARLAKE-010 (sl_options not a JSON object of objects).
JobRunConfig RunConfigFromTags(const std::map<std::string, std::string>& tags);
// Checks an sl_options payload: a JSON object whose values are objects of scalars. Throws SLU-STARLAKE-010.
nlohmann::json ParseSlOptions(std::string_view text);

using ProcessRunner = std::function<ProcessOutcome(const ExecutorInvocation& invocation,
                                                   const std::function<void(std::string_view line)>& on_line,
                                                   const std::atomic<bool>* cancel)>;

// Everything a run touches beyond its values, injected so tests control time and processes.
struct JobRunContext {
  StateStore* store = nullptr;
  const Clock* clock = nullptr;
  // Waits `duration` (retry delays, pokes); returns early, with false, when the run is canceled.
  std::function<bool(std::chrono::milliseconds duration)> wait;
  ProcessRunner run_process;                       // RunLocalProcess by default
  const std::atomic<bool>* cancel = nullptr;       // stop after the attempt in flight
  const std::atomic<bool>* hard_cancel = nullptr;  // also stop the attempt in flight (its process group is killed)
  uint64_t seed = 0;                               // retry jitter
  EnvironmentLookup environment;                   // for executor options that fall back to the environment
};

// A job with what it runs with: the graph's job, the pipeline's raw options (per-transform `options` live there)
// and their resolved forms.
struct RunnableJob {
  StarlakeJob job;
  nlohmann::json options = nlohmann::json::object();
  JobOptions resolved;
  ExecutorSettings executor;
};

struct JobRunOutcome {
  RunStatus status = RunStatus::kSuccess;
  std::string error;  // the first failure, for the run record
};

// Runs `job` as run `run_id` (already STARTED). Never throws for a step's failure: it is recorded and reported.
JobRunOutcome RunStarlakeJob(const RunnableJob& job, const std::string& run_id, const JobRunConfig& config,
                             const JobRunContext& context);

// A context over the process clock, real sleeps (woken by `cancel`) and local processes.
JobRunContext LocalJobRunContext(StateStore& store, const Clock& clock, const std::atomic<bool>* cancel,
                                 const std::atomic<bool>* hard_cancel);

}  // namespace sluice::orchestrate
