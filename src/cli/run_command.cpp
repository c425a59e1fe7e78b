#include <unistd.h>

#include <cstdio>

#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "engine/run_executor.hpp"

namespace sluice::cli {

namespace {

std::string Describe(const StepOutcome& step) {
  std::string line = StepStatusName(step.status);
  line.resize(10, ' ');
  line += step.key.ToString();
  if (step.window) {
    std::string last = step.window->end.AddDays(-1).ToString();
    std::string first = step.window->start.ToString();
    line += first == last ? " [" + first + "]" : " [" + first + " .. " + last + "]";
  }
  if (step.status == StepStatus::kSuccess && !step.wrote_rows) line += "  view";
  if (step.status == StepStatus::kSuccess && step.wrote_rows) {
    line += "  " + FormatCount(step.rows_written) + " rows";
    if (step.rows_dropped > 0) line += " (" + FormatCount(step.rows_dropped) + " outside the window dropped)";
  }
  if (!step.note.empty()) line += "  (" + step.note + ")";
  if (step.status != StepStatus::kSkipped) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "  %.2fs", static_cast<double>(step.duration_ms) / 1000.0);
    line += seconds;
  }
  return line;
}

}  // namespace

int Run(const GlobalOptions& global, const RunOptions& options) {
  const Project& project = LoadProjectFor(global);
  SystemClock clock;
  RunRequest request{options.select, options.partition ? options.partition : options.from,
                     options.partition ? options.partition : options.to};
  RunPlan plan = CheckingArguments([&] { return PlanRun(project.definitions, request, clock.TodayUtc()); });
  if (request.partition_from && !plan.window) {
    std::fprintf(stderr, "%s",
                 FormatWarning(std::string(options.partition ? "--partition is" : "--from and --to are") +
                                   " ignored: no selected asset is partitioned",
                               StyleFor(STDERR_FILENO))
                     .c_str());
  }
  if (plan.steps.empty()) {
    std::printf("nothing selected\n");
    return 0;
  }
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadWrite));
  std::unique_ptr<StateStore> state = OpenStateStore(project.root);
  RunExecutor executor(project.definitions, *warehouse, *state, *state, *state, clock,
                       ExecutorOptions{options.threads, project.root.string()});
  std::string run_id = RunExecutor::NewRunId(clock);
  std::printf("run %s: %zu step(s)\n", run_id.c_str(), plan.steps.size());
  std::fflush(stdout);
  RunOutcome outcome = executor.Execute(plan, run_id, [](const StepOutcome& step, size_t done, size_t total) {
    std::printf("[%zu/%zu] %s\n", done, total, Describe(step).c_str());
    for (const Diagnostic& diagnostic : step.diagnostics) std::printf("%s", FormatDiagnostic(diagnostic).c_str());
    std::fflush(stdout);
  });
  size_t ok = 0, failed = 0, skipped = 0;
  for (const StepOutcome& step : outcome.steps) {
    ok += step.status == StepStatus::kSuccess || step.status == StepStatus::kUnchanged;
    failed += step.status == StepStatus::kFailed;
    skipped += step.status == StepStatus::kSkipped;
  }
  std::printf("run %s %s: %zu ok, %zu failed, %zu skipped\n", run_id.c_str(),
              RunStatusName(outcome.status).c_str(), ok, failed, skipped);
  return outcome.status == RunStatus::kSuccess ? 0 : 1;
}

}  // namespace sluice::cli
