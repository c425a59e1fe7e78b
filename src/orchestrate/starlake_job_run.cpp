#include "orchestrate/starlake_job_run.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/logical_datetime.hpp"
#include "core/pause_point.hpp"
#include "core/time_zone.hpp"
#include "orchestrate/preload_gate.hpp"

namespace sluice::orchestrate {

namespace {

using std::chrono::system_clock;

// A chatty CLI should not fill the state store: a step keeps this many output lines, then says how many it dropped.
constexpr int kMaxOutputLines = 10'000;

Error JobError(const std::string& message) {
  return Error(Diagnostic{"SLU-STARLAKE-010", message, {}, "sl_options is {\"all\": {…}, \"<task>\": {…}}", {}});
}

std::string Formatted(system_clock::time_point instant) { return FormatLogicalDatetime(instant, TimeZone::Utc()); }

// Option keys whose values are not written to the event log.
bool IsSecretKey(const std::string& key) {
  static const std::regex kSecret("password|passwd|secret|token|credential|private|api_?key|access_?key",
                                  std::regex::icase);
  return std::regex_search(key, kSecret);
}

std::string Redacted(std::string text, const JobOptions& options, const nlohmann::json& sl_options) {
  auto mask = [&](const std::string& value) {
    if (value.empty()) return;
    for (size_t at = text.find(value); at != std::string::npos; at = text.find(value, at + 3)) {
      text.replace(at, value.size(), "***");
    }
  };
  for (const auto& [key, value] : options.sl_env) {
    if (IsSecretKey(key)) mask(value);
  }
  for (const auto& [section, pairs] : sl_options.items()) {
    if (!pairs.is_object()) continue;
    for (const auto& [key, value] : pairs.items()) {
      if (IsSecretKey(key) && value.is_string()) mask(value.get<std::string>());
    }
  }
  return text;
}

// A job's tasks as indices: what runs after each, and how many tasks each waits for.
struct TaskGraph {
  std::vector<std::vector<size_t>> after;
  std::vector<int> waiting;
};

TaskGraph IndexTasks(const StarlakeJob& job) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < job.tasks.size(); ++i) index[job.tasks[i].id] = i;
  TaskGraph graph{std::vector<std::vector<size_t>>(job.tasks.size()), std::vector<int>(job.tasks.size(), 0)};
  for (const auto& [from, to] : job.edges) {
    auto f = index.find(from);
    auto t = index.find(to);
    if (f == index.end() || t == index.end()) continue;
    graph.after[f->second].push_back(t->second);
    ++graph.waiting[t->second];
  }
  return graph;
}

// Task indices in an order where every edge goes forward; among ready tasks, the graph's own order. Takes a copy:
// it counts the waits down.
std::vector<size_t> TopologicalOrder(TaskGraph graph) {
  std::set<size_t> ready;
  for (size_t i = 0; i < graph.waiting.size(); ++i) {
    if (graph.waiting[i] == 0) ready.insert(i);
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t next = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(next);
    for (size_t successor : graph.after[next]) {
      if (--graph.waiting[successor] == 0) ready.insert(successor);
    }
  }
  return order;  // a cycle would leave tasks out; the graph builder refuses cycles
}

StarlakeOptionPairs NodeOptions(const nlohmann::json& sl_options, const StarlakeTask& task) {
  StarlakeOptionPairs pairs;
  auto overlay = [&](const std::string& section) {
    auto found = sl_options.find(section);
    if (found == sl_options.end() || !found->is_object()) return;
    for (const auto& [key, value] : found->items()) {
      std::string text = value.is_string() ? value.get<std::string>() : value.dump();
      auto same = std::find_if(pairs.begin(), pairs.end(), [&](const auto& pair) { return pair.first == key; });
      if (same != pairs.end()) {
        same->second = text;
      } else {
        pairs.emplace_back(key, text);
      }
    }
  };
  overlay("all");
  if (!task.transform_name.empty()) overlay(task.transform_name);
  overlay(task.id);
  return pairs;
}

