// plan and build (direct mode): plan reads the warehouse and changes nothing; build shows the same plan, asks for
// approval (and each protected pipeline's confirmation token), then executes it. Output: text, --json (one
// document at the end) or, for build, --events (one JSON object per line as the build goes). Exit 0 ok, 1 failure
// (a failed step, a failed error-severity audit, a declined prompt), 2 usage, 130 canceled by a signal.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/build_progress.hpp"
#include "cli/cancel_on_signal.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "core/file_system.hpp"
#include "deploy/actual_state.hpp"
#include "deploy/direct_executor.hpp"
#include "deploy/direct_plan.hpp"
#include "deploy/plan_explainer.hpp"
#include "deploy/virtual_executor.hpp"
#include "deploy/virtual_plan.hpp"
#include "engine/run_executor.hpp"
#include "state/open_state_store.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

constexpr int kCanceledExit = 130;

// Reads one line from the terminal after `prompt`; empty when stdin is closed.
std::string Ask(const std::string& prompt) {
  std::fprintf(stderr, "%s", prompt.c_str());
  std::fflush(stderr);
  std::string answer;
  std::getline(std::cin, answer);
  return answer;
}

}  // namespace

namespace {

// The virtual pipelines' part of `plan`: the staged deployment `backfill` would start, in target/run/plan/virtual/
// (or target/run/plan/ when the project has no direct part).
int PlanVirtualPart(const Project& project, Warehouse* warehouse, const PlanOptions& options,
                    const std::string& name_space, bool alone) {
  SystemClock clock;
  const VirtualActualState actual = warehouse ? ReadVirtualActualState(*warehouse, name_space) : VirtualActualState{};
  VirtualPlanOptions virtual_options;
  virtual_options.selection = options.select;
  virtual_options.full_refresh = options.full_refresh;
  if (!options.start_time.empty()) virtual_options.start_time = options.start_time;
  if (!options.deployment_id.empty()) virtual_options.deployment_id = options.deployment_id;
  virtual_options.warehouse = warehouse;
  const std::vector<PublicationRow> publications =
      warehouse ? DeploymentMetadata(*warehouse).Publications(name_space) : std::vector<PublicationRow>{};
  const VirtualPlan plan = CheckingArguments([&] {
    return PlanDeployment(project.definitions, actual, publications, ReadRecordedPlans(project.root),
                          warehouse ? warehouse->capabilities() : Capabilities{}, virtual_options, clock)
        .plan;
  });
  std::map<std::string, std::string> files = WorkflowFiles(plan.steps);
  const std::string& plan_json = files["plan.json"] = VirtualPlanJson(plan);
  std::filesystem::path directory = project.root / "target" / "run" / "plan";
  if (!alone) directory /= "virtual";
  ReplaceFolder(directory, files);
  const ActualState checked = warehouse ? ReadActualState(*plan.physical, plan.steps, *warehouse, project.root.string())
                                        : ActualState{};
  if (options.json) {
    std::printf("%s", plan_json.c_str());
  } else {
    std::printf("%s", VirtualPlanText(plan).c_str());
    std::printf("plan written to %s/ (nothing was changed in the warehouse)\n",
                std::filesystem::relative(directory, project.root).c_str());
  }
  if (!checked.blockers.empty()) throw Error(checked.blockers);  // backfill would stop here: say so, exit 1
  return 0;
}

bool HasDirectModels(const Definitions& definitions) {
  for (const Pipeline& pipeline : definitions.pipelines()) {
    if (!pipeline.virtual_mode) return true;
  }
  return false;
}

}  // namespace

int Plan(const GlobalOptions& global, const PlanOptions& options) {
  const Project& project = LoadProjectFor(global);
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadOnly);
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = OpenWarehouse(config);
  } catch (const Error& error) {
    // A DuckDB file that does not exist yet: nothing is built, and plan must not create it.
    if (error.diagnostics().front().code != "SLU-WAREHOUSE-003") throw;
  }
  const std::optional<std::string> virtual_namespace =
      CheckingArguments([&] { return VirtualNamespaceOf(project.definitions, options.select); });
  const bool virtual_only = virtual_namespace && (!options.select.empty() || !HasDirectModels(project.definitions));
  if (virtual_only) return PlanVirtualPart(project, warehouse.get(), options, *virtual_namespace, true);
  if (!options.deployment_id.empty() || options.full_refresh || !options.start_time.empty()) {
    throw UsageError(Diagnostic{"SLU-CLI-004", "--deployment-id, --full-refresh and --start-time apply to virtual pipelines", {},
                                "select a virtual pipeline with --select", {}});
  }
  const DirectPlan plan = CheckingArguments([&] {
    return PlanDirect(project.definitions, options.select, warehouse ? warehouse->capabilities() : Capabilities{},
                      RunRendering{warehouse.get(), SystemClock().TodayUtc()});
  });
  const ActualState state = warehouse
                                ? ReadActualState(project.definitions, plan, *warehouse, project.root.string())
                                : NothingBuiltState(project.definitions, plan);
  std::map<std::string, std::string> files = WorkflowFiles(plan);
  const std::string& plan_json = files["plan.json"] = PlanJson(plan, &state).dump(2) + "\n";
  const std::filesystem::path directory = project.root / "target" / "run" / "plan";
  ReplaceFolder(directory, files);
  if (options.json) {
    std::printf("%s", plan_json.c_str());
  } else {
    std::printf("%s", PlanText(plan, &state).c_str());
    std::printf("plan written to %s/ (nothing was changed in the warehouse)\n",
                std::filesystem::relative(directory, project.root).c_str());
  }
  if (!state.blockers.empty()) throw Error(state.blockers);  // build would stop here: say so, exit 1
  if (virtual_namespace && !options.json) PlanVirtualPart(project, warehouse.get(), options, *virtual_namespace, false);
  return 0;
}

