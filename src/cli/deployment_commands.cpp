#include "cli/deployment_commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/build_progress.hpp"
#include "service/direct_deployment.hpp"
#include "cli/cancel_on_signal.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "core/file_system.hpp"
#include "core/sha256.hpp"
#include "deploy/actual_state.hpp"
#include "deploy/plan_explainer.hpp"
#include "deploy/publisher.hpp"
#include "deploy/readiness.hpp"
#include "deploy/virtual_executor.hpp"
#include "deploy/virtual_plan.hpp"
#include "state/open_state_store.hpp"
#include "warehouse/registry.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

constexpr int kCanceledExit = 130;

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
    std::string list;
    for (const std::string& name_space : namespaces) list += (list.empty() ? "" : ", ") + name_space;
    throw Error(Diagnostic{"SLU-DEPLOY-029",
                           "no staged deployment in " + list + " waits to be published",
                           {},
                           "run `sluice backfill` first; `sluice deployment list` shows the deployments",
                           {}});
  }
  return *staged;
}

// A publish or rollback recorded as a run in the state store: each statement it sends, with its sha256, in the run's
// events (`sluice logs RUN`), like a backfill's.
class RecordedRun {
 public:
  RecordedRun(StateStore& store, const Clock& clock, const std::string& selection) : store_(store), clock_(clock) {
    RunRecord record;
    record.run_id = run_id_ = NewRunId(clock);
    record.selection = selection;
    record.created_at = FormatUtc(clock.Now());
    record.pid = getpid();
    record.pid_start_time = ProcessStartTime(record.pid);
    store_.CreateRun(record);
    store_.MarkStarted(run_id_, FormatUtc(clock.Now()));
    store_.Append(run_id_, FormatUtc(clock.Now()), RunStartedEvent{selection, {}});
  }
  StatementSink Sink(const std::string& step) {
    return [this, step](const std::string& sql) {
      store_.Append(run_id_, FormatUtc(clock_.Now()), StatementEvent{step, Sha256Hex(sql), sql});
    };
  }
  // Runs `f`, finishing the run with its outcome.
  template <typename F>
  auto Around(F&& f) {
    try {
      auto result = f();
      Finish(RunStatus::kSuccess, "");
      return result;
    } catch (const Error& error) {
      Finish(RunStatus::kFailure, error.diagnostics().front().message);
      throw;
    }
  }

 private:
  void Finish(RunStatus status, const std::string& message) {
    store_.Append(run_id_, FormatUtc(clock_.Now()), RunFinishedEvent{RunStatusName(status), message});
    store_.FinishRun(run_id_, status, FormatUtc(clock_.Now()), message);
  }
  StateStore& store_;
  const Clock& clock_;
  std::string run_id_;
};

}  // namespace