// §5.2 get_transform_options.
std::string IntervalOptions(const StarlakeTask& task, system_clock::time_point logical,
                            const std::optional<system_clock::time_point>& previous) {
  std::optional<system_clock::time_point> start = previous;
  system_clock::time_point end = logical;
  if (!start && task.dataset && task.dataset->cron) {
    std::optional<ScheduledInterval> interval =
        ScheduledDatesRange(CronSchedule::Parse(*task.dataset->cron), logical, TimeZone::Utc());
    if (interval) {
      start = interval->start;
      end = interval->end;
    }
  }
  if (!start) return "";
  return "sl_data_interval_start='" + Formatted(*start) + "',sl_data_interval_end='" + Formatted(end) + "'";
}

// What one run of a job does, task by task.
class JobRun {
 public:
  JobRun(const RunnableJob& job, const std::string& run_id, const JobRunConfig& config, const JobRunContext& context)
      : job_(job),
        run_id_(run_id),
        config_(config),
        context_(context),
        logical_(config.logical_datetime.value_or(context.clock->Now())) {}

  JobRunOutcome Run() {
    TaskGraph graph = IndexTasks(job_.job);
    std::vector<std::string> ids;
    for (size_t i : TopologicalOrder(graph)) ids.push_back(job_.job.tasks[i].id);
    Append(RunStartedEvent{job_.job.name, ids});

    // Ready tasks start in the graph's order, up to max_parallel_tasks at once, each on its own thread; a task is
    // skipped (not started) when the run is canceled or an upstream task produced no output.
    std::set<size_t> ready;
    for (size_t i = 0; i < graph.waiting.size(); ++i) {
      if (graph.waiting[i] == 0) ready.insert(i);
    }
    std::mutex dispatch;
    std::condition_variable finished;
    int running = 0;
    std::vector<std::thread> threads;
    auto complete = [&](size_t i) {  // with `dispatch` held
      for (size_t successor : graph.after[i]) {
        if (--graph.waiting[successor] == 0) ready.insert(successor);
      }
    };
    std::unique_lock lock(dispatch);
    while (!ready.empty() || running > 0) {
      while (!ready.empty() && running < job_.resolved.max_parallel_tasks) {
        const size_t i = *ready.begin();
        ready.erase(ready.begin());
        const StarlakeTask& task = job_.job.tasks[i];
        if (Canceled()) {
          MarkCanceled();
          Finish(task.id, TaskState::kSkipped, "the run was canceled before this task started");
          complete(i);
          continue;
        }
        if (std::optional<std::pair<TaskState, std::string>> blocked = BlockedBy(task)) {
          Finish(task.id, blocked->first, blocked->second);
          complete(i);
          continue;
        }
        ++running;
        threads.emplace_back([this, &task, i, &dispatch, &finished, &running, &complete] {
          RunTaskGuarded(task);
          std::lock_guard done(dispatch);
          --running;
          complete(i);
          finished.notify_all();
        });
      }
      if (running > 0) finished.wait(lock);
    }
    lock.unlock();
    for (std::thread& thread : threads) thread.join();

    std::lock_guard state(mutex_);
    JobRunOutcome outcome;
    if (!first_error_.empty()) {
      outcome.status = RunStatus::kFailure;
      outcome.error = first_error_;
    } else if (canceled_) {
      outcome.status = RunStatus::kCanceled;
      outcome.error = "canceled";
    }
    return outcome;
  }

 private:
  // kBlocked: skipped because an upstream task failed (or was itself blocked), which `end` does not run past.
  enum class TaskState { kDone, kSkipped, kBlocked, kFailed };

  bool Canceled() const {
    return (context_.cancel && context_.cancel->load()) || (context_.hard_cancel && context_.hard_cancel->load());
  }

  void MarkCanceled() {
    std::lock_guard lock(mutex_);
    canceled_ = true;
  }

  bool Recorded(const std::string& id) {
    std::lock_guard lock(mutex_);
    return states_.contains(id);
  }

  void SetState(const std::string& id, TaskState state) {
    std::lock_guard lock(mutex_);
    states_[id] = state;
  }

