// Backfill commands. A backfill runs with a view of its progress: on a terminal a live bar (partitions done, failed
// and total, rate, ETA) redrawn in place below the chunk lines; otherwise plain lines, one per chunk. A backfill of
// one chunk shows that run's step lines, as `run` does. --json prints one summary object at the end.
#include "cli/backfill_commands.hpp"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/cancel_on_signal.hpp"
#include "cli/project_context.hpp"
#include "cli/run_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "engine/backfill_coordinator.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

constexpr int kCanceledExit = 130;

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

std::string ChunkRangeText(const BackfillChunk& chunk) {
  if (!chunk.partition_start) return "unpartitioned";
  return *chunk.partition_start == *chunk.partition_end ? *chunk.partition_start
                                                        : *chunk.partition_start + " .. " + *chunk.partition_end;
}

std::string JoinAssets(const std::vector<std::string>& assets) {
  std::string text;
  for (const std::string& asset : assets) text += (text.empty() ? "" : ", ") + asset;
  return text;
}

// The status as shown: a backfill still REQUESTED or CANCELING whose process is gone says so.
std::string ShownStatus(const BackfillRecord& backfill) {
  std::string status = BackfillStatusName(backfill.status);
  if (!IsTerminal(backfill.status) && !OwnerAlive(backfill)) status += " (process died)";
  return status;
}

json BackfillJson(const BackfillRecord& backfill, bool with_chunks) {
  size_t done = 0, failed = 0;
  json chunks = json::array();
  for (const BackfillChunk& chunk : backfill.chunks) {
    done += chunk.status == ChunkStatus::kSuccess;
    failed += chunk.status == ChunkStatus::kFailed;
    chunks.push_back({{"index", chunk.index},
                      {"partition_start", chunk.partition_start ? json(*chunk.partition_start) : json(nullptr)},
                      {"partition_end", chunk.partition_end ? json(*chunk.partition_end) : json(nullptr)},
                      {"assets", chunk.assets},
                      {"status", ChunkStatusName(chunk.status)},
                      {"run_id", chunk.run_id.empty() ? json(nullptr) : json(chunk.run_id)}});
  }
  json out{{"backfill_id", backfill.backfill_id},
           {"status", BackfillStatusName(backfill.status)},
           {"owner_alive", OwnerAlive(backfill)},
           {"pid", backfill.pid},
           {"created_at", backfill.created_at},
           {"finished_at", backfill.finished_at ? json(*backfill.finished_at) : json(nullptr)},
           {"selection", backfill.selection},
           {"partition_from", backfill.partition_from},
           {"partition_to", backfill.partition_to},
           {"max_concurrent_runs", backfill.max_concurrent_runs},
           {"error", backfill.error},
           {"chunk_counts", {{"total", backfill.chunks.size()}, {"success", done}, {"failed", failed}}}};
  if (with_chunks) out["chunks"] = chunks;
  return out;
}

std::string Clock(double seconds) {
  if (seconds < 0 || seconds > 359999) return "--:--";
  long total = static_cast<long>(seconds + 0.5);
  char text[32];
  if (total >= 3600) {
    std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", total / 3600, (total / 60) % 60, total % 60);
  } else {
    std::snprintf(text, sizeof text, "%ld:%02ld", total / 60, total % 60);
  }
  return text;
}

// What the user sees while a backfill runs. Every output goes through one mutex.
class BackfillView {
 public:
  BackfillView(bool json, size_t chunk_count)
      : json_(json), single_(chunk_count == 1), live_(!json && ::isatty(STDOUT_FILENO) == 1),
        begin_(std::chrono::steady_clock::now()) {
    if (live_) ticker_ = std::thread([this] { Tick(); });
  }
  ~BackfillView() { Finish(); }

