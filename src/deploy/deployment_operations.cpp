#include "deploy/deployment_operations.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <tuple>

#include "core/virtual_names.hpp"
#include "deploy/desired_objects.hpp"
#include "deploy/virtual_plan.hpp"
#include "sql/dialect.hpp"
#include "sql/sluice_ddl.hpp"

namespace sluice {

namespace {

constexpr const char* kActive = "active";

// Whether `text` names `name` as a whole identifier.
bool Mentions(const std::string& text, const std::string& name) {
  auto identifier = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
    const bool starts = at == 0 || !identifier(text[at - 1]);
    const bool ends = at + name.size() == text.size() || !identifier(text[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

// "YYYY-MM-DDTHH:MM:SS" of an ISO-8601 UTC text (a space or a T between date and time): times compare as text.
std::string SecondsKey(const std::string& iso) {
  std::string key = iso.substr(0, std::min<size_t>(iso.size(), 19));
  if (key.size() > 10 && key[10] == ' ') key[10] = 'T';
  return key;
}

// The UTC time a deployment id starts with, as ISO-8601 text.
std::string IdTime(const std::string& id) {
  return id.substr(0, 4) + "-" + id.substr(4, 2) + "-" + id.substr(6, 2) + "T" + id.substr(9, 2) + ":" +
         id.substr(11, 2) + ":" + id.substr(13, 2) + ".000Z";
}

const SqlCompute* SqlOf(const Asset& asset) { return std::get_if<SqlCompute>(&asset.compute); }

std::map<std::string, const CatalogObject*> ByName(const std::vector<CatalogObject>& catalog) {
  std::map<std::string, const CatalogObject*> index;
  for (const CatalogObject& object : catalog) index[object.name] = &object;
  return index;
}

Error DeploymentIdError(const std::string& text) {
  return Error(Diagnostic{"SLU-DEPLOY-040",
                          "'" + text + "' is not a deployment id",
                          {},
                          "deployment ids look like 20260801T000000Z_a1b2c3; `sluice deployment list` shows them",
                          {}});
}

}  // namespace

std::string CatalogObjectTypeName(CatalogObjectType type) {
  switch (type) {
    case CatalogObjectType::kTable:
      return "table";
    case CatalogObjectType::kView:
      return "view";
    case CatalogObjectType::kMaterializedView:
      return "materialized_view";
  }
  return "table";
}

std::string InventoryStateName(InventoryState state) {
  switch (state) {
    case InventoryState::kActive:
      return "active";
    case InventoryState::kStaged:
      return "staged";
    case InventoryState::kSuperseded:
      return "superseded";
    case InventoryState::kIncomplete:
      return "incomplete";
    case InventoryState::kMetadataMissing:
      return "metadata_missing";
    case InventoryState::kPhysicalMissing:
      return "physical_missing";
  }
  return "staged";
}

std::string RelationChangeName(RelationChange change) {
  switch (change) {
    case RelationChange::kAdded:
      return "added";
    case RelationChange::kRemoved:
      return "removed";
    case RelationChange::kChanged:
      return "changed";
    case RelationChange::kUnchanged:
      return "unchanged";
    case RelationChange::kPhysicalMissing:
      return "physical_missing";
  }
  return "unchanged";
}

std::string LogicalStateKindName(LogicalStateKind kind) {
  switch (kind) {
    case LogicalStateKind::kActiveViewPresent:
      return "active_view_present";
    case LogicalStateKind::kGreenfield:
      return "greenfield";
    case LogicalStateKind::kLogicalViewMissing:
      return "logical_view_missing";
    case LogicalStateKind::kInvalidActiveView:
      return "invalid_active_view";
  }
  return "greenfield";
}

std::string ReconcileStatusName(ReconcileStatus status) {
  switch (status) {
    case ReconcileStatus::kReconcile:
      return "reconcile";
    case ReconcileStatus::kInSync:
      return "in_sync";
    case ReconcileStatus::kMismatch:
      return "mismatch";
    case ReconcileStatus::kRejected:
      return "rejected";
    case ReconcileStatus::kNotDeployed:
      return "not_deployed";
  }
  return "in_sync";
}

// ---- Catalog ------------------------------------------------------------------------------------------------------

std::vector<CatalogObject> ReadCatalog(Warehouse& warehouse, const std::string& name_space) {
  std::map<std::string, CatalogObject> objects;
  for (TableInfo& info : warehouse.ListRelations()) {
    if (info.relation.name_space != name_space) continue;
    CatalogObject& object = objects[info.relation.name];
    object.name = info.relation.name;
    object.type = info.is_view ? CatalogObjectType::kView : CatalogObjectType::kTable;
    object.columns = std::move(info.columns);
  }
  for (CatalogEntry& entry : warehouse.CatalogOf(name_space)) {
    CatalogObject& object = objects[entry.relation.name];
    object.name = entry.relation.name;
    object.engine = std::move(entry.engine);
    object.sorting_key = std::move(entry.sorting_key);
    object.partition_key = std::move(entry.partition_key);
    if (entry.kind == RelationKind::kMaterializedView) {
      object.type = CatalogObjectType::kMaterializedView;
      if (entry.target) object.target = entry.target->name;
      object.definition = std::move(entry.definition);
    } else if (entry.kind == RelationKind::kView) {
      object.type = CatalogObjectType::kView;
    }
  }
  std::vector<CatalogObject> out;
  for (auto& [name, object] : objects) out.push_back(std::move(object));
  return out;
}

std::optional<std::string> DeploymentIdOfRelation(const std::string& name) {
  if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(name)) return parts->deployment_id;
  // mv__<model>__<id>__<n>
  const size_t at = name.rfind("__");
  if (at == std::string::npos || at + 2 >= name.size() || name.rfind("mv__", 0) != 0) return std::nullopt;
  if (!std::all_of(name.begin() + static_cast<std::ptrdiff_t>(at) + 2, name.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    return std::nullopt;
  }
  if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(name.substr(0, at))) return parts->deployment_id;
  return std::nullopt;
}

// ---- Inventory ----------------------------------------------------------------------------------------------------

namespace {

// The deployment a stable view reads: a view whose own name carries no deployment id (a deployment's physical views
// also select * from its tables) and whose query is `SELECT *` over a relation carrying one.
std::optional<std::string> BoundDeployment(const LiveBinding& binding) {
  if (!binding.physical || DeploymentIdOfRelation(binding.logical)) return std::nullopt;
  return DeploymentIdOfRelation(*binding.physical);
}

}  // namespace

const DeploymentSummary* DeploymentInventory::Find(const std::string& deployment_id) const {
  for (const DeploymentSummary& summary : deployments) {
    if (summary.deployment_id == deployment_id) return &summary;
  }
  return nullptr;
}

DeploymentInventory ReadDeploymentInventory(Warehouse& warehouse, const std::string& name_space) {
  DeploymentInventory inventory;
  inventory.name_space = name_space;
  DeploymentMetadata metadata(warehouse);
  const std::vector<DeploymentRow> states = metadata.Deployments(name_space);
  inventory.objects = metadata.Objects(name_space);
  inventory.publications = metadata.Publications(name_space);
  inventory.boundaries = metadata.Boundaries(name_space);
  inventory.bindings = metadata.Bindings(name_space);
  inventory.catalog = ReadCatalog(warehouse, name_space);
  const std::map<std::string, const CatalogObject*> catalog = ByName(inventory.catalog);
  const std::map<std::string, DeploymentRow> latest = LatestDeploymentStates(states);

  std::set<std::string> ids;
  std::map<std::string, std::string> first_recorded;
  auto seen = [&](const std::string& id, const std::string& at) {
    ids.insert(id);
    auto [it, added] = first_recorded.emplace(id, at);
    if (!added && !at.empty() && (it->second.empty() || SecondsKey(at) < SecondsKey(it->second))) it->second = at;
  };
  for (const DeploymentRow& row : states) seen(row.deployment_id, row.recorded_at);
  for (const ObjectRow& row : inventory.objects) {
    if (row.kind == "deployment" && IsDeploymentId(row.deployment_id)) seen(row.deployment_id, row.recorded_at);
  }
  for (const CatalogObject& object : inventory.catalog) {
    if (std::optional<std::string> id = DeploymentIdOfRelation(object.name)) ids.insert(*id);
  }

  for (auto id = ids.rbegin(); id != ids.rend(); ++id) {
    DeploymentSummary summary;
    summary.deployment_id = *id;
    auto state = latest.find(*id);
    if (state != latest.end()) summary.recorded_state = DeploymentStateName(state->second.state);
    auto recorded = first_recorded.find(*id);
    summary.created_at = recorded != first_recorded.end() ? recorded->second : IdTime(*id);
    std::map<std::string, DeploymentObject> objects;  // by logical: later rows win
    for (const ObjectRow& row : inventory.objects) {
      if (row.deployment_id != *id || row.kind != "deployment") continue;
      objects[row.logical] =
          DeploymentObject{row.logical, row.physical, row.object_type, row.action, catalog.count(row.physical) > 0};
    }
    for (auto& [logical, object] : objects) {
      if (object.action != "no_op" && !object.present) summary.missing.push_back(object.physical);
      summary.objects.push_back(std::move(object));
    }
    for (const CatalogObject& object : inventory.catalog) {
      if (DeploymentIdOfRelation(object.name) == *id) summary.relations.push_back(object);
    }
    for (const LiveBinding& binding : inventory.bindings) {
      if (BoundDeployment(binding) == *id) summary.active_logicals.push_back(binding.logical);
    }
    for (const PublicationRow& row : inventory.publications) {
      if (row.deployment_id != *id) continue;
      summary.published = true;
      if (!summary.last_published_at || SecondsKey(row.published_at) >= SecondsKey(*summary.last_published_at)) {
        summary.last_published_at = row.published_at;
      }
    }
    const bool has_metadata = state != latest.end() || !summary.objects.empty();
    if (!summary.active_logicals.empty()) {
      summary.state = InventoryState::kActive;
    } else if (!has_metadata) {
      summary.state = InventoryState::kMetadataMissing;
    } else if (state == latest.end() || state->second.state != DeploymentState::kBackfilled) {
      summary.state = InventoryState::kIncomplete;
    } else if (!summary.missing.empty()) {
      summary.state = InventoryState::kPhysicalMissing;
    } else {
      summary.state = summary.published ? InventoryState::kSuperseded : InventoryState::kStaged;
    }
    inventory.deployments.push_back(std::move(summary));
  }
  return inventory;
}

void RequireDeploymentId(const std::string& text) {
  if (!IsDeploymentId(text)) throw DeploymentIdError(text);
}

const DeploymentSummary& FindDeployment(const DeploymentInventory& inventory, const std::string& deployment_id) {
  if (!IsDeploymentId(deployment_id)) throw DeploymentIdError(deployment_id);
  if (const DeploymentSummary* summary = inventory.Find(deployment_id)) return *summary;
  throw Error(Diagnostic{"SLU-DEPLOY-041",
                         "no deployment " + deployment_id + " in " + inventory.name_space +
                             ": neither its metadata nor its relations exist",
                         {},
                         "`sluice deployment list` shows the deployments of the target database",
                         {}});
}

// ---- Diff ---------------------------------------------------------------------------------------------------------

std::pair<std::string, std::string> ParseDiffSides(const std::string& argument) {
  const size_t colon = argument.find(':');
  std::pair<std::string, std::string> sides =
      colon == std::string::npos
          ? std::pair<std::string, std::string>{kActive, argument}
          : std::pair<std::string, std::string>{argument.substr(0, colon), argument.substr(colon + 1)};
  if (sides.first.empty() || sides.second.empty() || sides.second.find(':') != std::string::npos) {
    throw Error(Diagnostic{"SLU-DEPLOY-042",
                           "'" + argument + "' is not a deployment diff",
                           {},
                           "give ID (compared with the active bindings) or FROM:TO, where each side is a deployment "
                           "id or `active`",
                           {}});
  }
  for (const std::string& side : {sides.first, sides.second}) {
    if (side != kActive && !IsDeploymentId(side)) throw DeploymentIdError(side);
  }
  return sides;
}

namespace {

// logical → physical relation of one side.
std::map<std::string, std::string> SideRelations(const DeploymentInventory& inventory, const std::string& side) {
  std::map<std::string, std::string> relations;
  if (side == kActive) {
    for (const LiveBinding& binding : inventory.bindings) {
      if (BoundDeployment(binding)) relations[binding.logical] = *binding.physical;
    }
    return relations;
  }
  const DeploymentSummary& summary = FindDeployment(inventory, side);
  for (const DeploymentObject& object : summary.objects) relations[object.logical] = object.physical;
  if (summary.objects.empty()) {  // metadata missing: what the catalog holds
    for (const CatalogObject& object : summary.relations) {
      if (object.type == CatalogObjectType::kMaterializedView) continue;
      if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(object.name)) {
        relations[parts->logical] = object.name;
      }
    }
  }
  return relations;
}

std::vector<ColumnSpec> Specs(const std::vector<ColumnInfo>& columns) {
  std::vector<ColumnSpec> specs;
  for (const ColumnInfo& column : columns) specs.push_back({column.name, NormalizeTypeSpelling(column.type)});
  return specs;
}

}  // namespace

DeploymentDiff DiffDeployments(Warehouse& warehouse, const DeploymentInventory& inventory, const std::string& from,
                               const std::string& to) {
  DeploymentDiff diff{from, to, {}};
  const std::map<std::string, std::string> before = SideRelations(inventory, from);
  const std::map<std::string, std::string> after = SideRelations(inventory, to);
  const std::map<std::string, const CatalogObject*> catalog = ByName(inventory.catalog);

  // One query counts every present relation of either side.
  std::set<std::string> present;
  for (const auto* side : {&before, &after}) {
    for (const auto& [logical, physical] : *side) {
      if (catalog.count(physical) > 0) present.insert(physical);
    }
  }
  std::map<std::string, int64_t> counts;
  if (!present.empty()) {
    std::string sql;
    for (const std::string& physical : present) {
      sql += (sql.empty() ? "" : " UNION ALL ") + std::string("SELECT ") +
             sql::QuoteString(warehouse.dialect(), physical) + " AS relation, count(*) AS row_count FROM " +
             warehouse.QualifiedName(Relation{inventory.name_space, physical});
    }
    for (const auto& row : warehouse.Query(sql).rows) counts[row[0].value_or("")] = std::stoll(row[1].value_or("0"));
  }
  auto side = [&](const std::string& physical) {
    RelationSide out;
    out.physical = physical;
    auto found = catalog.find(physical);
    out.present = found != catalog.end();
    if (out.present) {
      out.columns = found->second->columns;
      out.rows = counts[physical];
    }
    return out;
  };

  std::set<std::string> logicals;
  for (const auto& [logical, physical] : before) logicals.insert(logical);
  for (const auto& [logical, physical] : after) logicals.insert(logical);
  for (const std::string& logical : logicals) {
    RelationDiff item;
    item.logical = logical;
    if (auto it = before.find(logical); it != before.end()) item.from = side(it->second);
    if (auto it = after.find(logical); it != after.end()) item.to = side(it->second);
    if (!item.from) {
      item.change = item.to->present ? RelationChange::kAdded : RelationChange::kPhysicalMissing;
    } else if (!item.to) {
      item.change = item.from->present ? RelationChange::kRemoved : RelationChange::kPhysicalMissing;
    } else if (!item.from->present || !item.to->present) {
      item.change = RelationChange::kPhysicalMissing;
    } else {
      item.columns = DiffColumns(Specs(item.from->columns), Specs(item.to->columns));
      const bool same =
          item.from->physical == item.to->physical || (!item.columns.impact && item.from->rows == item.to->rows);
      item.change = same ? RelationChange::kUnchanged : RelationChange::kChanged;
    }
    diff.relations.push_back(std::move(item));
  }
  return diff;
}

// ---- Doctor -------------------------------------------------------------------------------------------------------

std::vector<LogicalDiagnosis> Doctor(const Definitions& definitions, const DeploymentInventory& inventory) {
  std::map<std::string, std::optional<std::string>> logicals;  // → model
  for (const Asset& asset : definitions.assets()) {
    if (IsVirtualModel(definitions, asset) && asset.key.name_space() == inventory.name_space) {
      logicals[asset.relation_name] = asset.key.name();
    }
  }
  std::map<std::string, const LiveBinding*> bindings;
  for (const LiveBinding& binding : inventory.bindings) {
    bindings[binding.logical] = &binding;
    if (binding.deployment_id) logicals.emplace(binding.logical, std::nullopt);
  }
  const std::map<std::string, const CatalogObject*> catalog = ByName(inventory.catalog);
  std::map<std::string, std::set<std::string, std::greater<>>> candidates;  // logical → ids, newest first
  for (const CatalogObject& object : inventory.catalog) {
    if (object.type == CatalogObjectType::kMaterializedView) continue;
    if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(object.name)) {
      candidates[parts->logical].insert(parts->deployment_id);
    }
  }