DeploymentCommands::DeploymentCommands(CLI::App& app, CLI::App& audit, CLI::App& deployment) {
  backfill_cmd_ = app.add_subcommand(
      "backfill",
      "Start a staged deployment of the virtual pipelines: create shadow objects <relation>__<id>, replay history "
      "into them while live ingestion goes on; publishes nothing");
  backfill_cmd_->add_option("-s,--select", backfill_.select,
                            "Pipelines or models to deploy (their downstream is always included); default: every "
                            "virtual pipeline");
  backfill_cmd_->add_option("--deployment-id", backfill_.deployment_id,
                            "Use this id (YYYYMMDDTHHMMSSZ_<letters or digits>); rerunning with an unfinished "
                            "deployment's id resumes it. Default: resume the unfinished deployment of the same plan, "
                            "else a new id");
  auto* full = backfill_cmd_->add_flag("--full-refresh", backfill_.full_refresh,
                                       "Replay the selected roots' whole history (needs --select)");
  auto* start = backfill_cmd_->add_option("--start-time", backfill_.start_time,
                                          "Keep the active tables' history before this UTC time and replay from it "
                                          "(YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[Z]; needs --select)");
  full->excludes(start);
  backfill_cmd_->add_flag("--json", backfill_.json, "Print one JSON summary at the end");
  backfill_cmd_->add_flag("--events", backfill_.events, "Print one JSON object per line as the backfill goes");
  backfill_cmd_->footer(
      "Then: `sluice audit backfill` (is it ready?), `sluice publish` (switch the stable views to it).\n"
      "Exit codes: 0 the deployment is complete; 1 a step failed (rerun to resume); 2 usage; 130 canceled.");

  audit_backfill_cmd_ = audit.add_subcommand(
      "backfill",
      "Readiness of a staged deployment: staged vs active row counts, lag behind the anchor, the SQL "
      "audits on the staged relations; exits 1 when not ready");
  audit_backfill_cmd_->add_option("deployment_id", id_, "Deployment id (default: the latest staged one)");
  audit_backfill_cmd_->add_flag("--json", json_, "Print JSON");
  audit_backfill_cmd_->footer("Exit codes: 0 ready or caution; 1 not_ready (or an error); 2 usage.");

  publish_cmd_ = app.add_subcommand(
      "publish", "Switch the stable views to a staged deployment's objects and record the publication");
  publish_cmd_->add_option("deployment_id", id_, "Deployment id (default: the latest staged one)");
  publish_cmd_->add_flag("--force", force_, "Publish even when the readiness audit says not_ready");
  publish_cmd_->add_flag("--json", json_, "Print JSON");
  publish_cmd_->footer(
      "Refuses an incomplete deployment (always), one that is not ready (unless --force), and runs while another "
      "publish holds the namespace's lock.\nExit codes: 0 published (or already live); 1 refused or failed; 2 usage.");

  deployment_audit_cmd_ = deployment.add_subcommand("audit", "Readiness of a deployment (as `audit backfill ID`)");
  deployment_audit_cmd_->add_option("deployment_id", id_, "Deployment id")->required();
  deployment_audit_cmd_->add_flag("--json", json_, "Print JSON");
  promote_cmd_ = deployment.add_subcommand("promote", "Publish a deployment (as `publish ID`)");
  promote_cmd_->add_option("deployment_id", id_, "Deployment id")->required();
  promote_cmd_->add_flag("--force", force_, "Publish even when the readiness audit says not_ready");
  promote_cmd_->add_flag("--json", json_, "Print JSON");
  rollback_cmd_ = deployment.add_subcommand(
      "rollback", "Bind the stable views again as an earlier publication had them (no data is restored)");
  auto* id = rollback_cmd_->add_option("deployment_id", id_, "The deployment to roll back to");
  auto* previous =
      rollback_cmd_->add_flag("--previous", previous_, "Roll back to the publication before the current one");
  id->excludes(previous);
  rollback_cmd_->add_flag("--json", json_, "Print JSON");
}

std::optional<int> DeploymentCommands::Dispatch(const GlobalOptions& global) {
  if (backfill_cmd_->parsed()) return RunBackfill(global);
  if (audit_backfill_cmd_->parsed()) return RunAudit(global, id_, json_);
  if (deployment_audit_cmd_->parsed()) return RunAudit(global, id_, json_);
  if (publish_cmd_->parsed()) return RunPublish(global, id_, force_, json_);
  if (promote_cmd_->parsed()) return RunPublish(global, id_, force_, json_);
  if (rollback_cmd_->parsed()) return RunRollback(global);
  return std::nullopt;
}

