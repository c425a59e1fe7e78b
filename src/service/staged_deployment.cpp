#include "service/staged_deployment.hpp"

#include "core/file_system.hpp"
#include "core/text.hpp"
#include "deploy/actual_state.hpp"
#include "deploy/plan_explainer.hpp"
#include "service/direct_deployment.hpp"
#include "service/recorded_run.hpp"
#include "service/request_error.hpp"
#include "service/version.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

std::string NamespaceOrThrow(const Project& project, const std::vector<std::string>& select) {
  std::optional<std::string> name_space =
      CheckingArguments([&] { return VirtualNamespaceOf(project.definitions, select); });
  if (!name_space) {
    throw Error(Diagnostic{
        "SLU-DEPLOY-020",
        select.empty() ? "the project has no virtual pipeline" : "the selection holds no model of a virtual pipeline",
        {},
        "staged deployments deploy pipelines whose pipeline.toml sets mode = \"virtual\"",
        {}});
  }
  return *name_space;
}

// The databases the project's virtual models live in.
std::vector<std::string> NamespacesOrThrow(const Project& project) {
  NamespaceOrThrow(project, {});
  return VirtualNamespaces(project.definitions);
}

// The deployment `id` and the database holding it; without an id, the latest staged deployment of any of them.
NamespacedDeployment StagedOrThrow(Warehouse& warehouse, const std::vector<std::string>& namespaces,
                                   const std::string& id) {
  if (!id.empty()) return {NamespaceOfDeployment(warehouse, namespaces, id).value_or(namespaces.front()), id};
  std::optional<NamespacedDeployment> staged;
  for (const std::string& name_space : namespaces) {
    std::optional<std::string> latest = LatestStagedDeployment(warehouse, name_space);
    if (latest && (!staged || *latest > staged->deployment_id)) staged = NamespacedDeployment{name_space, *latest};
  }
  if (!staged) {
    throw Error(Diagnostic{"SLU-DEPLOY-029",
                           "no staged deployment in " + Join(namespaces, ", ") + " waits to be published",
                           {},
                           "run `sluice backfill` first; `sluice deployment list` shows the deployments",
                           {}});
  }
  return *staged;
}

// The warehouse for a publish or rollback: read-write, failing at once while another process holds a DuckDB file (a
// concurrent publish), not queueing behind it.
std::unique_ptr<Warehouse> OpenForSwitch(const Project& project) {
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.timeout = std::chrono::milliseconds(0);
  return OpenWarehouse(config);
}

}  // namespace

std::unique_ptr<StagedBackfill> StagedBackfill::Prepare(const WorkspaceOptions& workspace,
                                                        const StagedBackfillCommand& command,
                                                        Cancellation& cancellation) {
  std::unique_ptr<StagedBackfill> backfill(new StagedBackfill);
  backfill->project_ = &LoadProjectFor(workspace);
  backfill->command_ = command;
  backfill->cancellation_ = &cancellation;
  const Project& project = *backfill->project_;
  const std::string name_space = NamespaceOrThrow(project, command.select);
  SystemClock clock;
  cancellation.Arm();
  backfill->store_ = OpenStateStoreFor(project);
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.cancel = &cancellation.canceled();
  backfill->warehouse_ = OpenWarehouse(config);
  Warehouse& warehouse = *backfill->warehouse_;
  const VirtualActualState actual = ReadVirtualActualState(warehouse, name_space);
  VirtualPlanOptions options;
  options.selection = command.select;
  options.full_refresh = command.full_refresh;
  if (!command.start_time.empty()) options.start_time = command.start_time;
  if (!command.deployment_id.empty()) options.deployment_id = command.deployment_id;
  options.warehouse = &warehouse;
  const std::vector<PublicationRow> publications = DeploymentMetadata(warehouse).Publications(name_space);
  backfill->chosen_ = CheckingArguments([&] {
    return PlanDeployment(project.definitions, actual, publications, ReadRecordedPlans(project.root),
                          warehouse.capabilities(), options, clock);
  });
  // The checks a build makes before changing anything: adopted tables and their replay columns, the server's features
  // (e.g. a managed Kafka source on a server that cannot land it).
  const VirtualPlan& plan = backfill->chosen_.plan;
  const ActualState checked = ReadActualState(*plan.physical, plan.steps, warehouse);
  if (!checked.blockers.empty()) throw Error(checked.blockers);
  return backfill;
}

StagedBackfill::~StagedBackfill() = default;

