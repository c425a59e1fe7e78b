// run: with --from/--to over partitioned assets, a backfill (backfill_commands.cpp). Otherwise: plans the
// selection, queues the run, opens the warehouse (waiting for another process when it must, the
// wait recorded in the run's events), executes, and reports: a line per step (and, on a terminal, a live line for
// steps running longer than two seconds), or with --json one summary object. Exit 0, 1 when a step failed or was
// skipped for a missing upstream, 130 when canceled by Ctrl-C or SIGTERM.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "cli/backfill_commands.hpp"
#include "cli/cancel_on_signal.hpp"
#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/run_output.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "service/run.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr auto kLiveAfter = std::chrono::seconds(2);

// The step lines, and on a terminal one live line naming the steps that have run for more than two seconds,
// redrawn every second and erased before each step line. Every output goes through one mutex.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), live_(!quiet && ::isatty(STDOUT_FILENO) == 1) {
    if (live_) ticker_ = std::thread([this] { Tick(); });
  }
  ~Progress() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (ticker_.joinable()) ticker_.join();
    std::lock_guard<std::mutex> lock(mutex_);
    ClearLive();
  }

  void Started(const AssetKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_[key.ToString()] = std::chrono::steady_clock::now();
  }

  void Finished(const StepOutcome& step, size_t done, size_t total) {
    std::lock_guard<std::mutex> lock(mutex_);
    running_.erase(step.key.ToString());
    if (quiet_) return;
    ClearLive();
    std::printf("[%zu/%zu] %s\n", done, total, DescribeStep(step).c_str());
    for (const Diagnostic& diagnostic : step.diagnostics) std::printf("%s", FormatDiagnostic(diagnostic).c_str());
    std::fflush(stdout);
  }

 private:
  void Tick() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stopping_; })) {
      auto now = std::chrono::steady_clock::now();
      std::string names;
      std::chrono::seconds longest{0};
      for (const auto& [name, since] : running_) {
        auto running_for = std::chrono::duration_cast<std::chrono::seconds>(now - since);
        if (running_for < kLiveAfter) continue;
        names += (names.empty() ? "" : ", ") + name;
        longest = std::max(longest, running_for);
      }
      ClearLive();
      if (names.empty()) continue;
      if (names.size() > 100) names = names.substr(0, 97) + "...";
      std::printf("  running %s (%llds)", names.c_str(), static_cast<long long>(longest.count()));
      std::fflush(stdout);
      shown_ = true;
    }
  }

  void ClearLive() {  // with mutex_ held
    if (!shown_) return;
    std::printf("\r\033[K");
    std::fflush(stdout);
    shown_ = false;
  }

  const bool quiet_;
  const bool live_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  bool shown_ = false;
  std::map<std::string, SteadyTime> running_;
  std::thread ticker_;
};

// The step lines of a plain run (a Progress made once the warehouse is open, in the armed thread), and the
// backfill's screen when the run is a backfill.
service::RunObserver ObserverFor(const RunOptions& options, std::optional<Progress>& progress,
                                 BackfillScreen& backfill_screen) {
  service::RunObserver observer;
  observer.on_warning = [](const std::string& warning) {
    std::fprintf(stderr, "%s", FormatWarning(warning, StyleFor(STDERR_FILENO)).c_str());
  };
  observer.on_waiting = [](const std::string& run_id, const std::string& message) {
    std::fprintf(stderr, "run %s %s\n", run_id.c_str(), message.c_str());
    std::fflush(stderr);
  };
  observer.on_started = [&options, &progress](const std::string& run_id, size_t steps) {
    progress.emplace(options.json);
    if (options.json) return;
    std::printf("run %s: %zu step(s)%s\n", run_id.c_str(), steps, options.full_refresh ? " (full refresh)" : "");
    std::fflush(stdout);
  };
  observer.on_step_started = [&progress](const AssetKey& key) { progress->Started(key); };
  observer.on_step = [&progress](const StepOutcome& step, size_t done, size_t total) {
    progress->Finished(step, done, total);
  };
  observer.backfill = backfill_screen.Observer();
  return observer;
}

// A finished plain run: its summary line, or the JSON document. Returns the exit code.
int ShowRun(const service::RunResult& result, bool json) {
  const RunOutcome& outcome = result.outcome;
  const int exit_code = ExitCodeFor(outcome.status);
  if (json) {
    PrintJson(service::ToJson(result));
    return exit_code;
  }
  std::map<StepStatus, size_t> counts;
  for (const StepOutcome& step : outcome.steps) ++counts[step.status];
  const size_t ok = counts[StepStatus::kSuccess] + counts[StepStatus::kUnchanged];
  std::string tail;
  if (counts[StepStatus::kCanceled] > 0) tail = ", " + std::to_string(counts[StepStatus::kCanceled]) + " canceled";
  std::printf("run %s %s: %zu ok, %zu failed, %zu skipped%s\n", result.run_id.c_str(),
              RunStatusName(outcome.status).c_str(), ok, counts[StepStatus::kFailed], counts[StepStatus::kSkipped],
              tail.c_str());
  if (outcome.status == RunStatus::kCanceled) {
    std::printf("canceled by %s: finished steps are kept; interrupted writes were rolled back\n",
                result.cancel_cause.c_str());
  }
  std::error_code ignored;
  std::filesystem::path shown =
      std::filesystem::relative(result.statements_dir, std::filesystem::current_path(), ignored);
  if (shown.empty() || *shown.begin() == "..") shown = result.statements_dir;
  std::printf("the statements sent: %s/\n", shown.c_str());
  return exit_code;
}

}  // namespace

int Run(const GlobalOptions& global, const RunOptions& options) {
  CancelOnSignal cancel(CancelOnSignal::Arming::kWhenAsked);
  std::optional<Progress> progress;
  BackfillScreen backfill_screen(options.json);
  const service::RunCommand command{options.select,
                                    options.partition,
                                    options.from,
                                    options.to,
                                    options.threads,
                                    options.full_refresh,
                                    options.allow_missing_upstream,
                                    options.wait_timeout_seconds,
                                    options.max_concurrent_runs};
  const service::RunResult result =
      service::Run(global, command, cancel, ObserverFor(options, progress, backfill_screen));
  progress.reset();
  switch (result.kind) {
    case service::RunResult::Kind::kBackfill:
      return backfill_screen.Finish(*result.backfill);
    case service::RunResult::Kind::kNothingSelected:
      if (options.json) {
        PrintJson(service::ToJson(result));
      } else {
        std::printf("nothing selected\n");
      }
      return 0;
    case service::RunResult::Kind::kCanceledWhileWaiting:
      std::fprintf(stderr, "run %s canceled by %s while waiting for the warehouse; nothing was written\n",
                   result.run_id.c_str(), result.cancel_cause.c_str());
      return kCanceledExit;
    case service::RunResult::Kind::kRun:
      break;
  }
  return ShowRun(result, options.json);
}

}  // namespace sluice::cli
