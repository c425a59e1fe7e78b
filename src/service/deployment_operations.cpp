#include "service/deployment_operations.hpp"

#include <memory>
#include <set>

#include "core/clock.hpp"
#include "deploy/virtual_plan.hpp"
#include "service/request_error.hpp"

namespace sluice::service {

namespace {

using json = nlohmann::ordered_json;

// The project (gated on virtual mode before anything connects), the databases its virtual models live in and its
// warehouse.
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

Context Open(const WorkspaceOptions& workspace, const std::string& command, AccessMode mode) {
  const Project& project = LoadProjectFor(workspace);
  RequireVirtualProject(project.definitions, command);
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(WarehouseConfigFor(project, mode));
  return Context{project, VirtualNamespaces(project.definitions), std::move(warehouse)};
}

json PerDatabase(const std::vector<json>& documents) {
  if (documents.size() == 1) return documents.front();
  json list = json::array();
  for (const json& document : documents) list.push_back(document);
  return json{{"databases", list}};
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
              {"recorded_state", OrNull<json>(summary.recorded_state)},
              {"created_at", summary.created_at},
              {"last_published_at", OrNull<json>(summary.last_published_at)},
              {"active_logicals", summary.active_logicals},
              {"missing", summary.missing},
              {"objects", objects},
              {"relations", relations}};
}

json DoctorJson(const Definitions& definitions, const DeploymentInventory& inventory) {
  json logicals = json::array();
  for (const LogicalDiagnosis& diagnosis : sluice::Doctor(definitions, inventory)) {
    json item{{"logical", diagnosis.logical},
              {"model", OrNull<json>(diagnosis.model)},
              {"state_kind", LogicalStateKindName(diagnosis.state_kind)},
              {"active_deployment_id", OrNull<json>(diagnosis.active_deployment_id)},
              {"active_physical", OrNull<json>(diagnosis.active_physical)},
              {"candidate_ids", diagnosis.candidate_ids}};
    if (diagnosis.active_physical) item["active_physical_present"] = diagnosis.active_physical_present;
    if (!diagnosis.detail.empty()) item["detail"] = diagnosis.detail;
    logicals.push_back(std::move(item));
  }
  return json{{"database", inventory.name_space}, {"logicals", logicals}};
}

// The virtual models of one database, as a selection of their pipelines (a plan covers one database).
std::vector<std::string> PipelinesIn(const Definitions& definitions, const std::string& name_space) {
  std::set<std::string> pipelines;
  for (const Asset& asset : definitions.assets()) {
    if (IsVirtualModel(definitions, asset) && asset.key.name_space() == name_space) {
      pipelines.insert("pipeline:" + asset.pipeline);
    }
  }
  return {pipelines.begin(), pipelines.end()};
}

}  // namespace

std::vector<DeploymentInventory> ListDeployments(const WorkspaceOptions& workspace) {
  Context context = Open(workspace, "deployment list", AccessMode::kReadOnly);
  std::vector<DeploymentInventory> inventories;
  for (const std::string& name_space : context.name_spaces) {
    inventories.push_back(ReadDeploymentInventory(*context.warehouse, name_space));
  }
  return inventories;
}

json ToJson(const std::vector<DeploymentInventory>& inventories) {
  std::vector<json> documents;
  for (const DeploymentInventory& inventory : inventories) {
    json list = json::array();
    for (const DeploymentSummary& summary : inventory.deployments) list.push_back(SummaryJson(summary));
    documents.push_back(json{{"database", inventory.name_space}, {"deployments", list}});
  }
  return PerDatabase(documents);
}

DeploymentDetail ShowDeployment(const WorkspaceOptions& workspace, const std::string& id) {
  AsRequestError([&] {
    RequireDeploymentId(id);
    return 0;
  });
  Context context = Open(workspace, "deployment show", AccessMode::kReadOnly);
  const DeploymentInventory inventory = ReadDeploymentInventory(*context.warehouse, context.NamespaceOf(id));
  DeploymentDetail detail{FindDeployment(inventory, id), {}, {}};
  for (const BoundaryRow& row : inventory.boundaries) {
    if (row.deployment_id == id) detail.boundaries.push_back(row);
  }
  for (const PublicationRow& row : inventory.publications) {
    if (row.deployment_id == id) detail.publications.push_back(row);
  }
  return detail;
}

json ToJson(const BoundaryRow& row) {
  return json{{"root", row.root},
              {"anchor", row.anchor},
              {"mode", row.mode},
              {"partition", OrNull<json>(row.partition)},
              {"lower", OrNull<json>(row.lower)},
              {"cutoff", OrNull<json>(row.cutoff)},
              {"captured_at", row.captured_at}};
}

json ToJson(const PublicationRow& row) {
  return json{{"publication_id", row.publication_id},
              {"operation", row.operation},
              {"logical", row.logical},
              {"physical", row.physical},
              {"previous_deployment_id", row.previous_deployment_id},
              {"published_at", row.published_at}};
}

