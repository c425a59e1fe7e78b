#include "service/orchestration.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "core/cron_schedule.hpp"
#include "core/environment.hpp"
#include "core/logical_datetime.hpp"
#include "core/text.hpp"
#include "core/tick_plan.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/pipeline_file.hpp"
#include "service/request_error.hpp"

namespace sluice::service {

namespace {

using json = nlohmann::ordered_json;
using orchestrate::RunnableJob;
using std::chrono::system_clock;

std::filesystem::path PipelineFolder(const PipelineFiles& files) {
  if (!files.folder.empty()) return std::filesystem::absolute(files.folder);
  return ProjectRootFor(files.workspace) / "pipelines";
}

// SLU-DAEMON-002: no `what` (job, schedule, sensor) is called `name`; the hint lists the `known` ones.
RequestError NotFound(const std::string& what, const std::string& name, const std::vector<std::string>& known) {
  return RequestError(
      Diagnostic{"SLU-DAEMON-002",
                 "no " + what + " named " + name,
                 {},
                 known.empty() ? "the pipeline files define no " + what : "the " + what + "s are: " + Join(known, ", "),
                 {}});
}

const RunnableJob& FindJob(const std::vector<RunnableJob>& jobs, const std::string& name) {
  std::vector<std::string> known;
  for (const RunnableJob& job : jobs) {
    if (job.job.name == name) return job;
    known.push_back(job.job.name);
  }
  throw NotFound("job", name, known);
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
  std::vector<std::string> known;
  for (const Instigator& instigator : instigators) {
    if (instigator.name == name) return instigator;
    known.push_back(instigator.name);
  }
  throw NotFound(what, name, known);
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

// Runs a job run in this process, the Starlake commands as child processes.
orchestrate::RunLauncher JobLauncher(StateStore& store, const Clock& clock) {
  return [&store, &clock](const RunnableJob& job, const RunRecord& run, const orchestrate::JobRunConfig& config,
                          const std::atomic<bool>& cancel) {
    static const std::atomic<bool> never{false};
    orchestrate::JobRunContext context = orchestrate::LocalJobRunContext(store, clock, &cancel, &never);
    return orchestrate::RunStarlakeJob(job, run.run_id, config, context);
  };
}

}  // namespace

std::unique_ptr<Clock> OrchestrationClock(const std::string& now_flag) {
  std::string now = now_flag;
  if (now.empty()) {
    if (const char* env = std::getenv("SLUICE_NOW"); env != nullptr) now = env;
  }
  if (now.empty()) return std::make_unique<SystemClock>();
  return std::make_unique<ShiftedClock>(AsRequestError([&] { return ParseLogicalDatetime(now); }));
}

std::vector<RunnableJob> LoadJobs(const PipelineFiles& files) {
  const std::filesystem::path folder = PipelineFolder(files);
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

json ListSchedules(const PipelineFiles& files, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
  std::unique_ptr<StateStore> store = OpenStateStoreFor(files.workspace);
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
  return json{{"schedules", list}};
}

json PreviewSchedule(const PipelineFiles& files, const std::string& name, int count, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
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
  return json{{"schedule", name}, {"cron", cron.text()}, {"timezone", zone.name()}, {"ticks", ticks}};
}

void SetInstigatorStatus(const PipelineFiles& files, const std::string& name, InstigatorKind kind,
                         InstigatorStatus status, const Clock& clock) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
  FindInstigator(Instigators(jobs, kind), name, kind == InstigatorKind::kSchedule ? "schedule" : "sensor");
  OpenStateStoreFor(files.workspace)->SetInstigatorStatus(name, kind, status, FormatUtc(clock.Now()));
}

json ListSensors(const PipelineFiles& files) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
  std::unique_ptr<StateStore> store = OpenStateStoreFor(files.workspace);
  json list = json::array();
  for (const Instigator& sensor : Instigators(jobs, InstigatorKind::kSensor)) {
    list.push_back(SensorJson(*store, sensor, 1));
  }
  return json{{"sensors", list}};
}

json ShowSensor(const PipelineFiles& files, const std::string& name, int tick_count) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
  const std::vector<Instigator> sensors = Instigators(jobs, InstigatorKind::kSensor);
  const Instigator& sensor = FindInstigator(sensors, name, "sensor");
  std::unique_ptr<StateStore> store = OpenStateStoreFor(files.workspace);
  return SensorJson(*store, sensor, tick_count);
}

orchestrate::JobRunConfig JobRunConfigOf(const std::string& logical, const std::string& previous, bool dry_run,
                                         const std::string& sl_options) {
  orchestrate::JobRunConfig config;
  AsRequestError([&] {
    if (!logical.empty()) config.logical_datetime = ParseLogicalDatetime(logical);
    if (!previous.empty()) config.previous_logical_datetime = ParseLogicalDatetime(previous);
    if (!sl_options.empty()) config.sl_options = orchestrate::ParseSlOptions(sl_options);
    return 0;
  });
  config.dry_run = dry_run;
  return config;
}

