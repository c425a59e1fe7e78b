#include "cli/deployment_operations_commands.hpp"

#include <cstdio>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "deploy/deployment_operations.hpp"
#include "deploy/virtual_plan.hpp"

namespace sluice::cli {

namespace {

using json = nlohmann::ordered_json;

// Calls `f`; an Error it throws is about what was typed (an argument's form), so it becomes a UsageError (exit 2).
template <typename F>
auto AsUsage(F&& f) {
  try {
    return f();
  } catch (const Error& error) {
    throw UsageError(error.diagnostics());
  }
}

void Print(const json& value) { std::printf("%s\n", value.dump(2).c_str()); }

json OrNull(const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); }

// The project (gated on virtual mode before anything connects), the databases its virtual models live in (the
// target's, or a pipeline's own) and its warehouse.
struct Context {
  const Project& project;
  std::vector<std::string> name_spaces;
  std::unique_ptr<Warehouse> warehouse;

  // The database whose inventory knows `deployment_id`, else the first.
  std::string NamespaceOf(const std::string& deployment_id) {
    for (const std::string& name_space : name_spaces) {
      if (ReadDeploymentInventory(*warehouse, name_space).Find(deployment_id) != nullptr) return name_space;
    }
    return name_spaces.front();
  }
};

Context Open(const GlobalOptions& global, const std::string& command, AccessMode mode) {
  const Project& project = LoadProjectFor(global);
  RequireVirtualProject(project.definitions, command);
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(WarehouseConfigFor(project, mode));
  return Context{project, VirtualNamespaces(project.definitions), std::move(warehouse)};
}

// One JSON document per database, printed as it is when there is one database, else as {"databases": [...]}.
void PrintPerDatabase(const std::vector<json>& documents) {
  if (documents.size() == 1) {
    Print(documents.front());
    return;
  }
  json list = json::array();
  for (const json& document : documents) list.push_back(document);
  Print(json{{"databases", list}});
}

json RelationJson(const CatalogObject& object) {
  json out{{"name", object.name}, {"type", CatalogObjectTypeName(object.type)}};
  if (object.target) out["target"] = *object.target;
  return out;
}

json SummaryJson(const DeploymentSummary& summary) {
  json objects = json::array();
  for (const DeploymentObject& object : summary.objects) {
    objects.push_back({{"logical", object.logical},
                       {"physical", object.physical},
                       {"type", object.object_type},
                       {"action", object.action},
                       {"present", object.present}});
  }
  json relations = json::array();
  for (const CatalogObject& object : summary.relations) relations.push_back(RelationJson(object));
  return json{{"deployment_id", summary.deployment_id},
              {"state", InventoryStateName(summary.state)},
              {"recorded_state", OrNull(summary.recorded_state)},
              {"created_at", summary.created_at},
              {"last_published_at", OrNull(summary.last_published_at)},
              {"active_logicals", summary.active_logicals},
              {"missing", summary.missing},
              {"objects", objects},
              {"relations", relations}};
}

int List(const GlobalOptions& global, bool as_json) {
  Context context = Open(global, "deployment list", AccessMode::kReadOnly);
  std::vector<json> documents;
  for (const std::string& name_space : context.name_spaces) {
    const DeploymentInventory inventory = ReadDeploymentInventory(*context.warehouse, name_space);
    if (as_json) {
      json list = json::array();
      for (const DeploymentSummary& summary : inventory.deployments) list.push_back(SummaryJson(summary));
      documents.push_back(json{{"database", name_space}, {"deployments", list}});
      continue;
    }
    if (inventory.deployments.empty()) {
      std::printf("no deployments in %s\n", name_space.c_str());
    } else if (context.name_spaces.size() > 1) {
      std::printf("deployments in %s:\n", name_space.c_str());
    }
    for (const DeploymentSummary& summary : inventory.deployments) {
      std::printf("%-28s %-17s created %s  published %s  %zu object(s), %zu relation(s)\n",
                  summary.deployment_id.c_str(), InventoryStateName(summary.state).c_str(), summary.created_at.c_str(),
                  summary.last_published_at.value_or("never").c_str(), summary.objects.size(),
                  summary.relations.size());
    }
  }
  if (as_json) PrintPerDatabase(documents);
  return 0;
}

int Show(const GlobalOptions& global, const std::string& id, bool as_json) {
  AsUsage([&] { RequireDeploymentId(id); });
  Context context = Open(global, "deployment show", AccessMode::kReadOnly);
  const DeploymentInventory inventory = ReadDeploymentInventory(*context.warehouse, context.NamespaceOf(id));
  const DeploymentSummary& summary = FindDeployment(inventory, id);
  json shown = SummaryJson(summary);
  json boundaries = json::array();
  for (const BoundaryRow& row : inventory.boundaries) {
    if (row.deployment_id != id) continue;
    boundaries.push_back({{"root", row.root},
                          {"anchor", row.anchor},
                          {"mode", row.mode},
                          {"partition", OrNull(row.partition)},
                          {"lower", OrNull(row.lower)},
                          {"cutoff", OrNull(row.cutoff)},
                          {"captured_at", row.captured_at}});
  }
  json publications = json::array();
  for (const PublicationRow& row : inventory.publications) {
    if (row.deployment_id != id) continue;
    publications.push_back({{"publication_id", row.publication_id},
                            {"operation", row.operation},
                            {"logical", row.logical},
                            {"physical", row.physical},
                            {"previous_deployment_id", row.previous_deployment_id},
                            {"published_at", row.published_at}});
  }
  shown["boundaries"] = boundaries;
  shown["publications"] = publications;
  if (as_json) {
    Print(shown);
    return 0;
  }
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
  for (const json& row : boundaries) std::printf("  boundary %s\n", row.dump().c_str());
  for (const json& row : publications) std::printf("  publication %s\n", row.dump().c_str());
  return 0;
}

int Diff(const GlobalOptions& global, const std::string& argument, bool as_json) {
  const auto [from, to] = AsUsage([&] { return ParseDiffSides(argument); });
  Context context = Open(global, "deployment diff", AccessMode::kReadOnly);
  const DeploymentInventory inventory =
      ReadDeploymentInventory(*context.warehouse, context.NamespaceOf(from == "active" ? to : from));
  const DeploymentDiff diff = DiffDeployments(*context.warehouse, inventory, from, to);
  auto side_json = [](const std::optional<RelationSide>& side) {
    if (!side) return json(nullptr);
    json columns = json::array();
    for (const ColumnInfo& column : side->columns) columns.push_back({column.name, column.type});
    return json{{"physical", side->physical},
                {"present", side->present},
                {"rows", side->rows ? json(*side->rows) : json(nullptr)},
                {"columns", columns}};
  };
  json relations = json::array();
  for (const RelationDiff& item : diff.relations) {
    relations.push_back({{"logical", item.logical},
                         {"change", RelationChangeName(item.change)},
                         {"from", side_json(item.from)},
                         {"to", side_json(item.to)},
                         {"columns_added", item.columns.added},
                         {"columns_removed", item.columns.removed}});
  }
  if (as_json) {
    Print(json{{"from", diff.from}, {"to", diff.to}, {"relations", relations}});
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

json DoctorJson(const Definitions& definitions, const DeploymentInventory& inventory);

int Doctor(const GlobalOptions& global) {
  Context context = Open(global, "doctor", AccessMode::kReadOnly);
  std::vector<json> documents;
  for (const std::string& name_space : context.name_spaces) {
    const DeploymentInventory inventory = ReadDeploymentInventory(*context.warehouse, name_space);
    documents.push_back(DoctorJson(context.project.definitions, inventory));
  }
  PrintPerDatabase(documents);
  return 0;
}

json DoctorJson(const Definitions& definitions, const DeploymentInventory& inventory) {
  json logicals = json::array();
  for (const LogicalDiagnosis& diagnosis : sluice::Doctor(definitions, inventory)) {
    json item{{"logical", diagnosis.logical},
              {"model", OrNull(diagnosis.model)},
              {"state_kind", LogicalStateKindName(diagnosis.state_kind)},
              {"active_deployment_id", OrNull(diagnosis.active_deployment_id)},
              {"active_physical", OrNull(diagnosis.active_physical)},
              {"candidate_ids", diagnosis.candidate_ids}};
    if (diagnosis.active_physical) item["active_physical_present"] = diagnosis.active_physical_present;
    if (!diagnosis.detail.empty()) item["detail"] = diagnosis.detail;
    logicals.push_back(std::move(item));
  }
  return json{{"database", inventory.name_space}, {"logicals", logicals}};
}

int RepairActiveView(const GlobalOptions& global, const std::string& table, const std::string& id) {
  AsUsage([&] { RequireDeploymentId(id); });
  Context context = Open(global, "repair active-view", AccessMode::kReadWrite);
  const std::string name_space = context.NamespaceOf(id);
  const ViewBinding binding = sluice::RepairActiveView(*context.warehouse, name_space, table, id);
  std::printf("%s.%s now reads %s.%s (no metadata written)\n", name_space.c_str(), binding.logical.c_str(),
              name_space.c_str(), binding.physical.c_str());
  return 0;
}

// Reconciles one database's models (`select`: as typed, or its virtual pipelines); text printed, JSON returned.
json ReconcileIn(Context& context, const std::string& name_space, const std::vector<std::string>& select, bool apply,
                 bool as_json) {
  SystemClock clock;
  const ReconcileReport report =
      sluice::Reconcile(*context.warehouse, context.project.definitions, name_space, {select, apply}, clock);
  if (as_json) {
    json items = json::array();
    for (const ReconcileItem& item : report.items) {
      items.push_back({{"model", item.model},
                       {"logical", item.logical},
                       {"type", item.object_type},
                       {"active_physical", OrNull(item.active_physical)},
                       {"status", ReconcileStatusName(item.status)},
                       {"reason", item.reason}});
    }
    return json{{"database", report.name_space},
                {"reconcile_id", report.reconcile_id},
                {"applied", report.applied},
                {"dry_run", !apply},
                {"objects", items}};
  }
  if (context.name_spaces.size() > 1) std::printf("%s:\n", name_space.c_str());
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
  return json();
}

int Reconcile(const GlobalOptions& global, const std::vector<std::string>& select, bool apply, bool as_json) {
  Context context = Open(global, "reconcile", apply ? AccessMode::kReadWrite : AccessMode::kReadOnly);
  std::vector<json> documents;
  if (!select.empty() || context.name_spaces.size() == 1) {
    const std::string name_space =
        select.empty() ? context.name_spaces.front()
                       : VirtualNamespaceOf(context.project.definitions, select).value_or(context.name_spaces.front());
    documents.push_back(ReconcileIn(context, name_space, select, apply, as_json));
  } else {
    for (const std::string& name_space : context.name_spaces) {  // a plan covers one database: its pipelines
      std::set<std::string> pipelines;
      for (const Asset& asset : context.project.definitions.assets()) {
        if (IsVirtualModel(context.project.definitions, asset) && asset.key.name_space() == name_space) {
          pipelines.insert("pipeline:" + asset.pipeline);
        }
      }
      documents.push_back(ReconcileIn(context, name_space, {pipelines.begin(), pipelines.end()}, apply, as_json));
    }
  }
  if (as_json) PrintPerDatabase(documents);
  return 0;
}

// The janitor of one database; text printed, JSON returned.
json JanitorIn(Context& context, const std::string& name_space, JanitorOptions options, bool apply, bool as_json) {
  const DeploymentInventory inventory = ReadDeploymentInventory(*context.warehouse, name_space);
  options.current_logicals.emplace();
  for (const Asset& asset : context.project.definitions.assets()) {
    if (IsVirtualModel(context.project.definitions, asset) && asset.key.name_space() == name_space) {
      options.current_logicals->insert(asset.relation_name);
    }
  }
  SystemClock clock;
  JanitorPlan plan =
      PlanJanitor(inventory, options, clock.Now(), context.warehouse->capabilities(), context.warehouse->dialect());
  if (apply) ApplyJanitor(*context.warehouse, plan);
  if (as_json) {
    json deployments = json::array();
    for (const JanitorDeployment& item : plan.deployments) {
      deployments.push_back({{"deployment_id", item.deployment_id},
                             {"state", InventoryStateName(item.state)},
                             {"kept", item.kept},
                             {"reasons", item.reasons},
                             {"protected_objects", item.protected_objects}});
    }
    json drops = json::array();
    for (const JanitorDrop& drop : plan.drops) {
      drops.push_back({{"deployment_id", drop.deployment_id},
                       {"name", drop.name},
                       {"type", CatalogObjectTypeName(drop.type)},
                       {"statement", drop.statement},
                       {"dropped", drop.dropped},
                       {"obsolete_binding", drop.obsolete_binding},
                       {"skipped", drop.skipped.empty() ? json(nullptr) : json(drop.skipped)}});
    }
    return json{{"database", plan.name_space},
                {"dry_run", !apply},
                {"retention_days", options.retention_days},
                {"minimum_rollback_deployments", options.minimum_rollback_deployments},
                {"deployments", deployments},
                {"drops", drops}};
  }
  if (context.name_spaces.size() > 1) std::printf("%s:\n", name_space.c_str());
  for (const JanitorDeployment& item : plan.deployments) {
    std::string why;
    for (const std::string& reason : item.reasons) why += (why.empty() ? "" : ", ") + reason;
    std::printf("  %-6s %-28s %-17s %s\n", item.kept ? "keep" : "delete", item.deployment_id.c_str(),
                InventoryStateName(item.state).c_str(), why.c_str());
    for (const std::string& name : item.protected_objects) {
      std::printf("         keeps %s: a kept or active deployment uses it\n", name.c_str());
    }
  }
  for (const JanitorDrop& drop : plan.drops) {
    std::printf("  %s %s%s%s\n", apply ? (drop.dropped ? "dropped" : "skipped") : "would drop", drop.statement.c_str(),
                drop.obsolete_binding ? "  (the stable view of a model no longer in the project)" : "",
                drop.skipped.empty() ? "" : ("  (" + drop.skipped + ")").c_str());
  }
  return json();
}

int Janitor(const GlobalOptions& global, JanitorOptions options, bool apply, bool as_json) {
  Context context = Open(global, "janitor", apply ? AccessMode::kReadWrite : AccessMode::kReadOnly);
  std::vector<json> documents;
  for (const std::string& name_space : context.name_spaces) {
    documents.push_back(JanitorIn(context, name_space, options, apply, as_json));
  }
  if (as_json) {
    PrintPerDatabase(documents);
  } else if (!apply) {
    std::printf("dry run: nothing was dropped; run again with --apply\n");
  }
  return 0;
}

}  // namespace

DeploymentOperationsCommands::DeploymentOperationsCommands(CLI::App& app, CLI::App& deployment) {
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
  if (doctor_->parsed()) return Doctor(global);
  if (repair_active_view_->parsed()) return RepairActiveView(global, table_, deployment_id_);
  if (reconcile_->parsed()) return Reconcile(global, select_, apply_, json_);
  if (janitor_->parsed()) {
    return Janitor(global, JanitorOptions{retention_days_, minimum_rollback_deployments_}, apply_, json_);
  }
  return std::nullopt;
}

}  // namespace sluice::cli