int DeploymentCommands::RunBackfill(const GlobalOptions& global) {
  const Project& project = LoadProjectFor(global);
  const std::string name_space = NamespaceOrThrow(project, backfill_.select);
  SystemClock clock;
  CancelOnSignal cancel;
  std::unique_ptr<StateStore> store = OpenStateStoreFor(project);
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.cancel = &cancel.canceled();
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  const VirtualActualState actual = ReadVirtualActualState(*warehouse, name_space);
  VirtualPlanOptions options;
  options.selection = backfill_.select;
  options.full_refresh = backfill_.full_refresh;
  if (!backfill_.start_time.empty()) options.start_time = backfill_.start_time;
  if (!backfill_.deployment_id.empty()) options.deployment_id = backfill_.deployment_id;
  options.warehouse = warehouse.get();
  const std::vector<PublicationRow> publications = DeploymentMetadata(*warehouse).Publications(name_space);
  DeploymentPlan chosen = CheckingArguments([&] {
    return PlanDeployment(project.definitions, actual, publications, ReadRecordedPlans(project.root),
                          warehouse->capabilities(), options, clock);
  });
  const VirtualPlan& plan = chosen.plan;
  const bool quiet = backfill_.json || backfill_.events;
  const bool resumed = chosen.resumes;
  // The checks a build makes before changing anything: adopted tables and their replay columns, the server's features
  // (e.g. a managed Kafka source on a server that cannot land it).
  const ActualState checked = ReadActualState(*plan.physical, plan.steps, *warehouse, project.root.string());
  if (!checked.blockers.empty()) throw Error(checked.blockers);
  if (plan.Empty()) {
    if (backfill_.json) {
      std::printf("%s\n", json{{"deployment_id", nullptr}, {"status", "NOTHING_TO_DO"}}.dump(2).c_str());
    } else if (!backfill_.events) {
      std::printf("%s", VirtualPlanText(plan).c_str());
    }
    return 0;
  }
  if (!quiet) {
    std::printf("%s", VirtualPlanText(plan).c_str());
    if (resumed) std::printf("resuming the unfinished deployment %s (same plan)\n", plan.deployment_id.c_str());
  }
  const std::filesystem::path directory = project.root / "target" / "run" / "backfill";
  std::map<std::string, std::string> files = WorkflowFiles(plan.steps);
  files["plan.json"] = VirtualPlanJson(plan);
  ReplaceFolder(directory, files);

  const std::string run_id = NewRunId(clock);
  cancel.Interrupting(warehouse.get());
  StagedBackfillOptions backfill_options;
  backfill_options.project_root = project.root.string();
  backfill_options.cancel = &cancel.canceled();
  backfill_options.statements_file = directory / "statements.sql";
  backfill_options.selection_text = service::SelectionText(backfill_.select);
  backfill_options.tool_version = kSluiceVersion;
  backfill_options.on_progress =
      BuildProgressPrinter(run_id, backfill_.events, backfill_.json, json{{"deployment_id", plan.deployment_id}});
  if (!quiet)
    std::printf("backfill %s (run %s): %zu step(s)\n", plan.deployment_id.c_str(), run_id.c_str(),
                plan.steps.steps.size());
  const StagedBackfillOutcome outcome =
      BackfillDeployment(plan, *warehouse, *store, *store, *store, clock, run_id, backfill_options);
  cancel.Interrupting(nullptr);
  const int exit_code = outcome.status == RunStatus::kSuccess    ? 0
                        : outcome.status == RunStatus::kCanceled ? kCanceledExit
                                                                 : 1;
  json staged = json::object();
  for (const auto& [logical, rows] : outcome.staged_rows) staged[logical] = rows;
  json summary{{"deployment_id", plan.deployment_id},
               {"run_id", run_id},
               {"status", RunStatusName(outcome.status)},
               {"complete", exit_code == 0},
               {"resumed", resumed},
               {"boundary_time", outcome.boundary_time.empty() ? json() : json(outcome.boundary_time)},
               {"staged_rows", staged}};
  if (backfill_.json) {
    std::printf("%s\n", summary.dump(2).c_str());
  } else if (backfill_.events) {
    summary["event"] = "backfill_finished";
    std::printf("%s\n", summary.dump().c_str());
  } else if (exit_code == 0) {
    std::printf("deployment %s is staged (boundary %s).\nnext: sluice audit backfill %s, then sluice publish %s\n",
                plan.deployment_id.c_str(), outcome.boundary_time.c_str(), plan.deployment_id.c_str(),
                plan.deployment_id.c_str());
  } else {
    std::printf("deployment %s is incomplete (%s): rerun `sluice backfill` to resume it\n", plan.deployment_id.c_str(),
                RunStatusName(outcome.status).c_str());
  }
  return exit_code;
}

int DeploymentCommands::RunAudit(const GlobalOptions& global, const std::string& id, bool json_output) {
  const Project& project = LoadProjectFor(global);
  const std::vector<std::string> namespaces = NamespacesOrThrow(project);
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadOnly));
  const NamespacedDeployment deployment = StagedOrThrow(*warehouse, namespaces, id);
  const DeploymentReadiness& thresholds = project.config.defaults.deployment_readiness;
  const ReadinessReport report =
      AuditDeployment(project.definitions, *warehouse, deployment.name_space, deployment.deployment_id,
                      thresholds.maximum_lag_seconds, thresholds.minimum_staged_row_ratio);
  std::printf("%s", json_output ? ReadinessJson(report).c_str() : ReadinessText(report).c_str());
  return report.verdict == Readiness::kNotReady ? 1 : 0;
}