  std::vector<LogicalDiagnosis> out;
  for (const auto& [logical, model] : logicals) {
    LogicalDiagnosis diagnosis;
    diagnosis.logical = logical;
    diagnosis.model = model;
    if (auto found = candidates.find(logical); found != candidates.end()) {
      diagnosis.candidate_ids.assign(found->second.begin(), found->second.end());
    }
    auto existing = catalog.find(logical);
    if (existing == catalog.end()) {
      diagnosis.state_kind =
          diagnosis.candidate_ids.empty() ? LogicalStateKind::kGreenfield : LogicalStateKind::kLogicalViewMissing;
    } else if (existing->second->type != CatalogObjectType::kView) {
      diagnosis.state_kind = LogicalStateKind::kInvalidActiveView;
      diagnosis.detail = "'" + logical + "' is a " + CatalogObjectTypeName(existing->second->type) + ", not a view";
    } else if (auto binding = bindings.find(logical); binding != bindings.end() && binding->second->deployment_id) {
      diagnosis.state_kind = LogicalStateKind::kActiveViewPresent;
      diagnosis.active_deployment_id = binding->second->deployment_id;
      diagnosis.active_physical = binding->second->physical;
      diagnosis.active_physical_present = catalog.count(*binding->second->physical) > 0;
    } else {
      diagnosis.state_kind = LogicalStateKind::kInvalidActiveView;
      const LiveBinding* live = binding != bindings.end() ? binding->second : nullptr;
      diagnosis.detail =
          live != nullptr && live->physical
              ? "the view reads " + *live->physical + ", not an object `" + logical + "__<deployment id>`"
              : "the view's query is not `SELECT * FROM` a deployment's object";
    }
    out.push_back(std::move(diagnosis));
  }
  return out;
}

// ---- Repair -------------------------------------------------------------------------------------------------------

ViewBinding RepairActiveView(Warehouse& warehouse, const std::string& name_space, const std::string& logical,
                             const std::string& deployment_id) {
  if (!IsDeploymentId(deployment_id)) throw DeploymentIdError(deployment_id);
  if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(logical)) {
    throw Error(Diagnostic{"SLU-DEPLOY-044",
                           "'" + logical + "' is a deployment's physical relation, not a logical name",
                           {},
                           "give the stable view's name, e.g. --table " + parts->logical,
                           {}});
  }
  const ViewBinding binding{logical, PhysicalName(logical, deployment_id)};
  std::optional<TableInfo> physical = warehouse.Describe(Relation{name_space, binding.physical});
  if (!physical) {
    throw Error(Diagnostic{"SLU-DEPLOY-043",
                           "deployment " + deployment_id + " has no relation " + name_space + "." + binding.physical,
                           {},
                           "`sluice doctor` lists the deployments holding a relation for " + logical,
                           {}});
  }
  BindViews(warehouse, name_space, {binding});
  return binding;
}

