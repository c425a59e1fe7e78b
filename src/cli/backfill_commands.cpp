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

#include "cli/cancel_on_signal.hpp"
#include "cli/run_output.hpp"
#include "cli/text_output.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

std::string ChunkRangeText(const BackfillChunk& chunk) {
  if (!chunk.partition_start) return "unpartitioned";
  return *chunk.partition_start == *chunk.partition_end ? *chunk.partition_start
                                                        : *chunk.partition_start + " .. " + *chunk.partition_end;
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

}  // namespace

// What the user sees while a backfill runs. Every output goes through one mutex.
class BackfillScreen::View {
 public:
  View(bool json, size_t chunk_count)
      : json_(json),
        single_(chunk_count == 1),
        live_(!json && ::isatty(STDOUT_FILENO) == 1),
        begin_(std::chrono::steady_clock::now()) {
    if (live_) ticker_ = std::thread([this] { Tick(); });
  }
  ~View() { Finish(); }

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
                       Join(assets, ", ");
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
    std::snprintf(text, sizeof text,
                  "[%s] %zu/%zu partitions, %zu failed  chunks %zu/%zu (%zu running)  %.1f/s  ETA %s", bar.c_str(),
                  p.partitions_done, p.partitions_total, p.partitions_failed, p.chunks_done, p.chunks_total,
                  p.chunks_running, rate, Clock(eta).c_str());
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

BackfillScreen::BackfillScreen(bool json) : json_(json) {}
BackfillScreen::~BackfillScreen() = default;

service::BackfillObserver BackfillScreen::Observer() {
  service::BackfillObserver observer;
  observer.on_started = [this](const BackfillRecord& backfill, int concurrency) {
    if (!json_) {
      std::printf("backfill %s: %s .. %s, %zu chunk(s), %d at once\n", backfill.backfill_id.c_str(),
                  backfill.partition_from.c_str(), backfill.partition_to.c_str(), backfill.chunks.size(), concurrency);
      std::printf("if it stops before the end: %s backfills resume %s\n", ProgramName().c_str(),
                  backfill.backfill_id.c_str());
      std::fflush(stdout);
    }
    backfill_id_ = backfill.backfill_id;
    chunks_ = backfill.chunks;
  };
  observer.on_waiting = [this](const std::string& message) {
    std::fprintf(stderr, "backfill %s %s\n", backfill_id_.c_str(), message.c_str());
    std::fflush(stderr);
  };
  observer.on_progress = [this](const BackfillProgress& progress) { view().Progress(progress); };
  observer.on_chunk_started = [this](const BackfillChunk& chunk, const std::string& run_id, size_t steps) {
    view().ChunkStarted(chunk, run_id, steps);
  };
  observer.on_step = [this](const StepOutcome& step, size_t done, size_t total) { view().Step(step, done, total); };
  observer.on_chunk = [this](const ChunkOutcome& chunk, const BackfillProgress& progress) {
    view().ChunkFinished(chunk, chunks_.size(), chunks_.at(static_cast<size_t>(chunk.index)).assets);
    view().Progress(progress);
  };
  return observer;
}

BackfillScreen::View& BackfillScreen::view() {
  std::call_once(view_made_, [this] { view_ = std::make_unique<View>(json_, chunks_.size()); });
  return *view_;
}

int BackfillScreen::Finish(const service::BackfillResult& result) {
  const std::string& id = result.backfill_id;
  if (result.already_complete) {
    if (json_) {
      PrintJson(service::ToJson(result));
    } else {
      std::printf("backfill %s is COMPLETED_SUCCESS: nothing to resume\n", id.c_str());
    }
    return 0;
  }
  if (result.canceled_while_waiting) {
    std::fprintf(stderr, "backfill %s canceled by %s while waiting for the warehouse; nothing was written\n",
                 id.c_str(), result.cancel_cause.c_str());
    return kCanceledExit;
  }
  if (view_) view_->Finish();
  const BackfillOutcome& outcome = *result.outcome;
  const BackfillProgress& p = outcome.progress;
  const int exit_code = result.succeeded() ? 0 : result.canceled() ? kCanceledExit : 1;
  if (json_) {
    PrintJson(service::ToJson(result));
    return exit_code;
  }
  std::printf("backfill %s %s: %zu/%zu partitions done, %zu failed; %zu/%zu chunk(s) done\n", id.c_str(),
              BackfillStatusName(outcome.status).c_str(), p.partitions_done, p.partitions_total, p.partitions_failed,
              p.chunks_done, p.chunks_total);
  if (!outcome.message.empty()) std::printf("%s\n", outcome.message.c_str());
  if (result.canceled()) {
    std::printf("canceled by %s: finished chunks are kept; interrupted writes were rolled back\n",
                result.cancel_cause.c_str());
  }
  if (outcome.status != BackfillStatus::kCompletedSuccess) {
    std::printf("to run what is left: %s backfills resume %s\n", ProgramName().c_str(), id.c_str());
  }
  return exit_code;
}

int Backfills(const GlobalOptions& global, bool as_json, int limit) {
  const std::vector<BackfillRecord> backfills = service::ListBackfills(global, limit);
  if (as_json) {
    json list = json::array();
    for (const BackfillRecord& backfill : backfills) list.push_back(service::ToJson(backfill, false));
    PrintJson(json{{"backfills", list}});
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
    std::printf("%s  %s  %s  %s  %s  %s\n", Pad(backfill.backfill_id, 29).c_str(),
                Pad(service::ShownStatus(backfill), 32).c_str(), Pad(backfill.created_at, 24).c_str(),
                Pad(backfill.partition_from + ".." + backfill.partition_to, 24).c_str(), Pad(chunks, 22).c_str(),
                backfill.selection.c_str());
  }
  return 0;
}

int BackfillShow(const GlobalOptions& global, const std::string& backfill_id, bool as_json) {
  const service::BackfillDetail detail = service::ShowBackfill(global, backfill_id);
  if (as_json) {
    PrintJson(service::ToJson(detail));
    return 0;
  }
  const BackfillRecord& backfill = detail.backfill;
  std::printf("backfill %s  %s\n", backfill.backfill_id.c_str(), service::ShownStatus(backfill).c_str());
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
                Pad(chunk.run_id.empty() ? "-" : chunk.run_id, 26).c_str(), Join(chunk.assets, ", ").c_str());
  }
  if (!IsTerminal(backfill.status) && !OwnerAlive(backfill)) {
    std::printf("\nits process (pid %lld) is gone: %s backfills resume %s\n", static_cast<long long>(backfill.pid),
                ProgramName().c_str(), backfill.backfill_id.c_str());
  }
  return 0;
}