  void Append(const RunEvent& event) { context_.store->Append(run_id_, FormatUtc(context_.clock->Now()), event); }

  // Whether `task` cannot run because an upstream task did not produce its output: kBlocked with the reason when
  // one failed (or was blocked), kSkipped when one was skipped.
  std::optional<std::pair<TaskState, std::string>> BlockedBy(const StarlakeTask& task) {
    std::lock_guard lock(mutex_);
    std::optional<std::pair<TaskState, std::string>> skipped;
    for (const auto& [from, to] : job_.job.edges) {
      if (to != task.id) continue;
      auto state = states_.find(from);
      if (state == states_.end()) continue;
      if (state->second == TaskState::kFailed) return std::pair{TaskState::kBlocked, "upstream " + from + " failed"};
      if (state->second == TaskState::kBlocked) {
        return std::pair{TaskState::kBlocked, "upstream " + from + " did not run after a failure"};
      }
      if (state->second == TaskState::kSkipped && task.kind != StarlakeTaskKind::kEnd && !skipped) {
        skipped = std::pair{TaskState::kSkipped, "upstream " + from + " was skipped"};
      }
    }
    return skipped;
  }

  void Finish(const std::string& id, TaskState state, const std::string& reason) {
    SetState(id, state);
    Append(StepSkippedEvent{id, reason});
  }

  void Fail(const StarlakeTask& task, const std::string& code, const std::string& message) {
    EventDiagnostic diagnostic{code, message, "", 0, 0, ""};
    Append(StepFailedEvent{task.id, {diagnostic}});
    RecordFailure(task, message);
  }

  // The failure in the run's outcome, also when it could not be appended to the event log.
  void RecordFailure(const StarlakeTask& task, const std::string& message) {
    std::lock_guard lock(mutex_);
    states_[task.id] = TaskState::kFailed;
    if (first_error_.empty()) first_error_ = task.id + ": " + message;
  }

  // Runs one task on its own thread: whatever it throws fails the task (a store that cannot be written, a command
  // that cannot be built), never the process.
  void RunTaskGuarded(const StarlakeTask& task) {
    try {
      RunTask(task);
    } catch (const Error& error) {
      const Diagnostic& first = error.diagnostics().front();
      try {
        Fail(task, first.code, first.message);
      } catch (const std::exception&) {
        RecordFailure(task, first.message);
      }
    } catch (const std::exception& error) {
      try {
        Fail(task, "SLU-STARLAKE-011", error.what());
      } catch (const std::exception&) {
        RecordFailure(task, error.what());
      }
    }
  }

  void RunTask(const StarlakeTask& task) {
    const auto started = std::chrono::steady_clock::now();
    Append(StepStartedEvent{task.id});
    PausePoint("job_step_started");
    bool produced = false;
    switch (task.kind) {
      case StarlakeTaskKind::kStart:
      case StarlakeTaskKind::kEnd:
        produced = true;
        break;
      case StarlakeTaskKind::kPreLoad:
        produced = RunPreload(task);
        break;
      case StarlakeTaskKind::kStage:
        produced = RunCommand(task, StageCommand(task.domain, task.tables));
        break;
      case StarlakeTaskKind::kLoad:
        produced = RunCommand(task, LoadCommand(task.domain, task.tables.empty() ? "" : task.tables.front()));
        break;
      case StarlakeTaskKind::kTransform:
        produced = RunCommand(task, TransformCommand(task.transform_name, "", ConfiguredTransformOptions(task)));
        break;
    }
    if (Recorded(task.id)) return;  // failed or skipped, already recorded
    if (!produced) return;
    if (task.dataset) Materialize(task);
    SetState(task.id, TaskState::kDone);
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    Append(StepFinishedEvent{task.id, elapsed.count()});
  }

  std::string ConfiguredTransformOptions(const StarlakeTask& task) const {
    auto section = job_.options.find(task.transform_name);
    if (section == job_.options.end() || !section->is_object()) return "";
    std::optional<std::string> text = OptionText(*section, "options");
    return text.value_or("");
  }

