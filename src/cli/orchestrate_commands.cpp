// The orchestrator's commands (service/orchestration.hpp): flags, then the service's documents printed as tables
// and lines, or as JSON.
#include "cli/orchestrate_commands.hpp"

#include <cstdio>

#include "cli/cancel_on_signal.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "service/orchestration.hpp"

namespace sluice::cli {

namespace {

using json = nlohmann::ordered_json;
using service::PipelineFiles;

void Say(const std::string& line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

int SchedulesList(const PipelineFiles& files, bool as_json, const Clock& clock) {
  const json document = service::ListSchedules(files, clock);
  if (as_json) {
    PrintJson(document);
    return 0;
  }
  const json& list = document["schedules"];
  if (list.empty()) std::printf("no schedules: no pipeline job has a cron\n");
  for (const json& schedule : list) {
    std::printf("%-32s %-8s %-14s %-16s next %s\n", schedule["name"].get<std::string>().c_str(),
                schedule["status"].get<std::string>().c_str(), schedule["cron"].get<std::string>().c_str(),
                schedule["timezone"].get<std::string>().c_str(),
                schedule["next_tick"].is_null() ? "-" : schedule["next_tick"].get<std::string>().c_str());
    if (!schedule["last_tick"].is_null()) {
      const json& tick = schedule["last_tick"];
      std::printf("    last tick %s %s %s\n", tick["tick_time"].get<std::string>().c_str(),
                  tick["status"].get<std::string>().c_str(), tick["skip_reason"].get<std::string>().c_str());
    }
  }
  return 0;
}

int SetInstigator(const PipelineFiles& files, const std::string& name, InstigatorKind kind, InstigatorStatus status,
                  const Clock& clock) {
  service::SetInstigatorStatus(files, name, kind, status, clock);
  std::printf("%s %s is %s%s\n", InstigatorKindName(kind).c_str(), name.c_str(), InstigatorStatusName(status).c_str(),
              status == InstigatorStatus::kRunning ? " (from now on: ticks missed while stopped do not fire)" : "");
  return 0;
}

int SchedulesPreview(const PipelineFiles& files, const std::string& name, int count, bool as_json, const Clock& clock) {
  const json document = service::PreviewSchedule(files, name, count, clock);
  if (as_json) {
    PrintJson(document);
    return 0;
  }
  std::printf("%s: %s in %s, the next %d ticks\n", name.c_str(), document["cron"].get<std::string>().c_str(),
              document["timezone"].get<std::string>().c_str(), count);
  for (const json& tick : document["ticks"]) {
    std::printf("  %s  (%s local)  interval %s .. %s\n", tick["tick"].get<std::string>().c_str(),
                tick["local"].get<std::string>().c_str(),
                tick["previous_logical_datetime"].is_null()
                    ? "-"
                    : tick["previous_logical_datetime"].get<std::string>().c_str(),
                tick["logical_datetime"].get<std::string>().c_str());
  }
  return 0;
}

int SensorsList(const PipelineFiles& files, bool as_json) {
  const json document = service::ListSensors(files);
  if (as_json) {
    PrintJson(document);
    return 0;
  }
  const json& list = document["sensors"];
  if (list.empty()) std::printf("no sensors: no pipeline job is triggered by datasets\n");
  for (const json& sensor : list) {
    std::string uris;
    for (const json& dataset : sensor["datasets"])
      uris += (uris.empty() ? "" : ", ") + dataset["uri"].get<std::string>();
    std::printf("%-32s %-8s %s of [%s]\n", sensor["name"].get<std::string>().c_str(),
                sensor["status"].get<std::string>().c_str(), sensor["triggering_strategy"].get<std::string>().c_str(),
                uris.c_str());
    if (!sensor["ticks"].empty()) {
      const json& tick = sensor["ticks"].front();
      std::printf("    last evaluation %s %s %s%s\n", tick["evaluated_at"].get<std::string>().c_str(),
                  tick["status"].get<std::string>().c_str(), tick["skip_reason"].get<std::string>().c_str(),
                  tick["error"].get<std::string>().c_str());
    }
  }
  return 0;
}

std::string TickLine(const json& tick) {
  std::string line = tick["tick_time"].get<std::string>() + "  " + tick["status"].get<std::string>();
  if (!tick["run_ids"].empty()) line += "  run " + tick["run_ids"].front().get<std::string>();
  if (!tick["skip_reason"].get<std::string>().empty()) line += "  " + tick["skip_reason"].get<std::string>();
  if (!tick["error"].get<std::string>().empty()) line += "  error: " + tick["error"].get<std::string>();
  return line;
}

int SensorsShow(const PipelineFiles& files, const std::string& name, int tick_count, bool as_json) {
  const json shown = service::ShowSensor(files, name, tick_count);
  if (as_json) {
    PrintJson(shown);
    return 0;
  }
  std::printf("%s (job %s): %s, %s of its datasets, cursor %s\n", name.c_str(), shown["job"].get<std::string>().c_str(),
              shown["status"].get<std::string>().c_str(), shown["triggering_strategy"].get<std::string>().c_str(),
              shown["cursor"].get<std::string>().empty() ? "(none)" : shown["cursor"].get<std::string>().c_str());
  for (const json& dataset : shown["datasets"]) {
    const json& latest = dataset["latest_materialization"];
    const std::string uri = dataset["uri"].get<std::string>();
    const std::string shown_uri =
        dataset["asset"].is_null() ? uri : uri + " (" + dataset["asset"].get<std::string>() + ")";
    std::printf(
        "  %-32s cron %-12s latest %s\n", shown_uri.c_str(),
        dataset["cron"].is_null() ? "-" : dataset["cron"].get<std::string>().c_str(),
        latest.is_null()
            ? "never materialized"
            : (latest["partition"].get<std::string>() + " (run " + latest["run_id"].get<std::string>() + ")").c_str());
  }
  std::printf("evaluations, newest first:\n");
  for (const json& tick : shown["ticks"]) std::printf("  %s\n", TickLine(tick).c_str());
  return 0;
}

int StarlakeRun(const PipelineFiles& files, const std::string& job_name, const orchestrate::JobRunConfig& config,
                bool queue, bool as_json, const Clock& clock) {
  CancelOnSignal signals(CancelOnSignal::Arming::kWhenAsked);
  const service::JobRunResult result = service::RunJob(
      files, job_name, config, queue, clock, signals,
      [&](const std::string& run_id) { std::fprintf(stderr, "run %s of %s\n", run_id.c_str(), job_name.c_str()); });
  if (as_json) {
    PrintJson(service::ToJson(result));
  } else if (result.queued) {
    std::printf("queued run %s of %s; a running `sluice daemon` starts it\n", result.run_id.c_str(),
                result.job.c_str());
  } else {
    std::printf("run %s %s%s%s\n", result.run_id.c_str(), RunStatusName(result.status).c_str(),
                result.error.empty() ? "" : ": ", result.error.c_str());
  }
  return result.queued ? 0 : ExitCodeFor(result.status);
}

// `sluice workers`: the registered workers (the daemon's own included), with their last heartbeat.
int WorkersList(const GlobalOptions& global, bool as_json) {
  const std::vector<WorkerRecord> workers = service::ListWorkers(global);
  if (as_json) {
    PrintJson(service::ToJson(workers));
    return 0;
  }
  if (workers.empty()) {
    std::printf("no worker is registered (start one with `sluice worker`)\n");
    return 0;
  }
  std::printf("%-40s %-24s %s\n", "WORKER", "STARTED", "LAST HEARTBEAT");
  for (const WorkerRecord& worker : workers) {
    std::printf("%-40s %-24s %s\n", worker.worker_id.c_str(), worker.started_at.c_str(), worker.heartbeat_at.c_str());
  }
  return 0;
}

}  // namespace

namespace {

constexpr const char* kPipelinesHelp = "Folder of the pipeline files (default: pipelines/ in the project)";

}  // namespace

OrchestrateCommands::OrchestrateCommands(CLI::App& app, CLI::App& starlake) {
  AddDaemon(app);
  AddWorkers(app);
  AddSchedules(app);
  AddSensors(app);
  AddStarlakeRun(starlake);
}

void OrchestrateCommands::AddDaemon(CLI::App& app) {
  daemon_cmd_ = app.add_subcommand(
      "daemon", "Run the schedules and dataset sensors of the pipeline files and the runs they request, until SIGTERM");
  daemon_cmd_->add_option("--pipelines", daemon_.pipelines, kPipelinesHelp);
  daemon_cmd_->add_option("--interval", daemon_.interval_ms, "Milliseconds between two passes (default 1000)")
      ->check(CLI::Range(10, 3'600'000));
  daemon_cmd_
      ->add_option("--sensor-interval", daemon_.sensor_interval_s,
                   "Least seconds between two evaluations of one sensor (default 30)")
      ->check(CLI::Range(0, 86'400));
  daemon_cmd_->add_option("--max-concurrent-runs", daemon_.max_concurrent_runs, "Runs at once (default 4)")
      ->check(CLI::Range(1, 1000));
  daemon_cmd_->add_option("--tag-limit", daemon_.tag_limits,
                          "KEY=N or KEY:VALUE=N: at most N runs with that tag at once (repeatable); runs carry "
                          "sluice/job and sluice/trigger");
  daemon_cmd_->add_flag("--wait", daemon_.wait,
                        "When another daemon is active, wait for it to stop instead of exiting");
  daemon_cmd_->add_option("--now", daemon_.now,
                          "Start the clock at this datetime (tests and replays; also SLUICE_NOW); it then runs in "
                          "real time");
  daemon_cmd_->add_option("--until", daemon_.until,
                          "Stop once the clock passes this datetime and no run is queued or running");
  daemon_cmd_->add_flag("--external-workers", daemon_.external_workers,
                        "Leave the queued runs to `sluice worker` processes (on this or other machines sharing the "
                        "state store); the daemon evaluates schedules and sensors and recovers the runs of dead "
                        "workers");
  daemon_cmd_
      ->add_option("--worker-stale-after", daemon_.worker_stale_after_s,
                   "Seconds without a heartbeat after which a worker is dead (default 60; on PostgreSQL a worker "
                   "whose session ended is dead at once)")
      ->check(CLI::Range(1, 86'400));
  daemon_cmd_
      ->add_option("--retry-lost-runs", daemon_.lost_run_retries,
                   "Times a run whose worker died is queued again (default 0: it ends FAILURE)")
      ->check(CLI::Range(0, 100));
  daemon_cmd_->footer(
      "Exit codes: 0 stopped (SIGTERM/SIGINT: running runs finish their task in flight and end CANCELED); 1 another "
      "daemon holds this state store, or a pipeline file is invalid.");
}

void OrchestrateCommands::AddWorkers(CLI::App& app) {
  worker_cmd_ = app.add_subcommand(
      "worker",
      "Claim the queued runs of the state store and run them here, until SIGTERM (start several, on any "
      "machine that reaches a PostgreSQL state store)");
  worker_cmd_->add_option("--pipelines", worker_.pipelines, kPipelinesHelp);
  worker_cmd_
      ->add_option("--max-concurrent-runs", worker_.max_concurrent_runs, "Runs of this worker at once (default 4)")
      ->check(CLI::Range(1, 1000));
  worker_cmd_->add_option("--tag-limit", worker_.tag_limits,
                          "KEY=N or KEY:VALUE=N: at most N runs with that tag at once over every worker (repeatable; "
                          "give every worker and the daemon the same limits)");
  worker_cmd_->add_option("--heartbeat", worker_.heartbeat_ms, "Milliseconds between two heartbeats (default 1000)")
      ->check(CLI::Range(10, 60'000));
  worker_cmd_->add_flag("--until-idle", worker_.until_idle,
                        "Exit once no run is queued and none of this worker's runs is running");
  worker_cmd_->footer(
      "Exit codes: 0 stopped (SIGTERM/SIGINT: running runs finish their task in flight and end CANCELED; "
      "--until-idle: the queue is empty); 1 the worker was found dead by the daemon (silent too long) and stopped, "
      "or a pipeline file is invalid.");

  workers_cmd_ = app.add_subcommand("workers", "List the workers registered in the state store");
  workers_cmd_->add_flag("--json", worker_.json, "Print JSON");
}

void OrchestrateCommands::AddSchedules(CLI::App& app) {
  CLI::App* schedules = app.add_subcommand("schedules", "The cron schedules of the pipeline jobs");
  schedules->require_subcommand(1);
  schedules_list_ = schedules->add_subcommand("list", "Every schedule: status, cron, zone, next and last tick");
  schedules_list_->add_flag("--json", schedule_.json, "Print JSON");
  schedules_start_ = schedules->add_subcommand("start", "Let a schedule fire (from now on)");
  schedules_stop_ = schedules->add_subcommand("stop", "Stop a schedule; the daemon records no ticks for it");
  schedules_preview_ = schedules->add_subcommand("preview", "The next ticks of a schedule and the interval each runs");
  schedules_preview_->add_option("-n,--count", schedule_.count, "How many ticks (default 5)")
      ->check(CLI::Range(1, 1000));
  schedules_preview_->add_flag("--json", schedule_.json, "Print JSON");
  for (CLI::App* command : {schedules_list_, schedules_start_, schedules_stop_, schedules_preview_}) {
    command->add_option("--pipelines", schedule_.pipelines, kPipelinesHelp);
  }
  for (CLI::App* command : {schedules_start_, schedules_stop_, schedules_preview_}) {
    command->add_option("name", schedule_.name, "The schedule (<job>_schedule)")->required();
  }
}

void OrchestrateCommands::AddSensors(CLI::App& app) {
  CLI::App* sensors = app.add_subcommand("sensors", "The dataset sensors of the pipeline jobs");
  sensors->require_subcommand(1);
  sensors_list_ = sensors->add_subcommand("list", "Every sensor: status, datasets and its last evaluation");
  sensors_list_->add_flag("--json", schedule_.json, "Print JSON");
  sensors_show_ = sensors->add_subcommand(
      "show", "One sensor: its datasets with their latest materialization, and its evaluations with skip reasons");
  sensors_show_->add_option("name", schedule_.name, "The sensor (<job>_sensor)")->required();
  sensors_show_->add_option("-n,--ticks", schedule_.ticks, "How many evaluations (default 10)")
      ->check(CLI::Range(1, 10'000));
  sensors_show_->add_flag("--json", schedule_.json, "Print JSON");
  for (CLI::App* command : {sensors_list_, sensors_show_}) {
    command->add_option("--pipelines", schedule_.pipelines, kPipelinesHelp);
  }
}

void OrchestrateCommands::AddStarlakeRun(CLI::App& starlake) {
  starlake_run_ = starlake.add_subcommand(
      "run", "Run one job of the pipeline files now, in the foreground (or --queue it for the daemon)");
  starlake_run_->add_option("job", run_.job, "The job")->required();
  starlake_run_->add_option("--pipelines", run_.pipelines, kPipelinesHelp);
  starlake_run_->add_option("--logical-datetime", run_.logical_datetime,
                            "The run's logical datetime (default: now), e.g. 2026-07-18T00:00:00+00:00");
  starlake_run_->add_option("--previous-logical-datetime", run_.previous_logical_datetime,
                            "The start of the data interval transforms receive");
  starlake_run_->add_flag("--dry-run", run_.dry_run,
                          "Run nothing; log each command and record dry-run materializations");
  starlake_run_->add_option("--sl-options", run_.sl_options,
                            "JSON {\"all\": {k: v}, \"<task>\": {k: v}} appended to transforms' --options");
  starlake_run_->add_flag("--queue", run_.queue, "Queue the run for the daemon instead of running it here");
  starlake_run_->add_flag("--json", run_.json, "Print JSON");
  starlake_run_->footer("Exit codes: 0 the run succeeded (or was queued); 1 it failed; 130 canceled by a signal.");
}

std::optional<int> OrchestrateCommands::Dispatch(const GlobalOptions& global) {
  if (daemon_cmd_->parsed()) {
    orchestrate::DaemonSettings settings;
    settings.pass_interval = std::chrono::milliseconds(daemon_.interval_ms);
    settings.sensor_interval = std::chrono::seconds(daemon_.sensor_interval_s);
    settings.max_concurrent_runs = daemon_.max_concurrent_runs;
    for (const std::string& limit : daemon_.tag_limits) {
      settings.tag_limits.push_back(AsRequestError([&] { return orchestrate::ParseTagLimit(limit); }));
    }
    settings.local_runs = !daemon_.external_workers;
    settings.worker_stale_after = std::chrono::seconds(daemon_.worker_stale_after_s);
    settings.lost_run_retries = daemon_.lost_run_retries;
    CancelOnSignal signals(CancelOnSignal::Arming::kWhenAsked);
    service::RunDaemon({global, daemon_.pipelines}, settings, daemon_.wait, daemon_.now, daemon_.until, signals, Say);
    return 0;
  }
  if (workers_cmd_->parsed()) return WorkersList(global, worker_.json);
  if (worker_cmd_->parsed()) {
    orchestrate::WorkerSettings settings;
    settings.max_concurrent_runs = worker_.max_concurrent_runs;
    for (const std::string& limit : worker_.tag_limits) {
      settings.tag_limits.push_back(AsRequestError([&] { return orchestrate::ParseTagLimit(limit); }));
    }
    CancelOnSignal signals(CancelOnSignal::Arming::kWhenAsked);
    return service::RunWorker({global, worker_.pipelines}, settings, std::chrono::milliseconds(worker_.heartbeat_ms),
                              worker_.until_idle, signals, Say);
  }
  std::unique_ptr<Clock> clock = service::OrchestrationClock("");
  const PipelineFiles files{global, schedule_.pipelines};
  if (schedules_list_->parsed()) return SchedulesList(files, schedule_.json, *clock);
  if (schedules_start_->parsed() || schedules_stop_->parsed()) {
    return SetInstigator(files, schedule_.name, InstigatorKind::kSchedule,
                         schedules_start_->parsed() ? InstigatorStatus::kRunning : InstigatorStatus::kStopped, *clock);
  }
  if (schedules_preview_->parsed())
    return SchedulesPreview(files, schedule_.name, schedule_.count, schedule_.json, *clock);
  if (sensors_list_->parsed()) return SensorsList(files, schedule_.json);
  if (sensors_show_->parsed()) return SensorsShow(files, schedule_.name, schedule_.ticks, schedule_.json);
  if (starlake_run_->parsed()) {
    const orchestrate::JobRunConfig config =
        service::JobRunConfigOf(run_.logical_datetime, run_.previous_logical_datetime, run_.dry_run, run_.sl_options);
    return StarlakeRun({global, run_.pipelines}, run_.job, config, run_.queue, run_.json, *clock);
  }
  return std::nullopt;
}

}  // namespace sluice::cli