// ---- Reconcile ----------------------------------------------------------------------------------------------------

namespace {

// An engine or key expression as text that compares: no blanks, backticks or double quotes, no outer parentheses.
std::string KeyText(std::string text) {
  std::erase_if(text, [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0 || c == '`' || c == '"'; });
  while (text.size() >= 2 && text.front() == '(' && text.back() == ')') text = text.substr(1, text.size() - 2);
  return text;
}

std::string EngineName(const std::string& engine) { return KeyText(engine.substr(0, engine.find('('))); }

// Why the live table differs from the model's spec, or "" when it matches.
std::string Mismatch(const Definitions& definitions, const Asset& model, const VirtualObject& object,
                     const CatalogObject& table, const std::vector<CatalogObject>& catalog,
                     const Capabilities& capabilities) {
  const ColumnDiff columns = DiffColumns(Specs(table.columns), object.columns);
  if (columns.impact) {
    std::string text = "columns differ:";
    for (const std::string& c : columns.added) text += " +" + c;
    for (const std::string& c : columns.removed) text += " -" + c;
    for (const TypeChange& c : columns.retyped) text += " ~" + c.name + " (" + c.from + " -> " + c.to + ")";
    return text;
  }
  if (!capabilities.table_engines) return "";
  const StorageSpec& storage = SqlOf(model)->storage;
  if (EngineName(storage.engine) != KeyText(table.engine)) {
    return "engine " + table.engine + ", the model declares " + storage.engine;
  }
  std::string order_by;
  for (const std::string& key : storage.order_by) order_by += (order_by.empty() ? "" : ",") + key;
  if (KeyText(order_by) != KeyText(table.sorting_key)) {
    return "sorting key (" + table.sorting_key + "), the model declares (" + order_by + ")";
  }
  if (KeyText(storage.partition_by.value_or("")) != KeyText(table.partition_key)) {
    return "partition key (" + table.partition_key + "), the model declares (" + storage.partition_by.value_or("") +
           ")";
  }
  const std::vector<CompiledResource> resources = ModelResources(definitions, model);
  const bool fed = std::any_of(resources.begin(), resources.end(),
                               [](const CompiledResource& r) { return r.kind == "materialized_view"; });
  const bool has_view = std::any_of(catalog.begin(), catalog.end(), [&](const CatalogObject& o) {
    return o.type == CatalogObjectType::kMaterializedView && o.target == table.name;
  });
  if (fed && !has_view) return "no materialized view writes to " + table.name;
  return "";
}

}  // namespace

