// The staged-deployment commands (service/staged_deployment.hpp): flags, the plan and outcomes as text or JSON.
#include "cli/deployment_commands.hpp"

#include <cstdio>

#include "cli/build_progress.hpp"
#include "cli/cancel_on_signal.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "service/staged_deployment.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

void ShowBindings(const std::string& name_space, const PublishOutcome& outcome) {
  for (const ViewBinding& binding : outcome.bindings) {
    std::printf("  %s.%s -> %s\n", name_space.c_str(), binding.logical.c_str(), binding.physical.c_str());
  }
}

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
  CancelOnSignal cancel(CancelOnSignal::Arming::kWhenAsked);
  std::unique_ptr<service::StagedBackfill> backfill = service::StagedBackfill::Prepare(
      global, {backfill_.select, backfill_.deployment_id, backfill_.full_refresh, backfill_.start_time}, cancel);
  const VirtualPlan& plan = backfill->plan();
  const bool quiet = backfill_.json || backfill_.events;
  if (plan.Empty()) {
    if (backfill_.json) {
      PrintJson(json{{"deployment_id", nullptr}, {"status", "NOTHING_TO_DO"}});
    } else if (!backfill_.events) {
      std::printf("%s", VirtualPlanText(plan).c_str());
    }
    return 0;
  }
  if (!quiet) {
    std::printf("%s", VirtualPlanText(plan).c_str());
    if (backfill->resumes())
      std::printf("resuming the unfinished deployment %s (same plan)\n", plan.deployment_id.c_str());
  }
  std::function<void(const BuildProgress&)> printer;
  service::StagedBackfill::Observer observer;
  observer.on_started = [&](const std::string& run_id, size_t steps) {
    printer =
        BuildProgressPrinter(run_id, backfill_.events, backfill_.json, json{{"deployment_id", plan.deployment_id}});
    if (!quiet) std::printf("backfill %s (run %s): %zu step(s)\n", plan.deployment_id.c_str(), run_id.c_str(), steps);
  };
  observer.on_progress = [&](const BuildProgress& progress) { printer(progress); };
  const service::StagedBackfill::Result result = backfill->Execute(observer);
  const RunStatus status = result.outcome.status;
  const int exit_code = ExitCodeFor(status);
  json summary = service::ToJson(*backfill, result);
  if (backfill_.json) {
    PrintJson(summary);
  } else if (backfill_.events) {
    summary["event"] = "backfill_finished";
    std::printf("%s\n", summary.dump().c_str());
  } else if (exit_code == 0) {
    std::printf("deployment %s is staged (boundary %s).\nnext: sluice audit backfill %s, then sluice publish %s\n",
                plan.deployment_id.c_str(), result.outcome.boundary_time.c_str(), plan.deployment_id.c_str(),
                plan.deployment_id.c_str());
  } else {
    std::printf("deployment %s is incomplete (%s): rerun `sluice backfill` to resume it\n", plan.deployment_id.c_str(),
                RunStatusName(status).c_str());
  }
  return exit_code;
}

int DeploymentCommands::RunAudit(const GlobalOptions& global, const std::string& id, bool json_output) {
  const ReadinessReport report = service::AuditStagedDeployment(global, id);
  std::printf("%s", json_output ? ReadinessJson(report).c_str() : ReadinessText(report).c_str());
  return report.verdict == Readiness::kNotReady ? 1 : 0;
}

int DeploymentCommands::RunPublish(const GlobalOptions& global, const std::string& id, bool force, bool json_output) {
  const service::PublishResult published = service::PublishDeployment(global, id, force);
  const PublishOutcome& outcome = published.outcome;
  if (json_output) {
    std::printf("%s", PublishJson(outcome).c_str());
  } else if (outcome.already_live) {
    std::printf("deployment %s is already published%s\n", outcome.deployment_id.c_str(),
                outcome.publication_id.empty() ? "" : " (its publication is now recorded)");
  } else {
    std::printf("published %s (publication %s)%s:\n", outcome.deployment_id.c_str(), outcome.publication_id.c_str(),
                outcome.readiness ? (" readiness " + ReadinessName(outcome.readiness->verdict)).c_str() : " (forced)");
    ShowBindings(published.name_space, outcome);
    for (const std::string& removed : outcome.removed) {
      std::printf("  dropped %s.%s\n", published.name_space.c_str(), removed.c_str());
    }
  }
  return 0;
}

int DeploymentCommands::RunRollback(const GlobalOptions& global) {
  const service::PublishResult rolled_back = service::RollbackDeployment(global, id_, previous_);
  const PublishOutcome& outcome = rolled_back.outcome;
  if (json_) {
    std::printf("%s", PublishJson(outcome).c_str());
  } else {
    std::printf("rolled back to %s (publication %s; was %s):\n", outcome.deployment_id.c_str(),
                outcome.publication_id.empty() ? "already live" : outcome.publication_id.c_str(),
                outcome.previous_deployment_id.c_str());
    ShowBindings(rolled_back.name_space, outcome);
  }
  return 0;
}

}  // namespace sluice::cli
