#include "service/run.hpp"

#include <map>

#include "core/clock.hpp"
#include "deploy/published_definitions.hpp"
#include "service/request_error.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

void RefuseContradictions(const RunCommand& command) {
  // A rebuild that ended at a chosen day would delete every later day while the ledger still counted them.
  if (command.full_refresh && (command.partition || command.from || command.to)) {
    throw RequestError(Diagnostic{
        "SLU-CLI-004",
        "--full-refresh takes no --partition, --from or --to: it rebuilds each selected table whole, from "
        "its start date through the last complete day",
        {},
        "to replace some days, run them without --full-refresh (`sluice run --from A --to B` replaces exactly those "
        "days); to rebuild the table, drop the partition flags",
        {}});
  }
}

std::vector<AssetKey> PlannedKeys(const RunPlan& plan) {
  std::vector<AssetKey> keys;
  for (const StepPlan& step : plan.steps) keys.push_back(step.key);
  return keys;
}

RunResult RunAsBackfill(const Project& project, const RunCommand& command, const RunPlan& plan, const Clock& clock,
                        Cancellation& cancellation, const RunObserver& observer) {
  std::vector<Date> keys;
  for (Date day = plan.window->start; day < plan.window->end; day = day.AddDays(1)) keys.push_back(day);
  BackfillPlan backfill = CheckingArguments([&] {
    return PlanBackfill(project.definitions, BackfillRequest{command.select, keys}, clock.TodayUtc());
  });
  std::unique_ptr<StateStore> state = OpenStateStoreFor(project);
  BackfillSettings settings{command.threads, command.max_concurrent_runs, command.allow_missing_upstream,
                            command.wait_timeout_seconds};
  RunResult result;
  result.kind = RunResult::Kind::kBackfill;
  result.backfill = StartBackfill(ContextFor(project, *state), backfill, settings, cancellation, observer.backfill);
  return result;
}

// The warehouse, opened read-write; a failure (or a cancel while waiting for another process) abandons the run.
std::unique_ptr<Warehouse> OpenForRun(const Project& project, const RunCommand& command, const std::string& run_id,
                                      StateStore& state, const Clock& clock, Cancellation& cancellation,
                                      const RunObserver& observer) {
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.cancel = &cancellation.canceled();
  config.wait.timeout_flag = "--wait-timeout";
  if (command.wait_timeout_seconds) {
    config.wait.timeout = std::chrono::milliseconds(static_cast<int64_t>(*command.wait_timeout_seconds * 1000));
  }
  config.wait.on_wait = [&](const std::string& message) {
    state.Append(run_id, FormatUtc(clock.Now()), RunWaitingEvent{message});
    if (observer.on_waiting) observer.on_waiting(run_id, message);
  };
  try {
    return OpenWarehouse(config);
  } catch (const Error& error) {
    bool canceled = cancellation.canceled();
    AbandonRun(state, state, run_id, clock, canceled, error.diagnostics().front().message);
    if (!canceled) throw;
    return nullptr;
  }
}

}  // namespace