  // Stops redrawing and erases the bar, before the summary is printed.
  void Finish() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    ClearBar();
    live_ = false;
  }

  void Progress(const BackfillProgress& progress) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!baseline_) baseline_ = progress.partitions_done + progress.partitions_failed;
    progress_ = progress;
    DrawBar();
  }

  void ChunkStarted(const BackfillChunk& chunk, const std::string& run_id, size_t steps) {
    if (json_ || !single_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ClearBar();
    std::printf("run %s: %zu step(s) [%s]\n", run_id.c_str(), steps, ChunkRangeText(chunk).c_str());
    std::fflush(stdout);
    DrawBar();
  }

  void Step(const StepOutcome& step, size_t done, size_t total) {
    if (json_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!single_ && step.status != StepStatus::kFailed) return;  // many chunks: a line per chunk, and failures
    ClearBar();
    if (single_) {
      std::printf("[%zu/%zu] %s\n", done, total, DescribeStep(step).c_str());
    } else {
      std::printf("  %s\n", DescribeStep(step).c_str());
    }
    for (const Diagnostic& diagnostic : step.diagnostics) std::printf("%s", FormatDiagnostic(diagnostic).c_str());
    std::fflush(stdout);
    DrawBar();
  }

  void ChunkFinished(const ChunkOutcome& chunk, size_t chunk_count, const std::vector<std::string>& assets) {
    if (json_ || single_) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ClearBar();
    std::string range = chunk.window ? WindowText(*chunk.window) : "unpartitioned";
    std::string line = "chunk " + std::to_string(chunk.index + 1) + "/" + std::to_string(chunk_count) + " " +
                       Pad("[" + range + "]", 28) + " " + Pad(ChunkStatusName(chunk.status), 8) + " " +
                       JoinAssets(assets);
    if (chunk.reconciled) {
      line += "  (already written: found in the warehouse ledger)";
    } else {
      line += "  run " + chunk.run_id;
    }
    if (!chunk.message.empty()) line += "  (" + chunk.message + ")";
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
    DrawBar();
  }

 private:
  void Tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) DrawBar();
  }

  void DrawBar() {  // with mutex_ held
    if (!live_ || !baseline_ || progress_.partitions_total == 0) return;
    const BackfillProgress& p = progress_;
    constexpr size_t kWidth = 24;
    size_t finished = p.partitions_done + p.partitions_failed;
    size_t filled = p.partitions_total ? finished * kWidth / p.partitions_total : 0;
    std::string bar(filled, '#');
    bar.resize(kWidth, '.');
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin_).count();
    double rate = elapsed > 0 ? static_cast<double>(finished - *baseline_) / elapsed : 0;
    double eta = rate > 0 ? static_cast<double>(p.partitions_total - finished) / rate : -1;
    char text[256];
    std::snprintf(text, sizeof text, "[%s] %zu/%zu partitions, %zu failed  chunks %zu/%zu (%zu running)  %.1f/s  ETA %s",
                  bar.c_str(), p.partitions_done, p.partitions_total, p.partitions_failed, p.chunks_done,
                  p.chunks_total, p.chunks_running, rate, Clock(eta).c_str());
    std::printf("\r\033[K%s", text);
    std::fflush(stdout);
    shown_ = true;
  }

  void ClearBar() {  // with mutex_ held
    if (!shown_) return;
    std::printf("\r\033[K");
    std::fflush(stdout);
    shown_ = false;
  }

  const bool json_;
  const bool single_;
  bool live_;  // guarded by mutex_ once the ticker runs
  const std::chrono::steady_clock::time_point begin_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool shown_ = false;
  std::optional<size_t> baseline_;  // partitions finished before this process started on them
  BackfillProgress progress_;
  std::thread ticker_;
};

