#include "service/backfill.hpp"

#include <unistd.h>

#include "core/clock.hpp"
#include "service/request_error.hpp"
#include "service/run.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

BackfillRecord RequireBackfill(StateStore& state, const std::string& backfill_id) {
  std::optional<BackfillRecord> backfill = state.GetBackfill(backfill_id);
  if (!backfill) {
    throw RequestError(Diagnostic{"SLU-BACKFILL-003",
                                  "there is no backfill " + backfill_id,
                                  {},
                                  "list backfills with `" + ProgramName() + " backfills`",
                                  {}});
  }
  return *backfill;
}

WaitPolicy WaitFor(const BackfillSettings& settings, Cancellation& cancellation, const BackfillObserver& observer) {
  WaitPolicy wait;
  wait.cancel = &cancellation.canceled();
  wait.timeout_flag = "--wait-timeout";  // `run --from/--to` and `backfills resume` both take it
  if (settings.wait_timeout_seconds) {
    wait.timeout = std::chrono::milliseconds(static_cast<int64_t>(*settings.wait_timeout_seconds * 1000));
  }
  wait.on_wait = [&observer](const std::string& message) {
    if (observer.on_waiting) observer.on_waiting(message);
  };
  return wait;
}

BackfillOptions CoordinatorOptions(const BackfillContext& context, const BackfillRecord& backfill, int concurrency,
                                   const BackfillSettings& settings, Cancellation& cancellation,
                                   const BackfillObserver& observer) {
  BackfillOptions options;
  options.max_concurrent_runs = concurrency;
  options.executor.threads = settings.threads;
  options.executor.project_root = context.project_root.string();
  options.executor.cancel = &cancellation.canceled();
  options.executor.allow_missing_upstream = settings.allow_missing_upstream;
  if (backfill.chunks.size() == 1) {
    // One run, as a plain `run`: target/run holds its statements. With several chunks at once the warehouse's one
    // statement observer cannot serve them all, so none is kept.
    options.executor.statements_dir = context.project_root / "target" / "run";
    std::error_code ignored;
    std::filesystem::remove_all(*options.executor.statements_dir, ignored);
  }
  options.on_progress = observer.on_progress;
  options.on_chunk_started = observer.on_chunk_started;
  if (observer.on_step) {
    options.on_step = [&observer](int, const StepOutcome& step, size_t done, size_t total) {
      observer.on_step(step, done, total);
    };
  }
  options.on_chunk = observer.on_chunk;
  return options;
}

// Runs the chunks of `backfill` not yet successful; this process owns it.
BackfillResult ExecuteBackfill(const BackfillContext& context, const BackfillRecord& backfill,
                               const BackfillSettings& settings, Cancellation& cancellation,
                               const BackfillObserver& observer) {
  SystemClock clock;
  const std::string& id = backfill.backfill_id;
  const int concurrency =
      settings.max_concurrent_runs > 0 ? settings.max_concurrent_runs : backfill.max_concurrent_runs;
  cancellation.Arm();  // before the warehouse opens (its engine starts threads) and before the observer starts any
  if (observer.on_started) observer.on_started(backfill, concurrency);
  BackfillResult result;
  result.backfill_id = id;
  result.chunk_count = backfill.chunks.size();
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = context.open_warehouse(WaitFor(settings, cancellation, observer));
  } catch (const Error& error) {
    bool canceled = cancellation.canceled();
    context.state.SetBackfillStatus(id, canceled ? BackfillStatus::kCanceled : BackfillStatus::kFailed,
                                    FormatUtc(clock.Now()), error.diagnostics().front().message);
    if (!canceled) throw;
    result.canceled_while_waiting = true;
    result.cancel_cause = cancellation.cause();
    return result;
  }
  cancellation.Interrupting(warehouse.get());
  BackfillCoordinator coordinator(context.definitions, *warehouse, context.state, clock,
                                  CoordinatorOptions(context, backfill, concurrency, settings, cancellation, observer));
  result.outcome = coordinator.Run(id);
  cancellation.Interrupting(nullptr);
  if (result.canceled()) result.cancel_cause = cancellation.cause();
  return result;
}

}  // namespace

