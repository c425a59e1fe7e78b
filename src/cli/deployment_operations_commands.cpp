// The deployment operations (service/deployment_operations.hpp): flags, then tables and lines, or the service's
// JSON document.
#include "cli/deployment_operations_commands.hpp"

#include <cstdio>

#include "cli/text_output.hpp"
#include "service/deployment_operations.hpp"

namespace sluice::cli {

namespace {

int List(const GlobalOptions& global, bool as_json) {
  const std::vector<DeploymentInventory> inventories = service::ListDeployments(global);
  if (as_json) {
    PrintJson(service::ToJson(inventories));
    return 0;
  }
  for (const DeploymentInventory& inventory : inventories) {
    if (inventory.deployments.empty()) {
      std::printf("no deployments in %s\n", inventory.name_space.c_str());
    } else if (inventories.size() > 1) {
      std::printf("deployments in %s:\n", inventory.name_space.c_str());
    }
    for (const DeploymentSummary& summary : inventory.deployments) {
      std::printf("%-28s %-17s created %s  published %s  %zu object(s), %zu relation(s)\n",
                  summary.deployment_id.c_str(), InventoryStateName(summary.state).c_str(), summary.created_at.c_str(),
                  summary.last_published_at.value_or("never").c_str(), summary.objects.size(),
                  summary.relations.size());
    }
  }
  return 0;
}

int Show(const GlobalOptions& global, const std::string& id, bool as_json) {
  const service::DeploymentDetail detail = service::ShowDeployment(global, id);
  if (as_json) {
    PrintJson(service::ToJson(detail));
    return 0;
  }
  const DeploymentSummary& summary = detail.summary;
  std::printf("deployment %s: %s (recorded: %s)\n  created %s, last published %s\n", id.c_str(),
              InventoryStateName(summary.state).c_str(), summary.recorded_state.value_or("nothing").c_str(),
              summary.created_at.c_str(), summary.last_published_at.value_or("never").c_str());
  for (const DeploymentObject& object : summary.objects) {
    std::printf("  %-8s %-6s %s -> %s%s\n", object.action.c_str(), object.object_type.c_str(), object.logical.c_str(),
                object.physical.c_str(), object.present ? "" : "  (missing)");
  }
  for (const CatalogObject& object : summary.relations) {
    std::printf("  relation %s (%s)\n", object.name.c_str(), CatalogObjectTypeName(object.type).c_str());
  }
  for (const BoundaryRow& row : detail.boundaries) std::printf("  boundary %s\n", service::ToJson(row).dump().c_str());
  for (const PublicationRow& row : detail.publications) {
    std::printf("  publication %s\n", service::ToJson(row).dump().c_str());
  }
  return 0;
}

int Diff(const GlobalOptions& global, const std::string& sides, bool as_json) {
  const DeploymentDiff diff = service::DiffDeployments(global, sides);
  if (as_json) {
    PrintJson(service::ToJson(diff));
    return 0;
  }
  std::printf("%s -> %s\n", diff.from.c_str(), diff.to.c_str());
  for (const RelationDiff& item : diff.relations) {
    auto rows = [](const std::optional<RelationSide>& side) {
      return side && side->rows ? std::to_string(*side->rows) : std::string("-");
    };
    std::printf("  %-17s %-40s rows %s -> %s\n", RelationChangeName(item.change).c_str(), item.logical.c_str(),
                rows(item.from).c_str(), rows(item.to).c_str());
  }
  return 0;
}

int RunRepairActiveView(const GlobalOptions& global, const std::string& table, const std::string& id) {
  const service::RepairResult repaired = service::RepairActiveView(global, table, id);
  std::printf("%s.%s now reads %s.%s (no metadata written)\n", repaired.name_space.c_str(),
              repaired.binding.logical.c_str(), repaired.name_space.c_str(), repaired.binding.physical.c_str());
  return 0;
}

int RunReconcile(const GlobalOptions& global, const std::vector<std::string>& select, bool apply, bool as_json) {
  const service::ReconcileResult result = service::Reconcile(global, select, apply);
  if (as_json) {
    PrintJson(service::ToJson(result));
    return 0;
  }
  for (const ReconcileReport& report : result.reports) {
    if (result.reports.size() > 1) std::printf("%s:\n", report.name_space.c_str());
    for (const ReconcileItem& item : report.items) {
      std::printf("  %-13s %-40s %s\n", ReconcileStatusName(item.status).c_str(), item.logical.c_str(),
                  item.reason.c_str());
    }
    if (report.rows.empty()) {
      std::printf("nothing to reconcile\n");
    } else if (report.applied) {
      std::printf("recorded %zu table(s) as %s: the next plan keeps them\n", report.rows.size(),
                  report.reconcile_id.c_str());
    } else {
      std::printf("dry run: %zu table(s) would be recorded; run again with --apply\n", report.rows.size());
    }
  }
  return 0;
}

int RunJanitor(const GlobalOptions& global, const JanitorOptions& options, bool apply, bool as_json) {
  const std::vector<service::JanitorReport> reports = service::Janitor(global, options, apply);
  if (as_json) {
    PrintJson(service::ToJson(reports));
    return 0;
  }
  for (const service::JanitorReport& report : reports) {
    if (reports.size() > 1) std::printf("%s:\n", report.plan.name_space.c_str());
    for (const JanitorDeployment& item : report.plan.deployments) {
      const std::string why = Join(item.reasons, ", ");
      std::printf("  %-6s %-28s %-17s %s\n", item.kept ? "keep" : "delete", item.deployment_id.c_str(),
                  InventoryStateName(item.state).c_str(), why.c_str());
      for (const std::string& name : item.protected_objects) {
        std::printf("         keeps %s: a kept or active deployment uses it\n", name.c_str());
      }
    }
    for (const JanitorDrop& drop : report.plan.drops) {
      std::printf("  %s %s%s%s\n", apply ? (drop.dropped ? "dropped" : "skipped") : "would drop",
                  drop.statement.c_str(),
                  drop.obsolete_binding ? "  (the stable view of a model no longer in the project)" : "",
                  drop.skipped.empty() ? "" : ("  (" + drop.skipped + ")").c_str());
    }
  }
  if (!apply) std::printf("dry run: nothing was dropped; run again with --apply\n");
  return 0;
}

}  // namespace

DeploymentOperationsCommands::DeploymentOperationsCommands(CLI::App& app, CLI::App& deployment) {
  AddInventory(deployment);
  AddDoctorAndRepair(app);
  AddReconcileAndJanitor(app);
}

void DeploymentOperationsCommands::AddInventory(CLI::App& deployment) {
  list_ = deployment.add_subcommand(
      "list",
      "Every deployment of the databases the virtual pipelines live in, from their metadata and catalogs, newest "
      "first, with its "
      "state: active, staged, superseded, incomplete, metadata_missing or physical_missing");
  list_->add_flag("--json", json_, "Print JSON");
  show_ = deployment.add_subcommand(
      "show",
      "One deployment: its state, objects (logical -> physical, action), relations, replay boundaries and "
      "publications");
  show_->add_option("id", deployment_id_, "The deployment id, e.g. 20260801T000000Z_a1b2c3")->required();
  show_->add_flag("--json", json_, "Print JSON");
  diff_ = deployment.add_subcommand(
      "diff",
      "Per logical relation, compare columns and row counts of two deployments: added, removed, changed, "
      "unchanged or physical_missing");
  diff_
      ->add_option("sides", diff_sides_,
                   "ID (the active bindings against ID: what publishing it would change) or FROM:TO; either side "
                   "may be `active`")
      ->required();
  diff_->add_flag("--json", json_, "Print JSON");
  for (CLI::App* command : {list_, show_, diff_}) command->footer("Exit codes: 0 ok; 1 error; 2 usage.");
}

void DeploymentOperationsCommands::AddDoctorAndRepair(CLI::App& app) {
  doctor_ = app.add_subcommand(
      "doctor",
      "Print JSON: per logical name (each virtual model, each bound view) its state_kind "
      "(active_view_present, greenfield, logical_view_missing, invalid_active_view), the active deployment "
      "and the deployments holding a physical relation for it");
  doctor_->footer("Exit codes: 0 the report was printed (whatever it says); 1 error.");

  CLI::App* repair = app.add_subcommand("repair", "Repair what `doctor` reports");
  repair->require_subcommand(1);
  repair_active_view_ =
      repair->add_subcommand("active-view",
                             "Point the stable view --table at <table>__<deployment id> (which must exist); writes no "
                             "metadata");
  repair_active_view_->add_option("--table", table_, "The logical name, e.g. tbl__orders")->required();
  repair_active_view_->add_option("--deployment-id", deployment_id_, "The deployment whose relation it should read")
      ->required();
  repair_active_view_->footer("Exit codes: 0 rebound; 1 the relation does not exist, or the name is a table; 2 usage.");
}

void DeploymentOperationsCommands::AddReconcileAndJanitor(CLI::App& app) {
  reconcile_ = app.add_subcommand(
      "reconcile",
      "Accept live tables that already match the project as its baseline, so the next plan keeps them "
      "(no_op) instead of rebuilding: a dry run unless --apply. Views are rejected");
  reconcile_->add_option("-s,--select", select_, "Pipelines or models (NAME, pipeline:NAME, model:NAME); repeatable");
  reconcile_->add_flag("--apply", apply_, "Record the reconcile rows (metadata only; no table changes)");
  reconcile_->add_flag("--json", json_, "Print JSON");
  reconcile_->footer("Exit codes: 0 ok (mismatches are reported, not errors); 1 error; 2 usage.");

  janitor_ = app.add_subcommand(
      "janitor",
      "Drop the physical relations of deployments that are not active, not among the latest rollback "
      "points and not recent: a dry run unless --apply. Metadata rows are never deleted");
  janitor_
      ->add_option("--retention-days", retention_days_,
                   "Keep deployments created or published within this many days (default 7)")
      ->check(CLI::Range(0, 100000));
  janitor_
      ->add_option("--minimum-rollback-deployments", minimum_rollback_deployments_,
                   "Keep this many of the latest previously published deployments (default 2)")
      ->check(CLI::Range(0, 100000));
  janitor_->add_flag("--apply", apply_, "Drop (materialized views, then views, then tables)");
  janitor_->add_flag("--json", json_, "Print JSON");
  janitor_->footer("Exit codes: 0 ok; 1 error; 2 usage.");
}

std::optional<int> DeploymentOperationsCommands::Dispatch(const GlobalOptions& global) {
  if (list_->parsed()) return List(global, json_);
  if (show_->parsed()) return Show(global, deployment_id_, json_);
  if (diff_->parsed()) return Diff(global, diff_sides_, json_);
  if (doctor_->parsed()) {
    PrintJson(service::Doctor(global));
    return 0;
  }
  if (repair_active_view_->parsed()) return RunRepairActiveView(global, table_, deployment_id_);
  if (reconcile_->parsed()) return RunReconcile(global, select_, apply_, json_);
  if (janitor_->parsed()) {
    return RunJanitor(global, JanitorOptions{retention_days_, minimum_rollback_deployments_}, apply_, json_);
  }
  return std::nullopt;
}

}  // namespace sluice::cli