// Runs the chunks of `backfill` not yet successful; this process owns it. Prints as described at the top.
int ExecuteBackfill(const BackfillContext& context, const BackfillRecord& backfill, const BackfillRunFlags& flags) {
  SystemClock clock;
  const std::string& id = backfill.backfill_id;
  const int concurrency = flags.max_concurrent_runs > 0 ? flags.max_concurrent_runs : backfill.max_concurrent_runs;
  if (!flags.json) {
    std::printf("backfill %s: %s .. %s, %zu chunk(s), %d at once\n", id.c_str(), backfill.partition_from.c_str(),
                backfill.partition_to.c_str(), backfill.chunks.size(), concurrency);
    std::printf("if it stops before the end: %s backfills resume %s\n", ProgramName().c_str(), id.c_str());
    std::fflush(stdout);
  }

  CancelOnSignal cancel;  // before the warehouse opens: its engine starts threads, which inherit the signal mask
  WaitPolicy wait;
  wait.cancel = &cancel.canceled();
  wait.timeout_flag = "--wait-timeout";  // `run --from/--to` and `backfills resume` both take it
  if (flags.wait_timeout_seconds) {
    wait.timeout = std::chrono::milliseconds(static_cast<int64_t>(*flags.wait_timeout_seconds * 1000));
  }
  wait.on_wait = [&](const std::string& message) {
    std::fprintf(stderr, "backfill %s %s\n", id.c_str(), message.c_str());
    std::fflush(stderr);
  };
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = context.open_warehouse(wait);
  } catch (const Error& error) {
    bool canceled = cancel.canceled();
    context.state.SetBackfillStatus(id, canceled ? BackfillStatus::kCanceled : BackfillStatus::kFailed,
                                    FormatUtc(clock.Now()), error.diagnostics().front().message);
    if (!canceled) throw;
    std::fprintf(stderr, "backfill %s canceled by %s while waiting for the warehouse; nothing was written\n",
                 id.c_str(), cancel.signal_name().c_str());
    return kCanceledExit;
  }
  cancel.Interrupting(warehouse.get());

  BackfillView view(flags.json, backfill.chunks.size());
  BackfillOptions options;
  options.max_concurrent_runs = concurrency;
  options.executor.threads = flags.threads;
  options.executor.project_root = context.project_root.string();
  options.executor.cancel = &cancel.canceled();
  options.executor.allow_missing_upstream = flags.allow_missing_upstream;
  if (backfill.chunks.size() == 1) {
    // One run, as a plain `run`: target/run holds its statements. With several chunks at once the warehouse's one
    // statement observer cannot serve them all, so none is kept.
    options.executor.statements_dir = context.project_root / "target" / "run";
    std::error_code ignored;
    std::filesystem::remove_all(*options.executor.statements_dir, ignored);
  }
  options.on_progress = [&](const BackfillProgress& progress) { view.Progress(progress); };
  options.on_chunk_started = [&](const BackfillChunk& chunk, const std::string& run_id, size_t steps) {
    view.ChunkStarted(chunk, run_id, steps);
  };
  options.on_step = [&](int, const StepOutcome& step, size_t done, size_t total) { view.Step(step, done, total); };
  options.on_chunk = [&](const ChunkOutcome& chunk, const BackfillProgress& progress) {
    view.ChunkFinished(chunk, backfill.chunks.size(), backfill.chunks.at(static_cast<size_t>(chunk.index)).assets);
    view.Progress(progress);
  };
  BackfillCoordinator coordinator(context.definitions, *warehouse, context.state, clock, options);
  BackfillOutcome outcome = coordinator.Run(id);
  cancel.Interrupting(nullptr);
  view.Finish();

  const BackfillProgress& p = outcome.progress;
  int exit_code = outcome.status == BackfillStatus::kCompletedSuccess ? 0
                  : outcome.status == BackfillStatus::kCanceled && !outcome.cancel_requested ? kCanceledExit
                                                                                             : 1;
  if (flags.json) {
    json chunks = json::array();
    for (const ChunkOutcome& chunk : outcome.chunks) {
      json steps = json::array();
      for (const StepOutcome& step : chunk.steps) steps.push_back(StepJson(step));
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
    json summary{{"backfill_id", id},
                 {"status", BackfillStatusName(outcome.status)},
                 {"message", outcome.message},
                 {"partitions", {{"total", p.partitions_total}, {"done", p.partitions_done}, {"failed", p.partitions_failed}}},
                 {"chunk_counts", {{"total", p.chunks_total}, {"done", p.chunks_done}, {"failed", p.chunks_failed}}},
                 {"chunks", chunks},
                 {"resume", outcome.status == BackfillStatus::kCompletedSuccess
                                ? json(nullptr)
                                : json(ProgramName() + " backfills resume " + id)}};
    std::printf("%s\n", summary.dump(2).c_str());
    return exit_code;
  }
  std::printf("backfill %s %s: %zu/%zu partitions done, %zu failed; %zu/%zu chunk(s) done\n", id.c_str(),
              BackfillStatusName(outcome.status).c_str(), p.partitions_done, p.partitions_total, p.partitions_failed,
              p.chunks_done, p.chunks_total);
  if (!outcome.message.empty()) std::printf("%s\n", outcome.message.c_str());
  if (outcome.status == BackfillStatus::kCanceled && !outcome.cancel_requested) {
    std::printf("canceled by %s: finished chunks are kept; interrupted writes were rolled back\n",
                cancel.signal_name().c_str());
  }
  if (outcome.status != BackfillStatus::kCompletedSuccess) {
    std::printf("to run what is left: %s backfills resume %s\n", ProgramName().c_str(), id.c_str());
  }
  return exit_code;
}

}  // namespace