int DeploymentCommands::RunPublish(const GlobalOptions& global, const std::string& id, bool force, bool json_output) {
  const Project& project = LoadProjectFor(global);
  const std::vector<std::string> namespaces = NamespacesOrThrow(project);
  SystemClock clock;
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.timeout = std::chrono::milliseconds(0);  // a concurrent publish holding a DuckDB file: fail, not queue
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  const NamespacedDeployment target =
      id.empty() ? DeploymentToPublish(*warehouse, namespaces)
                 : NamespacedDeployment{NamespaceOfDeployment(*warehouse, namespaces, id).value_or(namespaces.front()), id};
  const std::string& name_space = target.name_space;
  PublishRequest request;
  request.name_space = name_space;
  request.deployment_id = target.deployment_id;
  request.force = force;
  const DeploymentReadiness& thresholds = project.config.defaults.deployment_readiness;
  request.maximum_lag_seconds = thresholds.maximum_lag_seconds;
  request.minimum_staged_row_ratio = thresholds.minimum_staged_row_ratio;
  std::unique_ptr<StateStore> store = OpenStateStoreFor(project);
  RecordedRun run(*store, clock, "publish " + request.deployment_id);
  request.on_statement = run.Sink("publish");
  const PublishOutcome outcome = run.Around([&] { return Publish(project.definitions, *warehouse, clock, request); });
  if (json_output) {
    std::printf("%s", PublishJson(outcome).c_str());
  } else if (outcome.already_live) {
    std::printf("deployment %s is already published%s\n", outcome.deployment_id.c_str(),
                outcome.publication_id.empty() ? "" : " (its publication is now recorded)");
  } else {
    std::printf("published %s (publication %s)%s:\n", outcome.deployment_id.c_str(), outcome.publication_id.c_str(),
                outcome.readiness ? (" readiness " + ReadinessName(outcome.readiness->verdict)).c_str() : " (forced)");
    for (const ViewBinding& binding : outcome.bindings) {
      std::printf("  %s.%s -> %s\n", name_space.c_str(), binding.logical.c_str(), binding.physical.c_str());
    }
    for (const std::string& removed : outcome.removed)
      std::printf("  dropped %s.%s\n", name_space.c_str(), removed.c_str());
  }
  return 0;
}

int DeploymentCommands::RunRollback(const GlobalOptions& global) {
  if (id_.empty() && !previous_) {
    throw UsageError(Diagnostic{"SLU-CLI-006",
                                "rollback needs a deployment id or --previous",
                                {},
                                "`sluice deployment list` shows the published deployments",
                                {}});
  }
  const Project& project = LoadProjectFor(global);
  const std::vector<std::string> namespaces = NamespacesOrThrow(project);
  SystemClock clock;
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadWrite);
  config.wait.timeout = std::chrono::milliseconds(0);
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  const std::string name_space =
      (previous_ ? LastPublishedNamespace(*warehouse, namespaces) : NamespaceOfDeployment(*warehouse, namespaces, id_))
          .value_or(namespaces.front());
  PublishRequest request;
  request.name_space = name_space;
  request.deployment_id = id_;
  request.previous = previous_;
  std::unique_ptr<StateStore> store = OpenStateStoreFor(project);
  RecordedRun run(*store, clock, "rollback " + (previous_ ? std::string("--previous") : id_));
  request.on_statement = run.Sink("rollback");
  const PublishOutcome outcome = run.Around([&] { return Rollback(*warehouse, clock, request); });
  if (json_) {
    std::printf("%s", PublishJson(outcome).c_str());
  } else {
    std::printf("rolled back to %s (publication %s; was %s):\n", outcome.deployment_id.c_str(),
                outcome.publication_id.empty() ? "already live" : outcome.publication_id.c_str(),
                outcome.previous_deployment_id.c_str());
    for (const ViewBinding& binding : outcome.bindings) {
      std::printf("  %s.%s -> %s\n", name_space.c_str(), binding.logical.c_str(), binding.physical.c_str());
    }
  }
  return 0;
}

}  // namespace sluice::cli
