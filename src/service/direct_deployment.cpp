#include "service/direct_deployment.hpp"

#include <algorithm>
#include <fstream>

#include "core/clock.hpp"
#include "core/file_system.hpp"
#include "core/text.hpp"
#include "deploy/plan_explainer.hpp"
#include "deploy/virtual_executor.hpp"
#include "engine/run_executor.hpp"
#include "service/request_error.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

bool HasDirectModels(const Definitions& definitions) {
  for (const Pipeline& pipeline : definitions.pipelines()) {
    if (!pipeline.virtual_mode) return true;
  }
  return false;
}

// The virtual pipelines' part of `plan`: the staged deployment `backfill` would start, in target/run/plan/virtual/
// (or target/run/plan/ when the project has no direct part).
VirtualPlanView PlanVirtualPart(const Project& project, Warehouse* warehouse, const PlanCommand& command,
                                const std::string& name_space, bool alone) {
  SystemClock clock;
  const VirtualActualState actual = warehouse ? ReadVirtualActualState(*warehouse, name_space) : VirtualActualState{};
  VirtualPlanOptions options;
  options.selection = command.select;
  options.full_refresh = command.full_refresh;
  if (!command.start_time.empty()) options.start_time = command.start_time;
  if (!command.deployment_id.empty()) options.deployment_id = command.deployment_id;
  options.warehouse = warehouse;
  const std::vector<PublicationRow> publications =
      warehouse ? DeploymentMetadata(*warehouse).Publications(name_space) : std::vector<PublicationRow>{};
  VirtualPlanView view{CheckingArguments([&] {
                         return PlanDeployment(project.definitions, actual, publications,
                                               ReadRecordedPlans(project.root),
                                               warehouse ? warehouse->capabilities() : Capabilities{}, options, clock)
                             .plan;
                       }),
                       {},
                       "",
                       project.root / "target" / "run" / "plan"};
  std::map<std::string, std::string> files = WorkflowFiles(view.plan.steps);
  view.plan_json = files["plan.json"] = VirtualPlanJson(view.plan);
  if (!alone) view.directory /= "virtual";
  ReplaceFolder(view.directory, files);
  if (warehouse) {
    view.blockers = ReadActualState(*view.plan.physical, view.plan.steps, *warehouse).blockers;
  }
  return view;
}

}  // namespace

PlanReport PlanProject(const WorkspaceOptions& workspace, const PlanCommand& command, bool with_virtual) {
  const Project& project = LoadProjectFor(workspace);
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadOnly));
  } catch (const Error& error) {
    // A DuckDB file that does not exist yet: nothing is built, and plan must not create it.
    if (error.diagnostics().front().code != "SLU-WAREHOUSE-003") throw;
  }
  PlanReport report;
  report.project_root = project.root;
  const std::optional<std::string> virtual_namespace =
      CheckingArguments([&] { return VirtualNamespaceOf(project.definitions, command.select); });
  const bool virtual_only = virtual_namespace && (!command.select.empty() || !HasDirectModels(project.definitions));
  if (virtual_only) {
    report.virtual_part = PlanVirtualPart(project, warehouse.get(), command, *virtual_namespace, true);
    return report;
  }
  if (!command.deployment_id.empty() || command.full_refresh || !command.start_time.empty()) {
    throw RequestError(Diagnostic{"SLU-CLI-004",
                                  "--deployment-id, --full-refresh and --start-time apply to virtual pipelines",
                                  {},
                                  "select a virtual pipeline with --select",
                                  {}});
  }
  DirectPlan plan = CheckingArguments([&] {
    return PlanDirect(project.definitions, command.select, warehouse ? warehouse->capabilities() : Capabilities{},
                      RunRendering{warehouse.get(), SystemClock().TodayUtc()});
  });
  ActualState state =
      warehouse ? ReadActualState(project.definitions, plan, *warehouse) : NothingBuiltState(project.definitions, plan);
  std::map<std::string, std::string> files = WorkflowFiles(plan);
  const std::string plan_json = files["plan.json"] = PlanJson(plan, &state).dump(2) + "\n";
  const std::filesystem::path directory = project.root / "target" / "run" / "plan";
  ReplaceFolder(directory, files);
  report.direct = DirectPlanView{std::move(plan), std::move(state), plan_json, directory};
  // The virtual part comes after the direct part's blockers are known: a blocked direct plan stops the command.
  if (virtual_namespace && with_virtual && report.direct->state.blockers.empty()) {
    report.virtual_part = PlanVirtualPart(project, warehouse.get(), command, *virtual_namespace, false);
  }
  return report;
}