BackfillContext ContextFor(const Project& project, StateStore& state) {
  return BackfillContext{project.definitions, state, project.root, [&project](const WaitPolicy& wait) {
                           WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
                           config.wait = wait;
                           return OpenWarehouse(config);
                         }};
}

namespace {

BackfillRecord RequireBackfill(StateStore& state, const std::string& backfill_id) {
  std::optional<BackfillRecord> backfill = state.GetBackfill(backfill_id);
  if (!backfill) {
    throw UsageError(Diagnostic{"SLU-BACKFILL-003", "there is no backfill " + backfill_id, {},
                                "list backfills with `" + ProgramName() + " backfills`", {}});
  }
  return *backfill;
}

}  // namespace

int StartBackfill(const BackfillContext& context, const BackfillPlan& plan, const BackfillRunFlags& flags) {
  SystemClock clock;
  const int concurrency = flags.max_concurrent_runs > 0 ? flags.max_concurrent_runs : kDefaultMaxConcurrentRuns;
  BackfillRecord record = CreateBackfill(context.state, plan, NewBackfillId(clock), concurrency, clock);
  return ExecuteBackfill(context, record, flags);
}

int Backfills(const GlobalOptions& global, bool as_json, int limit) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(global);
  std::vector<BackfillRecord> backfills = state->ListBackfills(limit);
  if (as_json) {
    json list = json::array();
    for (const BackfillRecord& backfill : backfills) list.push_back(BackfillJson(backfill, false));
    std::printf("%s\n", json{{"backfills", list}}.dump(2).c_str());
    return 0;
  }
  std::printf("%s  %s  %s  %s  %s  %s\n", Pad("BACKFILL", 29).c_str(), Pad("STATUS", 32).c_str(),
              Pad("CREATED", 24).c_str(), Pad("RANGE", 24).c_str(), Pad("CHUNKS", 22).c_str(), "SELECTION");
  for (const BackfillRecord& backfill : backfills) {
    size_t done = 0, failed = 0;
    for (const BackfillChunk& chunk : backfill.chunks) {
      done += chunk.status == ChunkStatus::kSuccess;
      failed += chunk.status == ChunkStatus::kFailed;
    }
    std::string chunks = std::to_string(done) + "/" + std::to_string(backfill.chunks.size()) + " done";
    if (failed > 0) chunks += ", " + std::to_string(failed) + " failed";
    std::printf("%s  %s  %s  %s  %s  %s\n", Pad(backfill.backfill_id, 29).c_str(), Pad(ShownStatus(backfill), 32).c_str(),
                Pad(backfill.created_at, 24).c_str(),
                Pad(backfill.partition_from + ".." + backfill.partition_to, 24).c_str(), Pad(chunks, 22).c_str(),
                backfill.selection.c_str());
  }
  return 0;
}

