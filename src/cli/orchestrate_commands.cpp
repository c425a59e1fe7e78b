#include "cli/orchestrate_commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/cancel_on_signal.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/environment.hpp"
#include "core/logical_datetime.hpp"
#include "core/tick_plan.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/daemon.hpp"
#include "orchestrate/pipeline_file.hpp"
#include "orchestrate/starlake_job_run.hpp"
#include "state/open_state_store.hpp"

namespace sluice::cli {

namespace {

using json = nlohmann::ordered_json;
using orchestrate::RunnableJob;
using std::chrono::system_clock;

// Calls `f`; an Error it throws is about what was typed (a flag's value), so it becomes a UsageError (exit 2).
template <typename F>
auto AsUsage(F&& f) {
  try {
    return f();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& error) {
    throw UsageError(error.diagnostics());
  }
}

// The clock of the orchestrator's commands: real time, or real time shifted to start at `--now` (or SLUICE_NOW), so
// tests and replays put the daemon at any instant.
std::unique_ptr<Clock> ClockFor(const std::string& now_flag) {
  std::string now = now_flag;
  if (now.empty()) {
    if (const char* env = std::getenv("SLUICE_NOW"); env != nullptr) now = env;
  }
  if (now.empty()) return std::make_unique<SystemClock>();
  return std::make_unique<ShiftedClock>(AsUsage([&] { return ParseLogicalDatetime(now); }));
}

std::filesystem::path PipelineFolder(const GlobalOptions& global, const std::string& flag) {
  if (!flag.empty()) return std::filesystem::absolute(flag);
  return ProjectRootFor(global) / "pipelines";
}

// Every job of the pipeline files with its options resolved; an option error names the file.
std::vector<RunnableJob> LoadJobs(const std::filesystem::path& folder) {
  if (!std::filesystem::is_directory(folder)) {
    throw Error(Diagnostic{"SLU-DAEMON-001",
                           "there is no pipelines folder " + folder.string(),
                           {},
                           "write pipeline files there, e.g. `sluice starlake import dags/load.py`, or name the "
                           "folder with --pipelines",
                           {}});
  }
  std::vector<RunnableJob> jobs;
  const EnvironmentLookup environment = ProcessEnvironment();
  for (const orchestrate::StarlakeDagFile& file : orchestrate::ReadPipelineFolder(folder)) {
    try {
      orchestrate::JobOptions resolved = orchestrate::ResolveJobOptions(file.options, environment);
      orchestrate::ExecutorSettings executor = orchestrate::ResolveExecutorSettings(file.options, environment);
      // The sentinel's scheme must be one the executor reaches (SLU-PRELOAD-003), checked before any run.
      ResolveSentinelPath(resolved.preload.sentinel_location, "domain", executor.kind);
      for (orchestrate::StarlakeJob& job : orchestrate::BuildStarlakeJobGraph(file).jobs) {
        jobs.push_back(RunnableJob{std::move(job), file.options, resolved, executor});
      }
    } catch (const Error& error) {
      std::vector<Diagnostic> located = error.diagnostics();
      for (Diagnostic& diagnostic : located) {
        if (!diagnostic.location.known()) diagnostic.location.file = (folder / (file.pipeline_id + ".yml")).string();
      }
      throw Error(located);
    }
  }
  return jobs;
}

std::unique_ptr<StateStore> OpenStore(const GlobalOptions& global) { return OpenStateStoreFor(global); }

const RunnableJob& FindJob(const std::vector<RunnableJob>& jobs, const std::string& name) {
  std::string known;
  for (const RunnableJob& job : jobs) {
    if (job.job.name == name) return job;
    known += (known.empty() ? "" : ", ") + job.job.name;
  }
  throw UsageError(Diagnostic{"SLU-DAEMON-002",
                              "no job named " + name,
                              {},
                              known.empty() ? "the pipeline files define no job" : "the jobs are: " + known,
                              {}});
}

struct Instigator {
  const RunnableJob* job = nullptr;
  std::string name;
  InstigatorKind kind = InstigatorKind::kSchedule;
};

std::vector<Instigator> Instigators(const std::vector<RunnableJob>& jobs, InstigatorKind kind) {
  std::vector<Instigator> found;
  for (const RunnableJob& job : jobs) {
    if (kind == InstigatorKind::kSchedule && job.job.cron) {
      found.push_back({&job, orchestrate::ScheduleName(job.job), kind});
    }
    if (kind == InstigatorKind::kSensor && !job.job.cron && !job.job.sensor_datasets.empty()) {
      found.push_back({&job, orchestrate::SensorName(job.job), kind});
    }
  }
  return found;
}

const Instigator& FindInstigator(const std::vector<Instigator>& instigators, const std::string& name,
                                 const char* what) {
  std::string known;
  for (const Instigator& instigator : instigators) {
    if (instigator.name == name) return instigator;
    known += (known.empty() ? "" : ", ") + instigator.name;
  }
  throw UsageError(Diagnostic{"SLU-DAEMON-002",
                              std::string("no ") + what + " named " + name,
                              {},
                              known.empty() ? std::string("the pipeline files define no ") + what
                                            : std::string("the ") + what + "s are: " + known,
                              {}});
}

// A schedule or sensor is RUNNING until stopped, also before the daemon has seen it.
std::string StatusOf(StateStore& store, const std::string& name) {
  std::optional<InstigatorState> state = store.GetInstigator(name);
  return InstigatorStatusName(state ? state->status : InstigatorStatus::kRunning);
}

json TickJson(const TickRecord& tick) {
  return json{
      {"tick_time", tick.tick_time}, {"evaluated_at", tick.evaluated_at}, {"status", TickStatusName(tick.status)},
      {"run_ids", tick.run_ids},     {"run_keys", tick.run_keys},         {"skip_reason", tick.skip_reason},
      {"error", tick.error}};
}

std::string TickLine(const TickRecord& tick) {
  std::string line = tick.tick_time + "  " + TickStatusName(tick.status);
  if (!tick.run_ids.empty()) line += "  run " + tick.run_ids.front();
  if (!tick.skip_reason.empty()) line += "  " + tick.skip_reason;
  if (!tick.error.empty()) line += "  error: " + tick.error;
  return line;
}

void Print(const json& value) { std::printf("%s\n", value.dump(2).c_str()); }

int SchedulesList(const GlobalOptions& global, const std::string& pipelines, bool as_json, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  std::unique_ptr<StateStore> store = OpenStore(global);
  json list = json::array();
  for (const Instigator& schedule : Instigators(jobs, InstigatorKind::kSchedule)) {
    const TimeZone zone = TimeZone::Named(schedule.job->resolved.timezone);
    std::optional<system_clock::time_point> next =
        CronSchedule::Parse(*schedule.job->job.cron).NextAfter(clock.Now(), zone);
    // The latest tick by its time: after missed ticks the skipped ones are recorded after the one that fired.
    std::vector<TickRecord> last = store->TicksOf(schedule.name, static_cast<int>(kMaxListedSkippedTicks) + 1);
    std::sort(last.begin(), last.end(),
              [](const TickRecord& a, const TickRecord& b) { return a.tick_time > b.tick_time; });
    list.push_back({{"name", schedule.name},
                    {"job", schedule.job->job.name},
                    {"cron", *schedule.job->job.cron},
                    {"timezone", zone.name()},
                    {"status", StatusOf(*store, schedule.name)},
                    {"next_tick", next ? json(FormatUtc(*next)) : json(nullptr)},
                    {"last_tick", last.empty() ? json(nullptr) : TickJson(last.front())}});
  }
  if (as_json) {
    Print(json{{"schedules", list}});
    return 0;
  }
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

int SetInstigator(const GlobalOptions& global, const std::string& pipelines, const std::string& name,
                  InstigatorKind kind, InstigatorStatus status, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  const std::vector<Instigator> instigators = Instigators(jobs, kind);
  FindInstigator(instigators, name, kind == InstigatorKind::kSchedule ? "schedule" : "sensor");
  std::unique_ptr<StateStore> store = OpenStore(global);
  store->SetInstigatorStatus(name, kind, status, FormatUtc(clock.Now()));
  std::printf("%s %s is %s%s\n", InstigatorKindName(kind).c_str(), name.c_str(), InstigatorStatusName(status).c_str(),
              status == InstigatorStatus::kRunning ? " (from now on: ticks missed while stopped do not fire)" : "");
  return 0;
}

int SchedulesPreview(const GlobalOptions& global, const std::string& pipelines, const std::string& name, int count,
                     bool as_json, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  const std::vector<Instigator> schedules = Instigators(jobs, InstigatorKind::kSchedule);
  const Instigator& schedule = FindInstigator(schedules, name, "schedule");
  const TimeZone zone = TimeZone::Named(schedule.job->resolved.timezone);
  const CronSchedule cron = CronSchedule::Parse(*schedule.job->job.cron);
  json ticks = json::array();
  for (system_clock::time_point tick : cron.Preview(clock.Now(), count, zone)) {
    std::optional<ScheduledInterval> interval = ScheduledDatesRange(cron, tick - std::chrono::seconds(1), zone);
    ticks.push_back({{"tick", FormatUtc(tick)},
                     {"local", FormatLogicalDatetime(tick, zone)},
                     {"logical_datetime", FormatLogicalDatetime(tick, TimeZone::Utc())},
                     {"previous_logical_datetime",
                      interval ? json(FormatLogicalDatetime(interval->end, TimeZone::Utc())) : json(nullptr)},
                     {"closed_day", ClosedDailyPartition(tick, zone).ToString()}});
  }
  if (as_json) {
    Print(json{{"schedule", name}, {"cron", cron.text()}, {"timezone", zone.name()}, {"ticks", ticks}});
    return 0;
  }
  std::printf("%s: %s in %s, the next %d ticks\n", name.c_str(), cron.text().c_str(), zone.name().c_str(), count);
  for (const json& tick : ticks) {
    std::printf("  %s  (%s local)  interval %s .. %s\n", tick["tick"].get<std::string>().c_str(),
                tick["local"].get<std::string>().c_str(),
                tick["previous_logical_datetime"].is_null()
                    ? "-"
                    : tick["previous_logical_datetime"].get<std::string>().c_str(),
                tick["logical_datetime"].get<std::string>().c_str());
  }
  return 0;
}

json SensorJson(StateStore& store, const Instigator& sensor, int tick_count) {
  const RunnableJob& job = *sensor.job;
  std::optional<InstigatorState> state = store.GetInstigator(sensor.name);
  json datasets = json::array();
  for (const orchestrate::StarlakeDatasetRef& dataset : job.job.sensor_datasets) {
    std::optional<AssetMaterializationRecord> latest = store.LatestAssetMaterialization(dataset.uri, 0);
    datasets.push_back({{"uri", dataset.uri},
                        {"asset", dataset.name != dataset.uri ? json(dataset.name) : json(nullptr)},
                        {"cron", dataset.cron ? json(*dataset.cron) : json(nullptr)},
                        {"freshness", dataset.freshness},
                        {"latest_materialization", latest ? json{{"sequence", latest->sequence},
                                                                 {"partition", latest->partition},
                                                                 {"run_id", latest->run_id},
                                                                 {"at", latest->at}}
                                                          : json(nullptr)}});
  }
  json ticks = json::array();
  for (const TickRecord& tick : store.TicksOf(sensor.name, tick_count)) ticks.push_back(TickJson(tick));
  return json{{"name", sensor.name},
              {"job", job.job.name},
              {"status", StatusOf(store, sensor.name)},
              {"triggering_strategy", job.resolved.triggering_strategy},
              {"cursor", state ? state->cursor : ""},
              {"datasets", datasets},
              {"ticks", ticks}};
}

int SensorsList(const GlobalOptions& global, const std::string& pipelines, bool as_json) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  std::unique_ptr<StateStore> store = OpenStore(global);
  json list = json::array();
  for (const Instigator& sensor : Instigators(jobs, InstigatorKind::kSensor)) {
    list.push_back(SensorJson(*store, sensor, 1));
  }
  if (as_json) {
    Print(json{{"sensors", list}});
    return 0;
  }
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

int SensorsShow(const GlobalOptions& global, const std::string& pipelines, const std::string& name, int tick_count,
                bool as_json) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  const std::vector<Instigator> sensors = Instigators(jobs, InstigatorKind::kSensor);
  const Instigator& sensor = FindInstigator(sensors, name, "sensor");
  std::unique_ptr<StateStore> store = OpenStore(global);
  const json shown = SensorJson(*store, sensor, tick_count);
  if (as_json) {
    Print(shown);
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
  for (const TickRecord& tick : store->TicksOf(name, tick_count)) std::printf("  %s\n", TickLine(tick).c_str());
  return 0;
}

orchestrate::JobRunConfig RunConfigOf(const std::string& logical, const std::string& previous, bool dry_run,
                                      const std::string& sl_options) {
  orchestrate::JobRunConfig config;
  AsUsage([&] {
    if (!logical.empty()) config.logical_datetime = ParseLogicalDatetime(logical);
    if (!previous.empty()) config.previous_logical_datetime = ParseLogicalDatetime(previous);
    if (!sl_options.empty()) config.sl_options = orchestrate::ParseSlOptions(sl_options);
    return 0;
  });
  config.dry_run = dry_run;
  return config;
}

int StarlakeRun(const GlobalOptions& global, const std::string& pipelines, const std::string& job_name,
                const orchestrate::JobRunConfig& config, bool queue, bool as_json, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  const RunnableJob& job = FindJob(jobs, job_name);
  std::unique_ptr<StateStore> store = OpenStore(global);
  RunRecord run;
  run.run_id = NewRunId(clock);
  run.selection = job.job.name;
  run.job = job.job.name;
  run.created_at = FormatUtc(clock.Now());
  run.tags = orchestrate::RunConfigTags(config);
  run.tags["sluice/job"] = job.job.name;
  run.tags["sluice/trigger"] = "manual";
  if (queue) {  // pid 0: the daemon starts it
    store->CreateRun(run);
    if (as_json) {
      Print(json{{"run_id", run.run_id}, {"status", "QUEUED"}});
    } else {
      std::printf("queued run %s of %s; a running `sluice daemon` starts it\n", run.run_id.c_str(),
                  job.job.name.c_str());
    }
    return 0;
  }
  CancelOnSignal signals;
  run.pid = getpid();
  run.pid_start_time = ProcessStartTime(run.pid);
  store->CreateRun(run);
  store->MarkStarted(run.run_id, FormatUtc(clock.Now()));
  std::fprintf(stderr, "run %s of %s\n", run.run_id.c_str(), job.job.name.c_str());
  const std::atomic<bool> never{false};
  orchestrate::JobRunContext context = orchestrate::LocalJobRunContext(*store, clock, &signals.canceled(), &never);
  const orchestrate::JobRunOutcome outcome = orchestrate::RunStarlakeJob(job, run.run_id, config, context);
  store->FinishRun(run.run_id, outcome.status, FormatUtc(clock.Now()), outcome.error);
  store->Append(run.run_id, FormatUtc(clock.Now()), RunFinishedEvent{RunStatusName(outcome.status), outcome.error});
  if (as_json) {
    Print(json{{"run_id", run.run_id}, {"status", RunStatusName(outcome.status)}, {"error", outcome.error}});
  } else {
    std::printf("run %s %s%s%s\n", run.run_id.c_str(), RunStatusName(outcome.status).c_str(),
                outcome.error.empty() ? "" : ": ", outcome.error.c_str());
  }
  if (outcome.status == RunStatus::kCanceled) return 130;
  return outcome.status == RunStatus::kSuccess ? 0 : 1;
}

// `sluice workers`: the registered workers (the daemon's own included), with their last heartbeat.
int WorkersList(const GlobalOptions& global, bool as_json) {
  std::unique_ptr<StateStore> store = OpenStore(global);
  const std::vector<WorkerRecord> workers = store->ListWorkers();
  if (as_json) {
    json list = json::array();
    for (const WorkerRecord& worker : workers) {
      list.push_back({{"worker_id", worker.worker_id},
                      {"host", worker.host},
                      {"pid", worker.pid},
                      {"started_at", worker.started_at},
                      {"heartbeat_at", worker.heartbeat_at}});
    }
    Print(json{{"workers", list}});
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

// Runs a job run in this process, the Starlake commands as child processes.
orchestrate::RunLauncher JobLauncher(StateStore& store, const Clock& clock) {
  return [&store, &clock](const RunnableJob& job, const RunRecord& run, const orchestrate::JobRunConfig& config,
                          const std::atomic<bool>& cancel) {
    static const std::atomic<bool> never{false};
    orchestrate::JobRunContext context = orchestrate::LocalJobRunContext(store, clock, &cancel, &never);
    return orchestrate::RunStarlakeJob(job, run.run_id, config, context);
  };
}

// `sluice worker`: claims queued runs until SIGTERM (or, with --until-idle, until nothing is queued or running).
int Worker(const GlobalOptions& global, const std::string& pipelines, const orchestrate::WorkerSettings& settings,
           std::chrono::milliseconds heartbeat, bool until_idle) {
  const std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  std::unique_ptr<Clock> clock = ClockFor("");
  CancelOnSignal signals;
  std::unique_ptr<StateStore> store = OpenStore(global);
  orchestrate::RunWorker worker(*store, *clock, jobs, settings, JobLauncher(*store, *clock));
  auto say = [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  };
  worker.Heartbeat();
  say("worker " + worker.identity().worker_id + " started: " + std::to_string(jobs.size()) + " jobs, up to " +
      std::to_string(settings.max_concurrent_runs) + " runs at once");
  int code = 0;
  while (!signals.canceled().load()) {
    try {
      worker.Heartbeat();
    } catch (const Error& error) {
      say(std::string("worker stopping: ") + error.what());
      code = 1;
      break;
    }
    for (const std::string& run_id : worker.ClaimAndStart()) say("started run " + run_id);
    if (until_idle && worker.RunningCount() == 0 && store->UnclaimedQueuedRuns().empty()) break;
    // Until the next heartbeat, or sooner when one of its runs ends: a short run need not wait a whole heartbeat.
    const auto pause_until = std::chrono::steady_clock::now() + heartbeat;
    const int running = worker.RunningCount();
    while (!signals.canceled().load() && std::chrono::steady_clock::now() < pause_until &&
           worker.RunningCount() >= running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (signals.canceled().load() && worker.RunningCount() > 0) {
    say("stopping: " + std::to_string(worker.RunningCount()) + " running runs finish their task in flight");
  }
  if (signals.canceled().load() || code != 0) worker.CancelRuns();
  worker.WaitForRuns();
  say("worker stopped");
  return code;
}

int Daemon(const GlobalOptions& global, const std::string& pipelines, orchestrate::DaemonSettings settings, bool wait,
           const std::string& now_flag, const std::string& until_flag) {
  std::unique_ptr<Clock> clock = ClockFor(now_flag);
  std::optional<system_clock::time_point> until;
  if (!until_flag.empty()) until = AsUsage([&] { return ParseLogicalDatetime(until_flag); });
  std::vector<RunnableJob> jobs = LoadJobs(PipelineFolder(global, pipelines));
  CancelOnSignal signals;
  std::unique_ptr<StateStore> store = OpenStore(global);
  orchestrate::Daemon daemon(*store, *clock, std::move(jobs), settings, JobLauncher(*store, *clock));
  std::string message;
  const int code = daemon.Run(signals.canceled(), wait, until, message, [](const std::string& line) {
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
  });
  if (code != 0) {
    throw Error(Diagnostic{"SLU-DAEMON-004",
                           message,
                           {},
                           "one daemon runs per state store; stop the other one, or pass --wait to take over when it "
                           "stops",
                           {}});
  }
  return 0;
}

}  // namespace

OrchestrateCommands::OrchestrateCommands(CLI::App& app, CLI::App& starlake) {
  const char* pipelines_help = "Folder of the pipeline files (default: pipelines/ in the project)";
  daemon_cmd_ = app.add_subcommand(
      "daemon", "Run the schedules and dataset sensors of the pipeline files and the runs they request, until SIGTERM");
  daemon_cmd_->add_option("--pipelines", daemon_.pipelines, pipelines_help);
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

  worker_cmd_ = app.add_subcommand(
      "worker", "Claim the queued runs of the state store and run them here, until SIGTERM (start several, on any "
                "machine that reaches a PostgreSQL state store)");
  worker_cmd_->add_option("--pipelines", worker_.pipelines, pipelines_help);
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
    command->add_option("--pipelines", schedule_.pipelines, pipelines_help);
  }
  for (CLI::App* command : {schedules_start_, schedules_stop_, schedules_preview_}) {
    command->add_option("name", schedule_.name, "The schedule (<job>_schedule)")->required();
  }

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
    command->add_option("--pipelines", schedule_.pipelines, pipelines_help);
  }

  starlake_run_ = starlake.add_subcommand(
      "run", "Run one job of the pipeline files now, in the foreground (or --queue it for the daemon)");
  starlake_run_->add_option("job", run_.job, "The job")->required();
  starlake_run_->add_option("--pipelines", run_.pipelines, pipelines_help);
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
      settings.tag_limits.push_back(AsUsage([&] { return orchestrate::ParseTagLimit(limit); }));
    }
    settings.local_runs = !daemon_.external_workers;
    settings.worker_stale_after = std::chrono::seconds(daemon_.worker_stale_after_s);
    settings.lost_run_retries = daemon_.lost_run_retries;
    return Daemon(global, daemon_.pipelines, settings, daemon_.wait, daemon_.now, daemon_.until);
  }
  if (workers_cmd_->parsed()) return WorkersList(global, worker_.json);
  if (worker_cmd_->parsed()) {
    orchestrate::WorkerSettings settings;
    settings.max_concurrent_runs = worker_.max_concurrent_runs;
    for (const std::string& limit : worker_.tag_limits) {
      settings.tag_limits.push_back(AsUsage([&] { return orchestrate::ParseTagLimit(limit); }));
    }
    return Worker(global, worker_.pipelines, settings, std::chrono::milliseconds(worker_.heartbeat_ms),
                  worker_.until_idle);
  }
  std::unique_ptr<Clock> clock = ClockFor("");
  if (schedules_list_->parsed()) return SchedulesList(global, schedule_.pipelines, schedule_.json, *clock);
  if (schedules_start_->parsed() || schedules_stop_->parsed()) {
    return SetInstigator(global, schedule_.pipelines, schedule_.name, InstigatorKind::kSchedule,
                         schedules_start_->parsed() ? InstigatorStatus::kRunning : InstigatorStatus::kStopped, *clock);
  }
  if (schedules_preview_->parsed()) {
    return SchedulesPreview(global, schedule_.pipelines, schedule_.name, schedule_.count, schedule_.json, *clock);
  }
  if (sensors_list_->parsed()) return SensorsList(global, schedule_.pipelines, schedule_.json);
  if (sensors_show_->parsed()) {
    return SensorsShow(global, schedule_.pipelines, schedule_.name, schedule_.ticks, schedule_.json);
  }
  if (starlake_run_->parsed()) {
    const orchestrate::JobRunConfig config =
        RunConfigOf(run_.logical_datetime, run_.previous_logical_datetime, run_.dry_run, run_.sl_options);
    return StarlakeRun(global, run_.pipelines, run_.job, config, run_.queue, run_.json, *clock);
  }
  return std::nullopt;
}

}  // namespace sluice::cli
