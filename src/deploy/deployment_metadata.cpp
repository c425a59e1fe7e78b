#include "deploy/deployment_metadata.hpp"

#include <algorithm>
#include <regex>

#include "core/virtual_names.hpp"
#include "sql/dialect.hpp"
#include "sql/sluice_ddl.hpp"

namespace sluice {

namespace {

constexpr const char* kSchema = "_sluice";

struct Column {
  const char* name;
  bool nullable;
};

// Every column is text: rows are written and read as text on both engines, and the values are ids, names, JSON and
// ISO-8601 times (which sort as text).
const std::vector<Column> kDeploymentColumns = {
    {"deployment_id", false},    {"name_space", false},   {"state", false},
    {"plan_fingerprint", false}, {"lineage_mode", false}, {"boundary_time", false},
    {"plan_json", false},        {"recorded_at", false},  {"tool_version", false}};
const std::vector<Column> kObjectColumns = {
    {"deployment_id", false}, {"kind", false},        {"name_space", false},   {"logical", false},
    {"object_type", false},   {"physical", false},    {"model", false},        {"action", false},
    {"is_root", false},       {"fingerprint", false}, {"columns_json", false}, {"canonical_query", false},
    {"recorded_at", false}};
const std::vector<Column> kBoundaryColumns = {
    {"deployment_id", false},  {"name_space", false}, {"root", false},        {"anchor", false},     {"mode", false},
    {"partition_value", true}, {"lower_value", true}, {"cutoff_value", true}, {"captured_at", false}};
const std::vector<Column> kPublicationColumns = {
    {"publication_id", false}, {"deployment_id", false}, {"operation", false}, {"previous_deployment_id", false},
    {"name_space", false},     {"logical", false},       {"physical", false},  {"published_at", false}};

struct Table {
  const char* name;
  const std::vector<Column>* columns;
  const char* order_by;  // what rows are read back in
};

const Table kDeployments{"deployments", &kDeploymentColumns, "recorded_at, deployment_id"};
const Table kObjects{"deployment_objects", &kObjectColumns, "recorded_at, deployment_id, logical"};
const Table kBoundaries{"deployment_boundaries", &kBoundaryColumns,
                        "captured_at, deployment_id, root, partition_value"};
const Table kPublications{"publications", &kPublicationColumns, "published_at, publication_id, logical"};

std::string ColumnList(const Table& table) {
  std::string list;
  for (const Column& column : *table.columns) list += (list.empty() ? "" : ", ") + std::string(column.name);
  return list;
}

using Values = std::vector<std::optional<std::string>>;

}  // namespace

std::string DeploymentStateName(DeploymentState state) {
  switch (state) {
    case DeploymentState::kPlanned:
      return "planned";
    case DeploymentState::kBackfilled:
      return "backfilled";
    case DeploymentState::kFailed:
      return "failed";
  }
  return "planned";
}

namespace {

DeploymentState ParseState(const std::string& text) {
  if (text == "backfilled") return DeploymentState::kBackfilled;
  if (text == "failed") return DeploymentState::kFailed;
  return DeploymentState::kPlanned;
}

std::string Qualified(Warehouse& warehouse, const Table& table) {
  return warehouse.QualifiedName(Relation{kSchema, table.name});
}

void CreateTable(Warehouse& warehouse, const Table& table) {
  std::vector<sql::TextColumn> columns;
  for (const Column& column : *table.columns) columns.push_back({std::string(column.name), column.nullable});
  warehouse.Execute(sql::CreateTextTable(warehouse.dialect(), Qualified(warehouse, table), columns, {"name_space"}));
}

std::string InsertSql(Warehouse& warehouse, const Table& table, const std::vector<Values>& rows) {
  const sql::Dialect dialect = warehouse.dialect();
  std::string values;
  for (const Values& row : rows) {
    std::string tuple;
    for (const std::optional<std::string>& value : row) {
      tuple += (tuple.empty() ? "" : ", ") + (value ? sql::QuoteString(dialect, *value) : std::string("NULL"));
    }
    values += (values.empty() ? "(" : ", (") + tuple + ")";
  }
  return "INSERT INTO " + Qualified(warehouse, table) + " (" + ColumnList(table) + ") VALUES " + values;
}

void Insert(Warehouse& warehouse, const Table& table, const std::vector<Values>& rows) {
  if (!rows.empty()) warehouse.Execute(InsertSql(warehouse, table, rows));
}

std::vector<Values> Select(Warehouse& warehouse, const Table& table, const std::string& name_space) {
  Rows rows = warehouse.Query("SELECT " + ColumnList(table) + " FROM " + Qualified(warehouse, table) +
                              " WHERE name_space = " + sql::QuoteString(warehouse.dialect(), name_space) +
                              " ORDER BY " + table.order_by);
  return rows.rows;
}

std::string Text(const std::optional<std::string>& value) { return value.value_or(""); }

}  // namespace

bool DeploymentMetadata::TablesExist() {
  if (tables_exist_ && *tables_exist_) return true;
  tables_exist_ = !warehouse_.CatalogOf(std::vector<Relation>{Relation{kSchema, kPublications.name}}).empty();
  return *tables_exist_;
}

void DeploymentMetadata::EnsureTables() {
  if (tables_exist_ && *tables_exist_) return;
  warehouse_.EnsureSchema(kSchema);
  // publications last: TablesExist looks for it, so a kill in between leaves the others to be created again.
  for (const Table* table : {&kDeployments, &kObjects, &kBoundaries, &kPublications}) CreateTable(warehouse_, *table);
  tables_exist_ = true;
}

void DeploymentMetadata::Append(const DeploymentRow& row) {
  EnsureTables();
  Insert(warehouse_, kDeployments,
         {{row.deployment_id, row.name_space, DeploymentStateName(row.state), row.plan_fingerprint, row.lineage_mode,
           row.boundary_time, row.plan_json, row.recorded_at, row.tool_version}});
}

void DeploymentMetadata::Append(const std::vector<ObjectRow>& rows) {
  EnsureTables();
  std::vector<Values> values;
  for (const ObjectRow& row : rows) {
    values.push_back({row.deployment_id, row.kind, row.name_space, row.logical, row.object_type, row.physical,
                      row.model, row.action, std::string(row.is_root ? "1" : "0"), row.fingerprint, row.columns_json,
                      row.canonical_query, row.recorded_at});
  }
  Insert(warehouse_, kObjects, values);
}

void DeploymentMetadata::Append(const std::vector<BoundaryRow>& rows) {
  EnsureTables();
  std::vector<Values> values;
  for (const BoundaryRow& row : rows) {
    values.push_back({row.deployment_id, row.name_space, row.root, row.anchor, row.mode, row.partition, row.lower,
                      row.cutoff, row.captured_at});
  }
  Insert(warehouse_, kBoundaries, values);
}

namespace {

std::vector<Values> PublicationValues(const std::vector<PublicationRow>& rows) {
  std::vector<Values> values;
  for (const PublicationRow& row : rows) {
    values.push_back({row.publication_id, row.deployment_id, row.operation, row.previous_deployment_id, row.name_space,
                      row.logical, row.physical, row.published_at});
  }
  return values;
}

}  // namespace

void DeploymentMetadata::Append(const std::vector<PublicationRow>& rows) {
  EnsureTables();
  Insert(warehouse_, kPublications, PublicationValues(rows));
}

std::string DeploymentMetadata::InsertStatement(const std::vector<PublicationRow>& rows) const {
  return InsertSql(warehouse_, kPublications, PublicationValues(rows));
}

std::vector<DeploymentRow> DeploymentMetadata::Deployments(const std::string& name_space) {
  std::vector<DeploymentRow> out;
  if (!TablesExist()) return out;
  for (const Values& v : Select(warehouse_, kDeployments, name_space)) {
    out.push_back({Text(v[0]), Text(v[1]), ParseState(Text(v[2])), Text(v[3]), Text(v[4]), Text(v[5]), Text(v[6]),
                   Text(v[7]), Text(v[8])});
  }
  return out;
}

std::vector<ObjectRow> DeploymentMetadata::Objects(const std::string& name_space) {
  std::vector<ObjectRow> out;
  if (!TablesExist()) return out;
  for (const Values& v : Select(warehouse_, kObjects, name_space)) {
    out.push_back({Text(v[0]), Text(v[1]), Text(v[2]), Text(v[3]), Text(v[4]), Text(v[5]), Text(v[6]), Text(v[7]),
                   Text(v[8]) == "1", Text(v[9]), Text(v[10]), Text(v[11]), Text(v[12])});
  }
  return out;
}

std::vector<BoundaryRow> DeploymentMetadata::Boundaries(const std::string& name_space) {
  std::vector<BoundaryRow> out;
  if (!TablesExist()) return out;
  for (const Values& v : Select(warehouse_, kBoundaries, name_space)) {
    out.push_back({Text(v[0]), Text(v[1]), Text(v[2]), Text(v[3]), Text(v[4]), v[5], v[6], v[7], Text(v[8])});
  }
  return out;
}

std::vector<PublicationRow> DeploymentMetadata::Publications(const std::string& name_space) {
  std::vector<PublicationRow> out;
  if (!TablesExist()) return out;
  for (const Values& v : Select(warehouse_, kPublications, name_space)) {
    out.push_back({Text(v[0]), Text(v[1]), Text(v[2]), Text(v[3]), Text(v[4]), Text(v[5]), Text(v[6]), Text(v[7])});
  }
  return out;
}

std::vector<LiveBinding> DeploymentMetadata::Bindings(const std::string& name_space) {
  return BindingsIn(warehouse_.CatalogOf(name_space), name_space);
}

std::vector<LiveBinding> BindingsIn(const std::vector<CatalogEntry>& catalog, const std::string& name_space) {
  std::vector<LiveBinding> out;
  for (const CatalogEntry& view : catalog) {
    if (view.kind != RelationKind::kView || view.relation.name_space != name_space) continue;
    if (SplitPhysicalName(view.relation.name)) continue;  // a deployment's own view (view__x__<id>), not a stable one
    LiveBinding binding;
    binding.name_space = name_space;
    binding.logical = view.relation.name;
    binding.definition = view.definition;
    binding.physical = SelectStarTarget(binding.definition);
    if (binding.physical) {
      if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(*binding.physical);
          parts && parts->logical == binding.logical) {
        binding.deployment_id = parts->deployment_id;
      }
    }
    out.push_back(std::move(binding));
  }
  return out;
}