int BackfillShow(const GlobalOptions& global, const std::string& backfill_id, bool as_json) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(global);
  BackfillRecord backfill = RequireBackfill(*state, backfill_id);
  if (as_json) {
    json out = BackfillJson(backfill, true);
    json runs = json::array();
    for (const RunRecord& run : state->RunsOfBackfill(backfill_id)) {
      runs.push_back({{"run_id", run.run_id}, {"status", RunStatusName(run.status)},
                      {"partition_start", run.partition_start ? json(*run.partition_start) : json(nullptr)},
                      {"partition_end", run.partition_end ? json(*run.partition_end) : json(nullptr)},
                      {"error", run.error}});
    }
    out["runs"] = runs;
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("backfill %s  %s\n", backfill.backfill_id.c_str(), ShownStatus(backfill).c_str());
  std::printf("range %s .. %s, selection %s, %d chunk(s) at once, owner pid %lld\n", backfill.partition_from.c_str(),
              backfill.partition_to.c_str(), backfill.selection.c_str(), backfill.max_concurrent_runs,
              static_cast<long long>(backfill.pid));
  std::printf("created %s%s\n", backfill.created_at.c_str(),
              backfill.finished_at ? (", finished " + *backfill.finished_at).c_str() : "");
  if (!backfill.error.empty()) std::printf("%s\n", backfill.error.c_str());
  std::printf("\n%s  %s  %s  %s  %s\n", Pad("CHUNK", 5).c_str(), Pad("RANGE", 26).c_str(), Pad("STATUS", 8).c_str(),
              Pad("RUN", 26).c_str(), "ASSETS");
  for (const BackfillChunk& chunk : backfill.chunks) {
    std::printf("%s  %s  %s  %s  %s\n", Pad(std::to_string(chunk.index + 1), 5).c_str(),
                Pad(ChunkRangeText(chunk), 26).c_str(), Pad(ChunkStatusName(chunk.status), 8).c_str(),
                Pad(chunk.run_id.empty() ? "-" : chunk.run_id, 26).c_str(), JoinAssets(chunk.assets).c_str());
  }
  if (!IsTerminal(backfill.status) && !OwnerAlive(backfill)) {
    std::printf("\nits process (pid %lld) is gone: %s backfills resume %s\n", static_cast<long long>(backfill.pid),
                ProgramName().c_str(), backfill.backfill_id.c_str());
  }
  return 0;
}

int BackfillCancel(const GlobalOptions& global, const std::string& backfill_id) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(global);
  BackfillRecord backfill = RequireBackfill(*state, backfill_id);
  if (IsTerminal(backfill.status)) {
    std::printf("backfill %s is already %s\n", backfill_id.c_str(), BackfillStatusName(backfill.status).c_str());
    return 0;
  }
  if (!OwnerAlive(backfill)) {
    // Nobody would notice a request: the backfill is stopped already, so it is canceled now.
    state->SetBackfillStatus(backfill_id, BackfillStatus::kCanceled, FormatUtc(SystemClock().Now()),
                             "canceled after its process died");
    std::printf("backfill %s CANCELED (its process, pid %lld, had died); `%s backfills resume %s` still runs "
                "what is left\n",
                backfill_id.c_str(), static_cast<long long>(backfill.pid), ProgramName().c_str(), backfill_id.c_str());
    return 0;
  }
  BackfillStatus status = state->RequestCancel(backfill_id);
  std::printf("backfill %s %s: its process (pid %lld) launches no more chunks and lets the running ones finish\n",
              backfill_id.c_str(), BackfillStatusName(status).c_str(), static_cast<long long>(backfill.pid));
  return 0;
}

int BackfillResume(const GlobalOptions& global, const BackfillResumeOptions& options) {
  const Project& project = LoadProjectFor(global);
  std::unique_ptr<StateStore> state = OpenStateStoreFor(project);
  BackfillRecord backfill = RequireBackfill(*state, options.backfill_id);
  if (backfill.status == BackfillStatus::kCompletedSuccess) {
    if (options.json) {
      std::printf("%s\n", BackfillJson(backfill, true).dump(2).c_str());
    } else {
      std::printf("backfill %s is COMPLETED_SUCCESS: nothing to resume\n", backfill.backfill_id.c_str());
    }
    return 0;
  }
  const int64_t pid = ::getpid();
  const int64_t start_time = ProcessStartTime(pid);
  bool running_elsewhere = !IsTerminal(backfill.status) && OwnerAlive(backfill);
  if (running_elsewhere ||
      !state->ClaimBackfill(backfill.backfill_id, backfill.pid, backfill.pid_start_time, pid, start_time)) {
    throw Error(Diagnostic{"SLU-BACKFILL-005",
                           "backfill " + backfill.backfill_id + " is being run by another process (pid " +
                               std::to_string(running_elsewhere ? backfill.pid : state->GetBackfill(backfill.backfill_id)->pid) + ")",
                           {}, "wait for it, or stop it with `" + ProgramName() + " backfills cancel " + backfill.backfill_id + "`",
                           {}});
  }
  backfill = *state->GetBackfill(backfill.backfill_id);
  BackfillContext context = ContextFor(project, *state);
  BackfillRunFlags flags{options.threads, options.max_concurrent_runs, options.allow_missing_upstream,
                         options.wait_timeout_seconds, options.json};
  return ExecuteBackfill(context, backfill, flags);
}

}  // namespace sluice::cli