int BackfillCancel(const GlobalOptions& global, const std::string& backfill_id) {
  const service::BackfillCancelResult result = service::CancelBackfill(global, backfill_id);
  const long long pid = static_cast<long long>(result.backfill.pid);
  switch (result.kind) {
    case service::BackfillCancelResult::Kind::kAlreadyFinished:
      std::printf("backfill %s is already %s\n", backfill_id.c_str(), BackfillStatusName(result.status).c_str());
      break;
    case service::BackfillCancelResult::Kind::kCanceledDeadOwner:
      std::printf(
          "backfill %s CANCELED (its process, pid %lld, had died); `%s backfills resume %s` still runs "
          "what is left\n",
          backfill_id.c_str(), pid, ProgramName().c_str(), backfill_id.c_str());
      break;
    case service::BackfillCancelResult::Kind::kRequested:
      std::printf("backfill %s %s: its process (pid %lld) launches no more chunks and lets the running ones finish\n",
                  backfill_id.c_str(), BackfillStatusName(result.status).c_str(), pid);
      break;
  }
  return 0;
}

int BackfillResume(const GlobalOptions& global, const BackfillResumeOptions& options) {
  CancelOnSignal cancel(CancelOnSignal::Arming::kWhenAsked);
  BackfillScreen screen(options.json);
  const service::BackfillSettings settings{options.threads, options.max_concurrent_runs, options.allow_missing_upstream,
                                           options.wait_timeout_seconds};
  return screen.Finish(service::ResumeBackfill(global, options.backfill_id, settings, cancel, screen.Observer()));
}

}  // namespace sluice::cli