JobRunResult RunJob(const PipelineFiles& files, const std::string& job_name, const orchestrate::JobRunConfig& config,
                    bool queue, const Clock& clock, Cancellation& cancellation,
                    const std::function<void(const std::string& run_id)>& on_started) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
  const RunnableJob& job = FindJob(jobs, job_name);
  std::unique_ptr<StateStore> store = OpenStateStoreFor(files.workspace);
  RunRecord run;
  run.run_id = NewRunId(clock);
  run.selection = job.job.name;
  run.job = job.job.name;
  run.created_at = FormatUtc(clock.Now());
  run.tags = orchestrate::RunConfigTags(config);
  run.tags["sluice/job"] = job.job.name;
  run.tags["sluice/trigger"] = "manual";
  JobRunResult result{run.run_id, job.job.name, queue, RunStatus::kQueued, ""};
  if (queue) {  // pid 0: the daemon starts it
    store->CreateRun(run);
    return result;
  }
  cancellation.Arm();
  run.pid = getpid();
  run.pid_start_time = ProcessStartTime(run.pid);
  store->CreateRun(run);
  store->MarkStarted(run.run_id, FormatUtc(clock.Now()));
  if (on_started) on_started(run.run_id);
  const std::atomic<bool> never{false};
  orchestrate::JobRunContext context = orchestrate::LocalJobRunContext(*store, clock, &cancellation.canceled(), &never);
  const orchestrate::JobRunOutcome outcome = orchestrate::RunStarlakeJob(job, run.run_id, config, context);
  store->FinishRun(run.run_id, outcome.status, FormatUtc(clock.Now()), outcome.error);
  store->Append(run.run_id, FormatUtc(clock.Now()), RunFinishedEvent{RunStatusName(outcome.status), outcome.error});
  result.status = outcome.status;
  result.error = outcome.error;
  return result;
}

json ToJson(const JobRunResult& result) {
  if (result.queued) return json{{"run_id", result.run_id}, {"status", "QUEUED"}};
  return json{{"run_id", result.run_id}, {"status", RunStatusName(result.status)}, {"error", result.error}};
}

std::vector<WorkerRecord> ListWorkers(const WorkspaceOptions& workspace) {
  return OpenStateStoreFor(workspace)->ListWorkers();
}

json ToJson(const std::vector<WorkerRecord>& workers) {
  json list = json::array();
  for (const WorkerRecord& worker : workers) {
    list.push_back({{"worker_id", worker.worker_id},
                    {"host", worker.host},
                    {"pid", worker.pid},
                    {"started_at", worker.started_at},
                    {"heartbeat_at", worker.heartbeat_at}});
  }
  return json{{"workers", list}};
}

int RunWorker(const PipelineFiles& files, const orchestrate::WorkerSettings& settings,
              std::chrono::milliseconds heartbeat, bool until_idle, Cancellation& cancellation,
              const std::function<void(const std::string& line)>& say) {
  const std::vector<RunnableJob> jobs = LoadJobs(files);
  std::unique_ptr<Clock> clock = OrchestrationClock("");
  cancellation.Arm();
  const std::atomic<bool>& canceled = cancellation.canceled();
  std::unique_ptr<StateStore> store = OpenStateStoreFor(files.workspace);
  orchestrate::RunWorker worker(*store, *clock, jobs, settings, JobLauncher(*store, *clock));
  worker.Heartbeat();
  say("worker " + worker.identity().worker_id + " started: " + std::to_string(jobs.size()) + " jobs, up to " +
      std::to_string(settings.max_concurrent_runs) + " runs at once");
  int code = 0;
  while (!canceled.load()) {
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
    while (!canceled.load() && std::chrono::steady_clock::now() < pause_until && worker.RunningCount() >= running) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (canceled.load() && worker.RunningCount() > 0) {
    say("stopping: " + std::to_string(worker.RunningCount()) + " running runs finish their task in flight");
  }
  if (canceled.load() || code != 0) worker.CancelRuns();
  worker.WaitForRuns();
  say("worker stopped");
  return code;
}

void RunDaemon(const PipelineFiles& files, const orchestrate::DaemonSettings& settings, bool wait,
               const std::string& now, const std::string& until_text, Cancellation& cancellation,
               const std::function<void(const std::string& line)>& say) {
  std::unique_ptr<Clock> clock = OrchestrationClock(now);
  std::optional<system_clock::time_point> until;
  if (!until_text.empty()) until = AsRequestError([&] { return ParseLogicalDatetime(until_text); });
  std::vector<RunnableJob> jobs = LoadJobs(files);
  cancellation.Arm();
  std::unique_ptr<StateStore> store = OpenStateStoreFor(files.workspace);
  orchestrate::Daemon daemon(*store, *clock, std::move(jobs), settings, JobLauncher(*store, *clock));
  std::string message;
  if (daemon.Run(cancellation.canceled(), wait, until, message, say) != 0) {
    throw Error(Diagnostic{"SLU-DAEMON-004",
                           message,
                           {},
                           "one daemon runs per state store; stop the other one, or pass --wait to take over when it "
                           "stops",
                           {}});
  }
}

}  // namespace sluice::service