ReconcileReport Reconcile(Warehouse& warehouse, const Definitions& definitions, const std::string& name_space,
                          const ReconcileOptions& options, const Clock& clock) {
  RequireVirtualProject(definitions, "reconcile");
  const auto now = clock.Now();
  ReconcileReport report;
  report.name_space = name_space;
  report.reconcile_id = "reconcile_" + CompactUtc(now);
  const VirtualActualState actual = ReadVirtualActualState(warehouse, name_space);
  VirtualPlanOptions plan_options;
  plan_options.selection = options.selection;
  const VirtualPlan plan = PlanVirtual(definitions, actual, warehouse.capabilities(), plan_options, clock);
  const std::vector<CatalogObject> catalog = ReadCatalog(warehouse, name_space);
  const std::map<std::string, const CatalogObject*> by_name = ByName(catalog);
  std::map<std::string, const ObjectRow*> recorded;  // by physical: later rows win, as the planner reads them
  for (const ObjectRow& row : actual.objects) recorded[row.physical] = &row;

  for (const VirtualObject& object : plan.objects) {
    ReconcileItem item{object.model.name(),    object.logical,           object.object_type,
                       object.active_physical, ReconcileStatus::kInSync, ""};
    auto record = object.active_physical ? recorded.find(*object.active_physical) : recorded.end();
    auto table = object.active_physical ? by_name.find(*object.active_physical) : by_name.end();
    if (object.object_type != "table") {
      item.status = ReconcileStatus::kRejected;
      item.reason = "views are not reconciled";
    } else if (!object.active_physical) {
      item.status = ReconcileStatus::kNotDeployed;
      item.reason = "no active deployment: there is no live table to accept";
    } else if (record != recorded.end() && record->second->fingerprint == object.fingerprint) {
      item.reason = "the recorded fingerprint is the desired one";
    } else if (table == by_name.end() || table->second->type != CatalogObjectType::kTable) {
      item.status = ReconcileStatus::kMismatch;
      item.reason = "the active table " + *object.active_physical + " is missing";
    } else if (std::string why = Mismatch(definitions, *definitions.Find(object.model), object, *table->second, catalog,
                                          warehouse.capabilities());
               !why.empty()) {
      item.status = ReconcileStatus::kMismatch;
      item.reason = why;
    } else {
      item.status = ReconcileStatus::kReconcile;
      item.reason = record == recorded.end() ? "nothing is recorded for the active table"
                                             : "the live table matches; its recorded fingerprint differs";
      nlohmann::json columns = nlohmann::json::array();
      for (const ColumnSpec& column : object.columns) columns.push_back({column.name, column.type});
      report.rows.push_back(ObjectRow{report.reconcile_id, "reconcile", name_space, object.logical, "table",
                                      *object.active_physical, object.model.name(), "reconcile", false,
                                      object.fingerprint, columns.dump(), object.canonical_query, FormatUtc(now)});
    }
    report.items.push_back(std::move(item));
  }
  if (options.apply && !report.rows.empty()) {
    DeploymentMetadata(warehouse).Append(report.rows);
    report.applied = true;
  }
  return report;
}