  StarlakeAttempt Attempt(const StarlakeTask& task) const {
    StarlakeAttempt attempt;
    attempt.scheduled_date = Formatted(logical_);
    if (task.kind == StarlakeTaskKind::kTransform) {
      attempt.interval_options = IntervalOptions(task, logical_, config_.previous_logical_datetime);
      attempt.node_options = NodeOptions(config_.sl_options, task);
    }
    return attempt;
  }

  // Runs one attempt (or, in a dry run, pretends to); returns its exit code.
  int Execute(const StarlakeTask& task, const StarlakeCommand& command, int attempt_number) {
    if (config_.dry_run) {
      Append(StepNoteEvent{
          task.id, "dry run: " + Redacted(ShellCommandLine(job_.executor.shell.starlake_path, command, Attempt(task)),
                                          job_.resolved, config_.sl_options)});
      return 0;
    }
    char attempt_id[16];
    std::snprintf(attempt_id, sizeof attempt_id, "%08x",
                  static_cast<unsigned>((context_.seed ^ std::hash<std::string>{}(run_id_ + task.id)) +
                                        static_cast<unsigned>(attempt_number)));
    ExecutorSettings executor = job_.executor;
    if (executor.dataproc.cluster_date.empty()) executor.dataproc.cluster_date = context_.clock->TodayUtc().ToString();
    ExecutorInvocation invocation =
        RenderInvocation(executor, command, Attempt(task), job_.resolved.sl_env, task.id, attempt_id);
    std::string line = invocation.program;
    for (const std::string& argument : invocation.arguments) line += " " + argument;
    Append(StepNoteEvent{task.id, "attempt " + std::to_string(attempt_number) + ": " +
                                      Redacted(line, job_.resolved, config_.sl_options)});
    int lines = 0;
    ProcessOutcome outcome = context_.run_process(
        invocation,
        [&](std::string_view output) {
          if (++lines <= kMaxOutputLines) Append(StepNoteEvent{task.id, std::string(output)});
        },
        context_.hard_cancel);
    if (lines > kMaxOutputLines) {
      Append(StepNoteEvent{task.id, std::to_string(lines - kMaxOutputLines) + " more output lines not kept"});
    }
    if (outcome.canceled) return -1;
    if (outcome.signaled) return 128 + outcome.signal;
    return outcome.exit_code;
  }

  // The command as the job defines it (§2.3 definition time): sl_env_var merged into `--options` on the executors
  // that do so (shell and Fargate; Cloud Run and Dataproc pass the variables otherwise).
  StarlakeCommand Defined(const StarlakeCommand& bare) const {
    const ExecutorKind kind = job_.executor.kind;
    if (kind != ExecutorKind::kShell && kind != ExecutorKind::kFargate) return bare;
    return WithEnvironmentOptions(bare, job_.resolved.sl_env);
  }

  bool RunCommand(const StarlakeTask& task, const StarlakeCommand& bare) {
    const StarlakeCommand command = Defined(bare);
    for (int attempt = 1;; ++attempt) {
      const int exit_code = Execute(task, command, attempt);
      if (exit_code == 0) return true;
      if (exit_code == -1) {
        Fail(task, "SLU-STARLAKE-011", "canceled while running");
        return false;
      }
      if (!job_.resolved.retry.RetriesAfter(attempt) || Canceled()) {
        Fail(task, "SLU-STARLAKE-011",
             "starlake " + command.arguments.front() + " exited with " + std::to_string(exit_code) + " after " +
                 std::to_string(attempt) + (attempt == 1 ? " attempt" : " attempts"));
        return false;
      }
      const std::chrono::milliseconds delay = job_.resolved.retry.Delay(attempt, context_.seed);
      Append(StepNoteEvent{task.id, "attempt " + std::to_string(attempt) + " exited with " + std::to_string(exit_code) +
                                        "; retrying in " + std::to_string(delay.count()) + " ms"});
      if (!context_.wait(delay)) {
        Fail(task, "SLU-STARLAKE-011", "canceled while waiting to retry");
        return false;
      }
    }
  }

