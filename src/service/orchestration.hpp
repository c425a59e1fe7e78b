// The orchestrator's operations over a project's pipeline files (`pipelines/*.yml`, orchestrate/pipeline_file.hpp)
// and its state store: the daemon and workers, schedules (list, start / stop, preview), sensors (list, show), one
// job run now or queued, the registered workers. Documents returned as JSON are what faces show (`--json`, the web
// UI's API); loops report their lines through `say` and stop when the Cancellation is set.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "orchestrate/daemon.hpp"
#include "orchestrate/starlake_job_run.hpp"
#include "service/cancellation.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

// Where the pipeline files are: `folder` when given (relative to the working directory), else the project's
// pipelines/.
struct PipelineFiles {
  WorkspaceOptions workspace;
  std::string folder;
};

// The orchestrator's clock: real time, or real time shifted to start at `now` (or SLUICE_NOW when `now` is empty), so
// tests and replays put the daemon at any instant. Throws RequestError for a malformed datetime.
std::unique_ptr<Clock> OrchestrationClock(const std::string& now);

// Every job of the pipeline files with its options resolved; an option error names the file. Throws SLU-DAEMON-001
// when the folder does not exist.
std::vector<orchestrate::RunnableJob> LoadJobs(const PipelineFiles& files);

// {schedules: [{name, job, cron, timezone, status, next_tick, last_tick}]}.
nlohmann::ordered_json ListSchedules(const PipelineFiles& files, const Clock& clock);
// {schedule, cron, timezone, ticks: [{tick, local, logical_datetime, previous_logical_datetime, closed_day}]}.
// Throws RequestError SLU-DAEMON-002 for an unknown schedule.
nlohmann::ordered_json PreviewSchedule(const PipelineFiles& files, const std::string& name, int count,
                                       const Clock& clock);
// Starts (RUNNING) or stops a schedule or sensor. Throws RequestError SLU-DAEMON-002 for an unknown name.
void SetInstigatorStatus(const PipelineFiles& files, const std::string& name, InstigatorKind kind,
                         InstigatorStatus status, const Clock& clock);

// {sensors: [sensor]}, each with its last evaluation.
nlohmann::ordered_json ListSensors(const PipelineFiles& files);
// {name, job, status, triggering_strategy, cursor, datasets: [{uri, asset, cron, freshness, latest_materialization}],
// ticks: [...]} with its `tick_count` latest evaluations, newest first.
nlohmann::ordered_json ShowSensor(const PipelineFiles& files, const std::string& name, int tick_count);

// The values of a job run's options; throws RequestError for a malformed datetime or --sl-options.
orchestrate::JobRunConfig JobRunConfigOf(const std::string& logical, const std::string& previous, bool dry_run,
                                         const std::string& sl_options);

struct JobRunResult {
  std::string run_id;
  std::string job;
  bool queued = false;  // left for the daemon
  RunStatus status = RunStatus::kQueued;
  std::string error;
};
// Runs one job now in this process (`on_started` once its run is recorded), or queues it for the daemon. Throws
// RequestError SLU-DAEMON-002 for an unknown job.
JobRunResult RunJob(const PipelineFiles& files, const std::string& job_name, const orchestrate::JobRunConfig& config,
                    bool queue, const Clock& clock, Cancellation& cancellation,
                    const std::function<void(const std::string& run_id)>& on_started);
nlohmann::ordered_json ToJson(const JobRunResult& result);

std::vector<WorkerRecord> ListWorkers(const WorkspaceOptions& workspace);
nlohmann::ordered_json ToJson(const std::vector<WorkerRecord>& workers);

// Claims queued runs until canceled (or, with `until_idle`, until nothing is queued or running), a heartbeat every
// `heartbeat`. Returns 0, or 1 when the daemon found this worker dead and it stopped.
int RunWorker(const PipelineFiles& files, const orchestrate::WorkerSettings& settings,
              std::chrono::milliseconds heartbeat, bool until_idle, Cancellation& cancellation,
              const std::function<void(const std::string& line)>& say);

// Runs schedules, sensors and queued runs until canceled or `until`. Throws SLU-DAEMON-004 when another daemon holds
// the state store (and `wait` is false).
void RunDaemon(const PipelineFiles& files, const orchestrate::DaemonSettings& settings, bool wait,
               const std::string& now, const std::string& until, Cancellation& cancellation,
               const std::function<void(const std::string& line)>& say);

}  // namespace sluice::service