bool BackfillResult::canceled() const {
  return canceled_while_waiting ||
         (outcome && outcome->status == BackfillStatus::kCanceled && !outcome->cancel_requested);
}

bool BackfillResult::succeeded() const {
  return already_complete || (outcome && outcome->status == BackfillStatus::kCompletedSuccess);
}

BackfillContext ContextFor(const Project& project, StateStore& state) {
  return BackfillContext{project.definitions, state, project.root, [&project](const WaitPolicy& wait) {
                           WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
                           config.wait = wait;
                           return OpenWarehouse(config);
                         }};
}

BackfillResult StartBackfill(const BackfillContext& context, const BackfillPlan& plan, const BackfillSettings& settings,
                             Cancellation& cancellation, const BackfillObserver& observer) {
  SystemClock clock;
  const int concurrency = settings.max_concurrent_runs > 0 ? settings.max_concurrent_runs : kDefaultMaxConcurrentRuns;
  BackfillRecord record = CreateBackfill(context.state, plan, NewBackfillId(clock), concurrency, clock);
  return ExecuteBackfill(context, record, settings, cancellation, observer);
}

BackfillResult ResumeBackfill(const WorkspaceOptions& workspace, const std::string& backfill_id,
                              const BackfillSettings& settings, Cancellation& cancellation,
                              const BackfillObserver& observer) {
  const Project& project = LoadProjectFor(workspace);
  std::unique_ptr<StateStore> state = OpenStateStoreFor(project);
  BackfillRecord backfill = RequireBackfill(*state, backfill_id);
  if (backfill.status == BackfillStatus::kCompletedSuccess) {
    BackfillResult result;
    result.backfill_id = backfill.backfill_id;
    result.chunk_count = backfill.chunks.size();
    result.already_complete = backfill;
    return result;
  }
  const int64_t pid = ::getpid();
  const int64_t start_time = ProcessStartTime(pid);
  bool running_elsewhere = !IsTerminal(backfill.status) && OwnerAlive(backfill);
  if (running_elsewhere ||
      !state->ClaimBackfill(backfill.backfill_id, backfill.pid, backfill.pid_start_time, pid, start_time)) {
    const int64_t owner = running_elsewhere ? backfill.pid : state->GetBackfill(backfill.backfill_id)->pid;
    throw Error(Diagnostic{
        "SLU-BACKFILL-005",
        "backfill " + backfill.backfill_id + " is being run by another process (pid " + std::to_string(owner) + ")",
        {},
        "wait for it, or stop it with `" + ProgramName() + " backfills cancel " + backfill.backfill_id + "`",
        {}});
  }
  backfill = *state->GetBackfill(backfill.backfill_id);
  return ExecuteBackfill(ContextFor(project, *state), backfill, settings, cancellation, observer);
}

std::vector<BackfillRecord> ListBackfills(const WorkspaceOptions& workspace, int limit) {
  return OpenStateStoreFor(workspace)->ListBackfills(limit);
}

BackfillDetail ShowBackfill(const WorkspaceOptions& workspace, const std::string& backfill_id) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(workspace);
  BackfillRecord backfill = RequireBackfill(*state, backfill_id);
  return BackfillDetail{backfill, state->RunsOfBackfill(backfill_id)};
}

BackfillCancelResult CancelBackfill(const WorkspaceOptions& workspace, const std::string& backfill_id) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(workspace);
  BackfillRecord backfill = RequireBackfill(*state, backfill_id);
  if (IsTerminal(backfill.status)) {
    return {BackfillCancelResult::Kind::kAlreadyFinished, backfill, backfill.status};
  }
  if (!OwnerAlive(backfill)) {
    // Nobody would notice a request: the backfill is stopped already, so it is canceled now.
    state->SetBackfillStatus(backfill_id, BackfillStatus::kCanceled, FormatUtc(SystemClock().Now()),
                             "canceled after its process died");
    return {BackfillCancelResult::Kind::kCanceledDeadOwner, backfill, BackfillStatus::kCanceled};
  }
  BackfillStatus status = state->RequestCancel(backfill_id);
  return {BackfillCancelResult::Kind::kRequested, backfill, status};
}