  bool RunPreload(const StarlakeTask& task) {
    const PreloadSettings& settings = job_.resolved.preload;
    std::optional<std::string> ack;
    if (task.strategy == StarlakePreLoadStrategy::kAck) {
      ack = AckFilePath(job_.resolved, task.domain, TimeZone::Utc().LocalDate(logical_));
    }
    const std::optional<std::string> sentinel =
        ResolveSentinelPath(settings.sentinel_location, task.domain, job_.executor.kind);
    const StarlakeCommand command = Defined(PreLoadCommand(task.domain, task.tables, task.strategy, ack, sentinel));
    const std::string scope = SentinelScope(job_.job.name, task.id, run_id_);

    // ACK without the sensor waits for the acknowledgement for ack_wait_timeout, then skips.
    const bool ack_wait =
        task.strategy == StarlakePreLoadStrategy::kAck && !settings.sensor && settings.ack_wait_timeout.count() > 0;
    PreloadGate gate{sentinel.has_value(), settings.sensor || ack_wait, settings.sensor ? settings.soft_fail : true};
    const std::chrono::seconds timeout = settings.sensor ? settings.timeout : settings.ack_wait_timeout;
    const std::chrono::seconds interval = std::min(settings.poke_interval, std::max(timeout, std::chrono::seconds(1)));
    const auto deadline = context_.clock->Now() + timeout;

    for (int attempt = 1;; ++attempt) {
      StarlakeCommand scoped = command;
      scoped.arguments = WithSentinelScope(command.arguments, scope);
      PreloadAttempt outcome;
      outcome.dry_run = config_.dry_run;
      outcome.exit_code = Execute(task, scoped, attempt);
      if (outcome.exit_code == -1) {
        Fail(task, "SLU-STARLAKE-011", "canceled while running");
        return false;
      }
      if (sentinel && !config_.dry_run && outcome.exit_code == 0) {
        const std::string marker = WithSentinelScope({*sentinel}, scope).front();
        outcome.marker_present = ConsumeLocalMarker(marker);
        if (outcome.marker_present) Append(StepNoteEvent{task.id, "not ready: consumed the marker " + marker});
      }
      outcome.deadline_reached = context_.clock->Now() + interval >= deadline;
      switch (DecidePreload(gate, outcome)) {
        case PreloadVerdict::kProceed:
          return true;
        case PreloadVerdict::kSkip:
          Finish(task.id, TaskState::kSkipped,
                 gate.poke ? "not ready after " + std::to_string(timeout.count()) + " s of poking"
                           : "the domain is not ready (preload exited with " + std::to_string(outcome.exit_code) +
                                 (outcome.marker_present ? ", not-ready marker" : "") + ")");
          return false;
        case PreloadVerdict::kFail:
          // With the sentinel a non-zero exit is a crash; otherwise it only says "not ready", so failing means the
          // poke loop ran out of time.
          Fail(task, "SLU-STARLAKE-012",
               gate.sentinel && outcome.exit_code != 0
                   ? "preload exited with " + std::to_string(outcome.exit_code)
                   : "timed out waiting for files after " + std::to_string(timeout.count()) + "s");
          return false;
        case PreloadVerdict::kPokeAgain:
          Append(StepNoteEvent{task.id, "not ready; poking again in " + std::to_string(interval.count()) + " s"});
          if (!context_.wait(interval)) {
            Fail(task, "SLU-STARLAKE-011", "canceled while waiting to poke again");
            return false;
          }
          break;
      }
    }
  }