int Build(const GlobalOptions& global, const BuildOptions& options) {
  if ((options.json || options.events) && !options.auto_approve) {
    throw UsageError(Diagnostic{"SLU-CLI-004", "--json and --events need --auto-approve", {},
                                "a build that prints machine-readable output cannot prompt for approval", {}});
  }
  const Project& project = LoadProjectFor(global);
  SystemClock clock;
  CancelOnSignal cancel;
  std::unique_ptr<StateStore> store = OpenStateStoreFor(project);
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.cancel = &cancel.canceled();
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  const DirectPlan plan =
      CheckingArguments([&] {
        return PlanDirect(project.definitions, options.select, warehouse->capabilities(),
                          RunRendering{warehouse.get(), clock.TodayUtc()});
      });
  if (plan.scope.empty() && VirtualNamespaceOf(project.definitions, options.select)) {
    throw Error(Diagnostic{"SLU-DEPLOY-006", "nothing to build in direct mode: the project's pipelines are virtual", {},
                           "deploy them in stages: `sluice backfill`, `sluice audit backfill`, `sluice publish`", {}});
  }
  const ActualState state = ReadActualState(project.definitions, plan, *warehouse, project.root.string());
  if (!state.blockers.empty()) throw Error(state.blockers);
  const bool quiet = options.json || options.events;
  if (!quiet) std::printf("%s", PlanText(plan, &state).c_str());

  for (const PipelineScope& pipeline : plan.pipelines) {
    if (!pipeline.confirmation) continue;
    if (std::find(options.confirm.begin(), options.confirm.end(), *pipeline.confirmation) != options.confirm.end()) {
      continue;
    }
    if (!options.auto_approve && isatty(STDIN_FILENO)) {
      if (!pipeline.protection_warning.empty()) std::fprintf(stderr, "warning: %s\n", pipeline.protection_warning.c_str());
      if (Ask("pipeline " + pipeline.name + " is protected: type " + *pipeline.confirmation + " to rebuild it: ") ==
          *pipeline.confirmation) {
        continue;
      }
      std::fprintf(stderr, "build declined: nothing was changed\n");
      return 1;
    }
    throw Error(Diagnostic{"SLU-DEPLOY-005",
                           "pipeline '" + pipeline.name + "' is protected and its confirmation token was not given" +
                               (pipeline.protection_warning.empty() ? "" : ": " + pipeline.protection_warning),
                           {}, "pass --confirm " + *pipeline.confirmation + " to rebuild it", {}});
  }
  if (!options.auto_approve) {
    if (!isatty(STDIN_FILENO)) {
      throw UsageError(Diagnostic{"SLU-CLI-005", "build needs approval and standard input is not a terminal", {},
                                  "pass --auto-approve to build without a prompt", {}});
    }
    const std::string answer = Ask("Apply this plan? [y/N] ");
    if (answer != "y" && answer != "yes") {
      std::fprintf(stderr, "build declined: nothing was changed\n");
      return 1;
    }
  }

  const std::filesystem::path directory = project.root / "target" / "run" / "build";
  ReplaceFolder(directory, WorkflowFiles(plan));
  const std::string run_id = RunExecutor::NewRunId(clock);
  cancel.Interrupting(warehouse.get());
  DirectExecutorOptions executor_options;
  executor_options.project_root = project.root.string();
  executor_options.cancel = &cancel.canceled();
  executor_options.statements_file = directory / "statements.sql";
  executor_options.selection_text = SelectionText(options.select);
  executor_options.on_progress = BuildProgressPrinter(run_id, options.events, options.json, json::object());
  if (!quiet) std::printf("build %s: %zu step(s)\n", run_id.c_str(), plan.steps.size());
  DirectExecutor executor(project.definitions, *warehouse, *store, *store, *store, clock, executor_options);
  const BuildOutcome outcome = executor.Execute(plan, run_id);
  cancel.Interrupting(nullptr);

  json steps = json::array();
  size_t failed = 0;
  for (const BuildStepOutcome& step : outcome.steps) {
    steps.push_back(OutcomeJson(step));
    failed += step.status == BuildStepStatus::kFailed ? 1 : 0;
  }
  json execution{{"run_id", run_id}, {"status", RunStatusName(outcome.status)}, {"steps", steps}};
  {
    std::ofstream out(directory / "execution.json");
    out << execution.dump(2) << "\n";
  }
  const int exit_code = outcome.status == RunStatus::kSuccess    ? 0
                        : outcome.status == RunStatus::kCanceled ? kCanceledExit
                                                                 : 1;
  if (options.json) {
    std::printf("%s\n", execution.dump(2).c_str());
  } else if (options.events) {
    std::printf("%s\n", json{{"event", "build_finished"}, {"run_id", run_id}, {"status", RunStatusName(outcome.status)}}
                            .dump()
                            .c_str());
  } else {
    std::printf("build %s %s: %zu step(s), %zu failed\n", run_id.c_str(), RunStatusName(outcome.status).c_str(),
                outcome.steps.size(), failed);
    std::printf("the statements sent: %s\n",
                std::filesystem::relative(directory / "statements.sql", project.root).c_str());
  }
  return exit_code;
}

}  // namespace sluice::cli