RunResult Run(const WorkspaceOptions& workspace, const RunCommand& command, Cancellation& cancellation,
              const RunObserver& observer) {
  RefuseContradictions(command);
  const Project& project = LoadProjectFor(workspace);
  SystemClock clock;
  RunRequest request{command.select, command.partition ? command.partition : command.from,
                     command.partition ? command.partition : command.to, command.full_refresh};
  RunPlan plan = CheckingArguments([&] { return PlanRun(project.definitions, request, clock.TodayUtc()); });
  if (request.partition_from && !plan.window && observer.on_warning) {
    observer.on_warning(std::string(command.partition ? "--partition is" : "--from and --to are") +
                        " ignored: no selected asset is partitioned");
  }
  // Days of a virtual pipeline's daily model go into the table its stable view reads
  // (deploy/published_definitions.hpp).
  const std::vector<AssetKey> planned = PlannedKeys(plan);
  const bool published_days = WritesVirtualModels(project.definitions, planned);
  // A key range over partitioned assets is a backfill; --partition, a full refresh, unpartitioned selections and a
  // virtual pipeline's days stay one plain run.
  if (command.from && !command.full_refresh && plan.window && !published_days) {
    return RunAsBackfill(project, command, plan, clock, cancellation, observer);
  }
  RunResult result;
  result.full_refresh = command.full_refresh;
  if (plan.steps.empty()) return result;

  cancellation.Arm();  // before the warehouse opens: its engine starts threads, which inherit the signal mask
  std::unique_ptr<StateStore> state = OpenStateStoreFor(project);
  result.run_id = RunExecutor::NewRunId(clock);
  QueueRun(*state, plan, result.run_id, clock);
  std::unique_ptr<Warehouse> warehouse =
      OpenForRun(project, command, result.run_id, *state, clock, cancellation, observer);
  if (!warehouse) {
    result.kind = RunResult::Kind::kCanceledWhileWaiting;
    result.cancel_cause = cancellation.cause();
    return result;
  }
  cancellation.Interrupting(warehouse.get());
  std::optional<Definitions> published;
  if (published_days) {
    try {
      published = PublishedDefinitions(project.definitions, *warehouse, planned);
    } catch (const Error& error) {
      AbandonRun(*state, *state, result.run_id, clock, false, error.diagnostics().front().message);
      throw;
    }
  }

  // target/run holds the statements of the latest run only.
  result.statements_dir = project.root / "target" / "run";
  std::error_code ignored;
  std::filesystem::remove_all(result.statements_dir, ignored);

  ExecutorOptions options{command.threads, project.root.string()};
  options.cancel = &cancellation.canceled();
  options.allow_missing_upstream = command.allow_missing_upstream;
  options.statements_dir = result.statements_dir;
  options.on_start = observer.on_step_started;
  RunExecutor executor(published ? *published : project.definitions, *warehouse, *state, *state, *state, clock,
                       options);
  if (observer.on_started) observer.on_started(result.run_id, plan.steps.size());
  result.kind = RunResult::Kind::kRun;
  result.outcome = executor.Execute(plan, result.run_id, [&](const StepOutcome& step, size_t done, size_t total) {
    if (observer.on_step) observer.on_step(step, done, total);
  });
  cancellation.Interrupting(nullptr);
  if (result.outcome.status == RunStatus::kCanceled) result.cancel_cause = cancellation.cause();
  return result;
}

json ToJson(const StepOutcome& step) {
  json diagnostics = json::array();
  for (const Diagnostic& d : step.diagnostics) diagnostics.push_back(DiagnosticJson(d));
  json out{{"asset", step.key.ToString()},
           {"status", StepStatusName(step.status)},
           {"duration_ms", step.duration_ms},
           {"note", step.note},
           {"diagnostics", diagnostics}};
  out["window"] = step.window
                      ? json{{"start", step.window->start.ToString()}, {"end", step.window->end.AddDays(-1).ToString()}}
                      : json(nullptr);
  out["rows_written"] =
      step.status == StepStatus::kSuccess && step.wrote_rows ? json(step.rows_written) : json(nullptr);
  out["rows_dropped"] = step.rows_dropped;
  return out;
}

json ToJson(const RunResult& result) {
  if (result.kind == RunResult::Kind::kBackfill) return ToJson(*result.backfill);
  if (result.kind == RunResult::Kind::kNothingSelected) {
    return json{{"run_id", nullptr}, {"status", "NOTHING_SELECTED"}, {"steps", json::array()}};
  }
  std::map<StepStatus, size_t> counts;
  for (const StepOutcome& step : result.outcome.steps) ++counts[step.status];
  json steps = json::array();
  for (const StepOutcome& step : result.outcome.steps) steps.push_back(ToJson(step));
  return json{{"run_id", result.run_id},
              {"status", RunStatusName(result.outcome.status)},
              {"counts",
               {{"ok", counts[StepStatus::kSuccess] + counts[StepStatus::kUnchanged]},
                {"failed", counts[StepStatus::kFailed]},
                {"skipped", counts[StepStatus::kSkipped]},
                {"canceled", counts[StepStatus::kCanceled]}}},
              {"steps", steps},
              {"statements_dir", result.statements_dir.string()}};
}

}  // namespace sluice::service