std::unique_ptr<DirectBuild> DirectBuild::Prepare(const WorkspaceOptions& workspace,
                                                  const std::vector<std::string>& select, Cancellation& cancellation) {
  std::unique_ptr<DirectBuild> build(new DirectBuild);
  build->project_ = &LoadProjectFor(workspace);
  build->select_ = select;
  build->cancellation_ = &cancellation;
  const Project& project = *build->project_;
  cancellation.Arm();
  build->store_ = OpenStateStoreFor(project);
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.cancel = &cancellation.canceled();
  build->warehouse_ = OpenWarehouse(config);
  build->plan_ = CheckingArguments([&] {
    return PlanDirect(project.definitions, select, build->warehouse_->capabilities(),
                      RunRendering{build->warehouse_.get(), SystemClock().TodayUtc()});
  });
  if (build->plan_.scope.empty() && VirtualNamespaceOf(project.definitions, select)) {
    throw Error(Diagnostic{"SLU-DEPLOY-006",
                           "nothing to build in direct mode: the project's pipelines are virtual",
                           {},
                           "deploy them in stages: `sluice backfill`, `sluice audit backfill`, `sluice publish`",
                           {}});
  }
  build->state_ = ReadActualState(project.definitions, build->plan_, *build->warehouse_);
  if (!build->state_.blockers.empty()) throw Error(build->state_.blockers);
  return build;
}

DirectBuild::~DirectBuild() = default;

std::vector<const PipelineScope*> DirectBuild::Unconfirmed(const std::vector<std::string>& tokens) const {
  std::vector<const PipelineScope*> unconfirmed;
  for (const PipelineScope& pipeline : plan_.pipelines) {
    if (pipeline.confirmation && std::find(tokens.begin(), tokens.end(), *pipeline.confirmation) == tokens.end()) {
      unconfirmed.push_back(&pipeline);
    }
  }
  return unconfirmed;
}

DirectBuild::Result DirectBuild::Execute(const Observer& observer) {
  SystemClock clock;
  const std::filesystem::path directory = project_->root / "target" / "run" / "build";
  ReplaceFolder(directory, WorkflowFiles(plan_));
  Result result;
  result.run_id = RunExecutor::NewRunId(clock);
  result.statements_file = directory / "statements.sql";
  result.project_root = project_->root;
  cancellation_->Interrupting(warehouse_.get());
  DirectExecutorOptions options;
  options.project_root = project_->root.string();
  options.cancel = &cancellation_->canceled();
  options.statements_file = result.statements_file;
  options.selection_text = SelectionText(select_);
  options.on_progress = observer.on_progress;
  if (observer.on_started) observer.on_started(result.run_id, plan_.steps.size());
  DirectExecutor executor(project_->definitions, *warehouse_, *store_, *store_, *store_, clock, options);
  result.outcome = executor.Execute(plan_, result.run_id);
  cancellation_->Interrupting(nullptr);
  json steps = json::array();
  for (const BuildStepOutcome& step : result.outcome.steps) steps.push_back(ToJson(step));
  result.execution =
      json{{"run_id", result.run_id}, {"status", RunStatusName(result.outcome.status)}, {"steps", steps}};
  std::ofstream(directory / "execution.json") << result.execution.dump(2) << "\n";
  return result;
}

std::string SelectionText(const std::vector<std::string>& select) { return select.empty() ? "*" : Join(select, " "); }

json ToJson(const BuildStepOutcome& step) {
  json out{{"step", step.step},
           {"phase", DeployPhaseName(step.phase)},
           {"status", BuildStepStatusName(step.status)},
           {"duration_ms", step.duration_ms}};
  if (step.rows >= 0) out["rows"] = step.rows;
  if (step.attempts > 0) out["attempts"] = step.attempts;
  if (!step.boundary.empty()) out["boundary"] = step.boundary;
  if (!step.note.empty()) out["note"] = step.note;
  json diagnostics = json::array();
  for (const Diagnostic& d : step.diagnostics) diagnostics.push_back(DiagnosticJson(d));
  if (!diagnostics.empty()) out["diagnostics"] = diagnostics;
  return out;
}

}  // namespace sluice::service