StagedBackfill::Result StagedBackfill::Execute(const Observer& observer) {
  SystemClock clock;
  const VirtualPlan& plan = chosen_.plan;
  const std::filesystem::path directory = project_->root / "target" / "run" / "backfill";
  std::map<std::string, std::string> files = WorkflowFiles(plan.steps);
  files["plan.json"] = VirtualPlanJson(plan);
  ReplaceFolder(directory, files);
  Result result;
  result.run_id = NewRunId(clock);
  cancellation_->Interrupting(warehouse_.get());
  StagedBackfillOptions options;
  options.project_root = project_->root.string();
  options.cancel = &cancellation_->canceled();
  options.statements_file = directory / "statements.sql";
  options.selection_text = SelectionText(command_.select);
  options.tool_version = kSluiceVersion;
  options.on_progress = observer.on_progress;
  if (observer.on_started) observer.on_started(result.run_id, plan.steps.steps.size());
  result.outcome = BackfillDeployment(plan, *warehouse_, *store_, *store_, *store_, clock, result.run_id, options);
  cancellation_->Interrupting(nullptr);
  return result;
}

json ToJson(const StagedBackfill& backfill, const StagedBackfill::Result& result) {
  json staged = json::object();
  for (const auto& [logical, rows] : result.outcome.staged_rows) staged[logical] = rows;
  return json{{"deployment_id", backfill.plan().deployment_id},
              {"run_id", result.run_id},
              {"status", RunStatusName(result.outcome.status)},
              {"complete", result.complete()},
              {"resumed", backfill.resumes()},
              {"boundary_time", result.outcome.boundary_time.empty() ? json() : json(result.outcome.boundary_time)},
              {"staged_rows", staged}};
}

ReadinessReport AuditStagedDeployment(const WorkspaceOptions& workspace, const std::string& id) {
  const Project& project = LoadProjectFor(workspace);
  const std::vector<std::string> namespaces = NamespacesOrThrow(project);
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadOnly));
  const NamespacedDeployment deployment = StagedOrThrow(*warehouse, namespaces, id);
  const DeploymentReadiness& thresholds = project.config.defaults.deployment_readiness;
  return AuditDeployment(project.definitions, *warehouse, deployment.name_space, deployment.deployment_id,
                         thresholds.maximum_lag_seconds, thresholds.minimum_staged_row_ratio);
}

PublishResult PublishDeployment(const WorkspaceOptions& workspace, const std::string& id, bool force) {
  const Project& project = LoadProjectFor(workspace);
  const std::vector<std::string> namespaces = NamespacesOrThrow(project);
  SystemClock clock;
  std::unique_ptr<Warehouse> warehouse = OpenForSwitch(project);
  const NamespacedDeployment target =
      id.empty()
          ? DeploymentToPublish(*warehouse, namespaces)
          : NamespacedDeployment{NamespaceOfDeployment(*warehouse, namespaces, id).value_or(namespaces.front()), id};
  PublishRequest request;
  request.name_space = target.name_space;
  request.deployment_id = target.deployment_id;
  request.force = force;
  const DeploymentReadiness& thresholds = project.config.defaults.deployment_readiness;
  request.maximum_lag_seconds = thresholds.maximum_lag_seconds;
  request.minimum_staged_row_ratio = thresholds.minimum_staged_row_ratio;
  std::unique_ptr<StateStore> store = OpenStateStoreFor(project);
  RecordedRun run(*store, clock, "publish " + request.deployment_id);
  request.on_statement = run.Sink("publish");
  return {target.name_space, run.Around([&] { return Publish(project.definitions, *warehouse, clock, request); })};
}

PublishResult RollbackDeployment(const WorkspaceOptions& workspace, const std::string& id, bool previous) {
  if (id.empty() && !previous) {
    throw RequestError(Diagnostic{"SLU-CLI-006",
                                  "rollback needs a deployment id or --previous",
                                  {},
                                  "`sluice deployment list` shows the published deployments",
                                  {}});
  }
  const Project& project = LoadProjectFor(workspace);
  const std::vector<std::string> namespaces = NamespacesOrThrow(project);
  SystemClock clock;
  std::unique_ptr<Warehouse> warehouse = OpenForSwitch(project);
  const std::string name_space =
      (previous ? LastPublishedNamespace(*warehouse, namespaces) : NamespaceOfDeployment(*warehouse, namespaces, id))
          .value_or(namespaces.front());
  PublishRequest request;
  request.name_space = name_space;
  request.deployment_id = id;
  request.previous = previous;
  std::unique_ptr<StateStore> store = OpenStateStoreFor(project);
  RecordedRun run(*store, clock, "rollback " + (previous ? std::string("--previous") : id));
  request.on_statement = run.Sink("rollback");
  return {name_space, run.Around([&] { return Rollback(*warehouse, clock, request); })};
}

}  // namespace sluice::service
