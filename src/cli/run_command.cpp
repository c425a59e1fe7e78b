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
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/backfill_commands.hpp"
#include "cli/cancel_on_signal.hpp"
#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "cli/run_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "deploy/published_definitions.hpp"
#include "engine/run_executor.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;
using SteadyTime = std::chrono::steady_clock::time_point;

constexpr int kCanceledExit = 130;
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

}  // namespace

int Run(const GlobalOptions& global, const RunOptions& options) {
  // A rebuild that ended at a chosen day would delete every later day while the ledger still counted them.
  if (options.full_refresh && (options.partition || options.from || options.to)) {
    throw UsageError(Diagnostic{
        "SLU-CLI-004", "--full-refresh takes no --partition, --from or --to: it rebuilds each selected table whole, from "
                       "its start date through the last complete day", {},
        "to replace some days, run them without --full-refresh (`sluice run --from A --to B` replaces exactly those "
        "days); to rebuild the table, drop the partition flags", {}});
  }
  const Project& project = LoadProjectFor(global);
  SystemClock clock;
  RunRequest request{options.select, options.partition ? options.partition : options.from,
                     options.partition ? options.partition : options.to, options.full_refresh};
  RunPlan plan = CheckingArguments([&] { return PlanRun(project.definitions, request, clock.TodayUtc()); });
  if (request.partition_from && !plan.window) {
    std::fprintf(stderr, "%s",
                 FormatWarning(std::string(options.partition ? "--partition is" : "--from and --to are") +
                                   " ignored: no selected asset is partitioned",
                               StyleFor(STDERR_FILENO))
                     .c_str());
  }
  // Days of a virtual pipeline's daily model go into the table its stable view reads (deploy/published_definitions.hpp).
  std::vector<AssetKey> planned;
  for (const StepPlan& step : plan.steps) planned.push_back(step.key);
  const bool published_days = WritesVirtualModels(project.definitions, planned);
  // A key range over partitioned assets is a backfill (backfill_commands.hpp); --partition, a full refresh,
  // unpartitioned selections and a virtual pipeline's days stay one plain run.
  if (options.from && !options.full_refresh && plan.window && !published_days) {
    std::vector<Date> keys;
    for (Date day = plan.window->start; day < plan.window->end; day = day.AddDays(1)) keys.push_back(day);
    BackfillPlan backfill = CheckingArguments(
        [&] { return PlanBackfill(project.definitions, BackfillRequest{options.select, keys}, clock.TodayUtc()); });
    std::unique_ptr<StateStore> state = OpenStateStoreFor(project);
    BackfillRunFlags flags{options.threads, options.max_concurrent_runs, options.allow_missing_upstream,
                           options.wait_timeout_seconds, options.json};
    return StartBackfill(ContextFor(project, *state), backfill, flags);
  }
  if (plan.steps.empty()) {
    if (options.json) {
      std::printf("%s\n", json{{"run_id", nullptr}, {"status", "NOTHING_SELECTED"}, {"steps", json::array()}}.dump(2).c_str());
    } else {
      std::printf("nothing selected\n");
    }
    return 0;
  }

  CancelOnSignal cancel;  // before the warehouse opens: its engine starts threads, which inherit the signal mask
  std::unique_ptr<StateStore> state = OpenStateStoreFor(project);
  std::string run_id = RunExecutor::NewRunId(clock);
  QueueRun(*state, plan, run_id, clock);

  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.cancel = &cancel.canceled();
  config.wait.timeout_flag = "--wait-timeout";
  if (options.wait_timeout_seconds) {
    config.wait.timeout = std::chrono::milliseconds(static_cast<int64_t>(*options.wait_timeout_seconds * 1000));
  }
  config.wait.on_wait = [&](const std::string& message) {
    state->Append(run_id, FormatUtc(clock.Now()), RunWaitingEvent{message});
    std::fprintf(stderr, "run %s %s\n", run_id.c_str(), message.c_str());
    std::fflush(stderr);
  };
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = OpenWarehouse(config);
  } catch (const Error& error) {
    bool canceled = cancel.canceled();
    AbandonRun(*state, *state, run_id, clock, canceled, error.diagnostics().front().message);
    if (!canceled) throw;
    std::fprintf(stderr, "run %s canceled by %s while waiting for the warehouse; nothing was written\n",
                 run_id.c_str(), cancel.signal_name().c_str());
    return kCanceledExit;
  }
  cancel.Interrupting(warehouse.get());
  std::optional<Definitions> published;
  if (published_days) {
    try {
      published = PublishedDefinitions(project.definitions, *warehouse, planned);
    } catch (const Error& error) {
      AbandonRun(*state, *state, run_id, clock, false, error.diagnostics().front().message);
      throw;
    }
  }

  // target/run holds the statements of the latest run only.
  std::filesystem::path statements = project.root / "target" / "run";
  std::error_code ignored;
  std::filesystem::remove_all(statements, ignored);

  Progress progress(options.json);
  ExecutorOptions executor_options{options.threads, project.root.string()};
  executor_options.cancel = &cancel.canceled();
  executor_options.allow_missing_upstream = options.allow_missing_upstream;
  executor_options.statements_dir = statements;
  executor_options.on_start = [&](const AssetKey& key) { progress.Started(key); };
  RunExecutor executor(published ? *published : project.definitions, *warehouse, *state, *state, *state, clock,
                       executor_options);
  if (!options.json) {
    std::printf("run %s: %zu step(s)%s\n", run_id.c_str(), plan.steps.size(),
                options.full_refresh ? " (full refresh)" : "");
    std::fflush(stdout);
  }
  RunOutcome outcome = executor.Execute(plan, run_id, [&](const StepOutcome& step, size_t done, size_t total) {
    progress.Finished(step, done, total);
  });
  cancel.Interrupting(nullptr);

  std::map<StepStatus, size_t> counts;
  for (const StepOutcome& step : outcome.steps) ++counts[step.status];
  size_t ok = counts[StepStatus::kSuccess] + counts[StepStatus::kUnchanged];
  int exit_code = outcome.status == RunStatus::kSuccess    ? 0
                  : outcome.status == RunStatus::kCanceled ? kCanceledExit
                                                           : 1;
  if (options.json) {
    json steps = json::array();
    for (const StepOutcome& step : outcome.steps) steps.push_back(StepJson(step));
    json summary{{"run_id", run_id},
                 {"status", RunStatusName(outcome.status)},
                 {"counts",
                  {{"ok", ok},
                   {"failed", counts[StepStatus::kFailed]},
                   {"skipped", counts[StepStatus::kSkipped]},
                   {"canceled", counts[StepStatus::kCanceled]}}},
                 {"steps", steps},
                 {"statements_dir", statements.string()}};
    std::printf("%s\n", summary.dump(2).c_str());
    return exit_code;
  }
  std::string tail;
  if (counts[StepStatus::kCanceled] > 0) tail = ", " + std::to_string(counts[StepStatus::kCanceled]) + " canceled";
  std::printf("run %s %s: %zu ok, %zu failed, %zu skipped%s\n", run_id.c_str(), RunStatusName(outcome.status).c_str(),
              ok, counts[StepStatus::kFailed], counts[StepStatus::kSkipped], tail.c_str());
  if (outcome.status == RunStatus::kCanceled) {
    std::printf("canceled by %s: finished steps are kept; interrupted writes were rolled back\n",
                cancel.signal_name().c_str());
  }
  std::filesystem::path shown = std::filesystem::relative(statements, std::filesystem::current_path(), ignored);
  if (shown.empty() || *shown.begin() == "..") shown = statements;
  std::printf("the statements sent: %s/\n", shown.c_str());
  return exit_code;
}

}  // namespace sluice::cli