// ---- Janitor ------------------------------------------------------------------------------------------------------

namespace {

int DropRank(CatalogObjectType type) {
  switch (type) {
    case CatalogObjectType::kMaterializedView:
      return 0;
    case CatalogObjectType::kView:
      return 1;
    case CatalogObjectType::kTable:
      return 2;
  }
  return 2;
}

std::string DropStatement(const std::string& name_space, const CatalogObject& object, const Capabilities& capabilities,
                          sql::Dialect dialect) {
  return sql::DropRelation(dialect, sql::QualifiedName(dialect, name_space, object.name),
                           object.type != CatalogObjectType::kTable, capabilities.drop_sync);
}

}  // namespace

JanitorPlan PlanJanitor(const DeploymentInventory& inventory, const JanitorOptions& options,
                        std::chrono::system_clock::time_point now, const Capabilities& capabilities,
                        sql::Dialect dialect) {
  if (options.retention_days < 0 || options.minimum_rollback_deployments < 0) {
    throw Error(Diagnostic{"SLU-DEPLOY-045",
                           "--retention-days and --minimum-rollback-deployments cannot be negative",
                           {},
                           "the defaults are --retention-days 7 --minimum-rollback-deployments 2",
                           {}});
  }
  JanitorPlan plan;
  plan.name_space = inventory.name_space;
  plan.options = options;
  const std::string cutoff = SecondsKey(FormatUtc(now - std::chrono::hours(24) * options.retention_days));

  // Rollback points: the latest published deployments that are not active and still whole.
  std::vector<const DeploymentSummary*> published;
  for (const DeploymentSummary& summary : inventory.deployments) {
    // A deployment whose relations are gone cannot be rolled back to.
    if (summary.published && summary.state != InventoryState::kActive &&
        summary.state != InventoryState::kPhysicalMissing) {
      published.push_back(&summary);
    }
  }
  std::stable_sort(published.begin(), published.end(), [](const DeploymentSummary* a, const DeploymentSummary* b) {
    return SecondsKey(*a->last_published_at) > SecondsKey(*b->last_published_at);
  });
  std::set<std::string> rollback_points;
  for (size_t i = 0; i < published.size() && i < static_cast<size_t>(options.minimum_rollback_deployments); ++i) {
    rollback_points.insert(published[i]->deployment_id);
  }

  auto obsolete = [&](const std::string& logical) {
    return options.current_logicals && options.current_logicals->count(logical) == 0;
  };
  std::set<std::string> kept;
  for (const DeploymentSummary& summary : inventory.deployments) {
    JanitorDeployment item{summary.deployment_id, summary.state, false, {}, {}};
    if (std::any_of(summary.active_logicals.begin(), summary.active_logicals.end(),
                    [&](const std::string& logical) { return !obsolete(logical); })) {
      item.reasons.push_back("active");
    }
    if (rollback_points.count(summary.deployment_id) > 0) item.reasons.push_back("rollback point");
    if (summary.last_published_at && SecondsKey(*summary.last_published_at) >= cutoff) {
      item.reasons.push_back("published within " + std::to_string(options.retention_days) + " days");
    }
    if (SecondsKey(summary.created_at) >= cutoff) {
      item.reasons.push_back("created within " + std::to_string(options.retention_days) + " days");
    }
    item.kept = !item.reasons.empty();
    if (item.kept) kept.insert(summary.deployment_id);
    plan.deployments.push_back(std::move(item));
  }

  // What an active or kept deployment uses: the bound relations, each kept deployment's relations and recorded
  // objects (its no_op ones name other deployments' relations), then, to a fixed point, the materialized views writing
  // to a protected table and the relations a protected materialized view reads.
  std::set<std::string> used;
  for (const LiveBinding& binding : inventory.bindings) {
    std::optional<std::string> id = BoundDeployment(binding);
    if (!id) continue;
    if (!obsolete(binding.logical)) {
      used.insert(*binding.physical);
      continue;
    }
    CatalogObject view;
    view.name = binding.logical;
    view.type = CatalogObjectType::kView;
    plan.drops.push_back(
        JanitorDrop{*id, binding.logical, view.type, DropStatement(inventory.name_space, view, capabilities, dialect),
                    false, "", true});
  }
  for (const DeploymentSummary& summary : inventory.deployments) {
    if (kept.count(summary.deployment_id) == 0) continue;
    for (const CatalogObject& relation : summary.relations) used.insert(relation.name);
    for (const DeploymentObject& object : summary.objects) used.insert(object.physical);
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const CatalogObject& view : inventory.catalog) {
      if (view.type != CatalogObjectType::kMaterializedView || !view.target) continue;
      if (used.count(*view.target) > 0 && used.insert(view.name).second) grew = true;
      if (used.count(view.name) == 0) continue;
      for (const CatalogObject& source : inventory.catalog) {
        if (DeploymentIdOfRelation(source.name) && Mentions(view.definition, source.name) &&
            used.insert(source.name).second) {
          grew = true;
        }
      }
    }
  }

  for (JanitorDeployment& item : plan.deployments) {
    if (item.kept) continue;
    for (const CatalogObject& relation : inventory.Find(item.deployment_id)->relations) {
      if (used.count(relation.name) > 0) {
        item.protected_objects.push_back(relation.name);
        continue;
      }
      plan.drops.push_back(JanitorDrop{item.deployment_id, relation.name, relation.type,
                                       DropStatement(inventory.name_space, relation, capabilities, dialect), false,
                                       ""});
    }
  }
  std::stable_sort(plan.drops.begin(), plan.drops.end(), [](const JanitorDrop& a, const JanitorDrop& b) {
    return std::make_tuple(!a.obsolete_binding, DropRank(a.type), a.name) <
           std::make_tuple(!b.obsolete_binding, DropRank(b.type), b.name);
  });
  return plan;
}