std::string ShownStatus(const BackfillRecord& backfill) {
  std::string status = BackfillStatusName(backfill.status);
  if (!IsTerminal(backfill.status) && !OwnerAlive(backfill)) status += " (process died)";
  return status;
}

json ToJson(const BackfillRecord& backfill, bool with_chunks) {
  size_t done = 0, failed = 0;
  json chunks = json::array();
  for (const BackfillChunk& chunk : backfill.chunks) {
    done += chunk.status == ChunkStatus::kSuccess;
    failed += chunk.status == ChunkStatus::kFailed;
    chunks.push_back({{"index", chunk.index},
                      {"partition_start", OrNull(chunk.partition_start)},
                      {"partition_end", OrNull(chunk.partition_end)},
                      {"assets", chunk.assets},
                      {"status", ChunkStatusName(chunk.status)},
                      {"run_id", chunk.run_id.empty() ? json(nullptr) : json(chunk.run_id)}});
  }
  json out{{"backfill_id", backfill.backfill_id},
           {"status", BackfillStatusName(backfill.status)},
           {"owner_alive", OwnerAlive(backfill)},
           {"pid", backfill.pid},
           {"created_at", backfill.created_at},
           {"finished_at", OrNull(backfill.finished_at)},
           {"selection", backfill.selection},
           {"partition_from", backfill.partition_from},
           {"partition_to", backfill.partition_to},
           {"max_concurrent_runs", backfill.max_concurrent_runs},
           {"error", backfill.error},
           {"chunk_counts", {{"total", backfill.chunks.size()}, {"success", done}, {"failed", failed}}}};
  if (with_chunks) out["chunks"] = chunks;
  return out;
}

json ToJson(const BackfillDetail& detail) {
  json out = ToJson(detail.backfill, true);
  json runs = json::array();
  for (const RunRecord& run : detail.runs) {
    runs.push_back({{"run_id", run.run_id},
                    {"status", RunStatusName(run.status)},
                    {"partition_start", OrNull(run.partition_start)},
                    {"partition_end", OrNull(run.partition_end)},
                    {"error", run.error}});
  }
  out["runs"] = runs;
  return out;
}

json ToJson(const BackfillResult& result) {
  if (result.already_complete) return ToJson(*result.already_complete, true);
  const BackfillOutcome& outcome = *result.outcome;
  const BackfillProgress& p = outcome.progress;
  json chunks = json::array();
  for (const ChunkOutcome& chunk : outcome.chunks) {
    json steps = json::array();
    for (const StepOutcome& step : chunk.steps) steps.push_back(ToJson(step));
    chunks.push_back({{"index", chunk.index},
                      {"window", chunk.window ? json{{"start", chunk.window->start.ToString()},
                                                     {"end", chunk.window->end.AddDays(-1).ToString()}}
                                              : json(nullptr)},
                      {"status", ChunkStatusName(chunk.status)},
                      {"run_id", chunk.run_id.empty() ? json(nullptr) : json(chunk.run_id)},
                      {"reconciled", chunk.reconciled},
                      {"message", chunk.message},
                      {"steps", steps}});
  }
  return json{
      {"backfill_id", result.backfill_id},
      {"status", BackfillStatusName(outcome.status)},
      {"message", outcome.message},
      {"partitions", {{"total", p.partitions_total}, {"done", p.partitions_done}, {"failed", p.partitions_failed}}},
      {"chunk_counts", {{"total", p.chunks_total}, {"done", p.chunks_done}, {"failed", p.chunks_failed}}},
      {"chunks", chunks},
      {"resume", outcome.status == BackfillStatus::kCompletedSuccess
                     ? json(nullptr)
                     : json(ProgramName() + " backfills resume " + result.backfill_id)}};
}

}  // namespace sluice::service