  void Materialize(const StarlakeTask& task) {
    const StarlakeDatasetRef& dataset = *task.dataset;
    const std::string scheduled = Formatted(logical_);
    AssetMaterializationRecord record;
    record.asset = dataset.uri;
    record.partition = QuoteDatetime(scheduled);
    record.run_id = run_id_;
    record.at = FormatUtc(context_.clock->Now());
    nlohmann::json& metadata = record.metadata;
    metadata["sl_uri"] = dataset.uri;
    // The sink the URI was made from (`domain.table`): the asset the dataset stands for. A job's own dataset has none.
    if (dataset.name != dataset.uri) metadata["asset"] = dataset.name;
    metadata["sl_cron"] = dataset.cron ? nlohmann::json(*dataset.cron) : nlohmann::json(nullptr);
    metadata["sl_freshness"] = dataset.freshness;
    metadata["sl_scheduled_date"] = scheduled;
    metadata["sl_data_interval_end"] = scheduled;
    if (config_.previous_logical_datetime) {
      metadata["sl_data_interval_start"] = Formatted(*config_.previous_logical_datetime);
    }
    metadata["sl_dry_run"] = config_.dry_run;
    if (!config_.sl_options.empty()) metadata["sl_options"] = config_.sl_options;
    context_.store->RecordAssetMaterialization(record);
    Append(MaterializationEvent{dataset.uri, std::nullopt, std::nullopt, 0, 0, ""});
  }

  const RunnableJob& job_;
  const std::string& run_id_;
  const JobRunConfig& config_;
  const JobRunContext& context_;
  const system_clock::time_point logical_;
  std::mutex mutex_;  // guards the three below: tasks run on several threads
  std::map<std::string, TaskState> states_;
  std::string first_error_;
  bool canceled_ = false;
};

}  // namespace

nlohmann::json ParseSlOptions(std::string_view text) {
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) throw JobError("sl_options is not a JSON object: " + std::string(text));
  for (const auto& [section, pairs] : parsed.items()) {
    if (!pairs.is_object()) throw JobError("sl_options section \"" + section + "\" is not an object");
    for (const auto& [key, value] : pairs.items()) {
      if (value.is_structured()) {
        throw JobError("sl_options value " + section + "." + key + " is not a string, number or boolean");
      }
    }
  }
  return parsed;
}

std::map<std::string, std::string> RunConfigTags(const JobRunConfig& config) {
  std::map<std::string, std::string> tags;
  if (config.logical_datetime) tags["logical_datetime"] = Formatted(*config.logical_datetime);
  if (config.previous_logical_datetime)
    tags["previous_logical_datetime"] = Formatted(*config.previous_logical_datetime);
  if (config.dry_run) tags["dry_run"] = "true";
  if (!config.sl_options.empty()) tags["sl_options"] = config.sl_options.dump();
  return tags;
}

JobRunConfig RunConfigFromTags(const std::map<std::string, std::string>& tags) {
  JobRunConfig config;
  if (auto found = tags.find("logical_datetime"); found != tags.end()) {
    config.logical_datetime = ParseLogicalDatetime(found->second);
  }
  if (auto found = tags.find("previous_logical_datetime"); found != tags.end()) {
    config.previous_logical_datetime = ParseLogicalDatetime(found->second);
  }
  if (auto found = tags.find("dry_run"); found != tags.end()) config.dry_run = found->second == "true";
  if (auto found = tags.find("sl_options"); found != tags.end()) config.sl_options = ParseSlOptions(found->second);
  return config;
}

JobRunOutcome RunStarlakeJob(const RunnableJob& job, const std::string& run_id, const JobRunConfig& config,
                             const JobRunContext& context) {
  return JobRun(job, run_id, config, context).Run();
}

JobRunContext LocalJobRunContext(StateStore& store, const Clock& clock, const std::atomic<bool>* cancel,
                                 const std::atomic<bool>* hard_cancel) {
  JobRunContext context;
  context.store = &store;
  context.clock = &clock;
  context.cancel = cancel;
  context.hard_cancel = hard_cancel;
  context.wait = [cancel](std::chrono::milliseconds duration) {
    const auto until = std::chrono::steady_clock::now() + duration;
    while (std::chrono::steady_clock::now() < until) {
      if (cancel && cancel->load()) return false;
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          std::chrono::milliseconds(50), until - std::chrono::steady_clock::now()));
    }
    return !(cancel && cancel->load());
  };
  context.run_process = [](const ExecutorInvocation& invocation, const std::function<void(std::string_view)>& on_line,
                           const std::atomic<bool>* stop) { return RunLocalProcess(invocation, on_line, stop); };
  context.seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  context.environment = ProcessEnvironment();
  return context;
}

}  // namespace sluice::orchestrate