void ApplyJanitor(Warehouse& warehouse, JanitorPlan& plan) {
  std::set<std::string> obsolete;
  for (const JanitorDrop& drop : plan.drops) {
    if (drop.obsolete_binding) obsolete.insert(drop.name);
  }
  std::set<std::string> bound_relations;
  std::set<std::string> bound_deployments;
  for (const LiveBinding& binding : DeploymentMetadata(warehouse).Bindings(plan.name_space)) {
    if (obsolete.count(binding.logical) > 0) continue;  // dropped first, below
    if (std::optional<std::string> id = BoundDeployment(binding)) {
      bound_relations.insert(*binding.physical);
      bound_deployments.insert(*id);
    }
  }
  for (JanitorDrop& drop : plan.drops) {
    if (!drop.obsolete_binding &&
        (bound_relations.count(drop.name) > 0 || bound_deployments.count(drop.deployment_id) > 0)) {
      drop.skipped = "deployment " + drop.deployment_id + " became active";
      continue;
    }
    warehouse.Execute(drop.statement);
    drop.dropped = true;
  }
}

// ---- Gate ---------------------------------------------------------------------------------------------------------

void RequireVirtualProject(const Definitions& definitions, const std::string& command) {
  if (VirtualNamespaceOf(definitions, {})) return;
  throw Error(Diagnostic{"SLU-DEPLOY-046",
                         "`" + command + "` works on staged deployments: the project has no virtual pipeline",
                         {},
                         "set mode = \"virtual\" in a pipeline.toml, or [defaults] pipeline_mode = \"virtual\"",
                         {}});
}

}  // namespace sluice