std::map<std::string, std::string> BoundPhysicals(const std::vector<LiveBinding>& bindings) {
  std::map<std::string, std::string> bound;
  for (const LiveBinding& binding : bindings) {
    if (binding.physical) bound[binding.logical] = *binding.physical;
  }
  return bound;
}

std::map<std::string, DeploymentRow> LatestDeploymentStates(const std::vector<DeploymentRow>& rows) {
  // Oldest first; rows recorded in the same millisecond (ClickHouse returns them in any order) by how far the state
  // goes: planned, then failed or backfilled.
  std::vector<const DeploymentRow*> ordered;
  for (const DeploymentRow& row : rows) ordered.push_back(&row);
  std::stable_sort(ordered.begin(), ordered.end(), [](const DeploymentRow* a, const DeploymentRow* b) {
    if (a->recorded_at != b->recorded_at) return a->recorded_at < b->recorded_at;
    return (a->state != DeploymentState::kPlanned) < (b->state != DeploymentState::kPlanned);
  });
  std::map<std::string, DeploymentRow> latest;
  for (const DeploymentRow* row : ordered) latest[row->deployment_id] = *row;
  return latest;
}

std::optional<std::string> SelectStarTarget(const std::string& view_query) {
  static const std::regex kSelectStar(
      R"((?:^|\s)AS\s+SELECT\s+\*\s+FROM\s+(?:[`"]?[A-Za-z0-9_]+[`"]?\s*\.\s*)?[`"]?([A-Za-z0-9_]+)[`"]?\s*;?\s*$)",
      std::regex::icase);
  static const std::regex kBare(
      R"(^\s*SELECT\s+\*\s+FROM\s+(?:[`"]?[A-Za-z0-9_]+[`"]?\s*\.\s*)?[`"]?([A-Za-z0-9_]+)[`"]?\s*;?\s*$)",
      std::regex::icase);
  std::smatch match;
  if (std::regex_search(view_query, match, kSelectStar) || std::regex_search(view_query, match, kBare)) {
    return match[1].str();
  }
  return std::nullopt;
}

}  // namespace sluice