json ToJson(const DeploymentDetail& detail) {
  json shown = SummaryJson(detail.summary);
  json boundaries = json::array();
  for (const BoundaryRow& row : detail.boundaries) boundaries.push_back(ToJson(row));
  json publications = json::array();
  for (const PublicationRow& row : detail.publications) publications.push_back(ToJson(row));
  shown["boundaries"] = boundaries;
  shown["publications"] = publications;
  return shown;
}

DeploymentDiff DiffDeployments(const WorkspaceOptions& workspace, const std::string& sides) {
  const auto [from, to] = AsRequestError([&] { return ParseDiffSides(sides); });
  Context context = Open(workspace, "deployment diff", AccessMode::kReadOnly);
  const DeploymentInventory inventory =
      ReadDeploymentInventory(*context.warehouse, context.NamespaceOf(from == "active" ? to : from));
  return sluice::DiffDeployments(*context.warehouse, inventory, from, to);
}

json ToJson(const DeploymentDiff& diff) {
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
  return json{{"from", diff.from}, {"to", diff.to}, {"relations", relations}};
}

json Doctor(const WorkspaceOptions& workspace) {
  Context context = Open(workspace, "doctor", AccessMode::kReadOnly);
  std::vector<json> documents;
  for (const std::string& name_space : context.name_spaces) {
    documents.push_back(
        DoctorJson(context.project.definitions, ReadDeploymentInventory(*context.warehouse, name_space)));
  }
  return PerDatabase(documents);
}

RepairResult RepairActiveView(const WorkspaceOptions& workspace, const std::string& table, const std::string& id) {
  AsRequestError([&] {
    RequireDeploymentId(id);
    return 0;
  });
  Context context = Open(workspace, "repair active-view", AccessMode::kReadWrite);
  const std::string name_space = context.NamespaceOf(id);
  return {name_space, sluice::RepairActiveView(*context.warehouse, name_space, table, id)};
}

ReconcileResult Reconcile(const WorkspaceOptions& workspace, const std::vector<std::string>& select, bool apply) {
  Context context = Open(workspace, "reconcile", apply ? AccessMode::kReadWrite : AccessMode::kReadOnly);
  const Definitions& definitions = context.project.definitions;
  SystemClock clock;
  ReconcileResult result{{}, apply};
  std::vector<ReconcileReport>& reports = result.reports;
  if (!select.empty() || context.name_spaces.size() == 1) {
    const std::string name_space = select.empty()
                                       ? context.name_spaces.front()
                                       : VirtualNamespaceOf(definitions, select).value_or(context.name_spaces.front());
    reports.push_back(sluice::Reconcile(*context.warehouse, definitions, name_space, {select, apply}, clock));
    return result;
  }
  for (const std::string& name_space : context.name_spaces) {
    reports.push_back(sluice::Reconcile(*context.warehouse, definitions, name_space,
                                        {PipelinesIn(definitions, name_space), apply}, clock));
  }
  return result;
}

json ToJson(const ReconcileResult& result) {
  std::vector<json> documents;
  for (const ReconcileReport& report : result.reports) {
    json items = json::array();
    for (const ReconcileItem& item : report.items) {
      items.push_back({{"model", item.model},
                       {"logical", item.logical},
                       {"type", item.object_type},
                       {"active_physical", OrNull<json>(item.active_physical)},
                       {"status", ReconcileStatusName(item.status)},
                       {"reason", item.reason}});
    }
    documents.push_back(json{{"database", report.name_space},
                             {"reconcile_id", report.reconcile_id},
                             {"applied", report.applied},
                             {"dry_run", !result.apply},
                             {"objects", items}});
  }
  return PerDatabase(documents);
}

std::vector<JanitorReport> Janitor(const WorkspaceOptions& workspace, const JanitorOptions& options, bool apply) {
  Context context = Open(workspace, "janitor", apply ? AccessMode::kReadWrite : AccessMode::kReadOnly);
  const Definitions& definitions = context.project.definitions;
  SystemClock clock;
  std::vector<JanitorReport> reports;
  for (const std::string& name_space : context.name_spaces) {
    const DeploymentInventory inventory = ReadDeploymentInventory(*context.warehouse, name_space);
    JanitorOptions in_database = options;
    in_database.current_logicals.emplace();
    for (const Asset& asset : definitions.assets()) {
      if (IsVirtualModel(definitions, asset) && asset.key.name_space() == name_space) {
        in_database.current_logicals->insert(asset.relation_name);
      }
    }
    JanitorPlan plan = PlanJanitor(inventory, in_database, clock.Now(), context.warehouse->capabilities(),
                                   context.warehouse->dialect());
    if (apply) ApplyJanitor(*context.warehouse, plan);
    reports.push_back({std::move(plan), in_database, apply});
  }
  return reports;
}

json ToJson(const std::vector<JanitorReport>& reports) {
  std::vector<json> documents;
  for (const JanitorReport& report : reports) {
    const JanitorPlan& plan = report.plan;
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
    documents.push_back(json{{"database", plan.name_space},
                             {"dry_run", !report.applied},
                             {"retention_days", report.options.retention_days},
                             {"minimum_rollback_deployments", report.options.minimum_rollback_deployments},
                             {"deployments", deployments},
                             {"drops", drops}});
  }
  return PerDatabase(documents);
}

}  // namespace sluice::service
