#include "deploy/desired_objects.hpp"

#include "definitions/model_sql.hpp"
#include "core/asset_key.hpp"
#include "core/virtual_names.hpp"
#include "sql/clickhouse_ddl.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

bool RendersClickHouse(const Definitions& definitions) { return definitions.project().adapter == "clickhouse"; }

}  // namespace

std::string UpstreamRelation(const Asset& upstream, bool qualified) {
  const std::string prefix = qualified ? upstream.key.name_space() + "." : "";
  if (const auto* table = std::get_if<ExternalTable>(&upstream.compute)) {
    if (qualified) return prefix + table->table_name;
    std::string aliases;
    for (const auto& [role, physical] : table->replay_columns) {
      if (role != physical) aliases += ", " + physical + " AS " + role;
    }
    if (!aliases.empty()) return "(SELECT *" + aliases + " FROM " + table->table_name + ")";
  }
  if (const auto* postgres = std::get_if<PostgresSource>(&upstream.compute); postgres && qualified) {
    return sql::RenderPostgresRelation(*postgres);
  }
  if (std::holds_alternative<KafkaSource>(upstream.compute)) return prefix + "raw__" + upstream.name();
  return prefix + upstream.relation_name;
}

std::string ReplayColumn(const Asset& upstream, const std::string& role) {
  if (const auto* table = std::get_if<ExternalTable>(&upstream.compute)) {
    if (auto physical = table->replay_columns.find(role); physical != table->replay_columns.end()) {
      return IsIdentifier(physical->second) ? physical->second
                                            : sql::QuoteIdentifier(sql::Dialect::kClickHouse, physical->second);
    }
  }
  return role;
}

std::string RoleColumnsRenamed(const Asset& upstream, const std::string& condition) {
  const auto* table = std::get_if<ExternalTable>(&upstream.compute);
  if (table == nullptr) return condition;
  std::vector<sql::SpanReplacement> renames;
  for (const sql::Token& token : sql::TokenizeSignificant(condition, sql::Dialect::kClickHouse)) {
    if (token.kind != sql::TokenKind::kWord) continue;
    const std::string physical = ReplayColumn(upstream, std::string(token.text));
    if (physical != token.text) renames.push_back({token.begin, token.end, physical});
  }
  return sql::ReplaceSpans(condition, renames);
}

std::optional<std::string> UpstreamTable(const Asset& upstream) {
  if (const auto* table = std::get_if<ExternalTable>(&upstream.compute)) return table->table_name;
  if (std::holds_alternative<PostgresSource>(upstream.compute)) return std::nullopt;
  if (std::holds_alternative<KafkaSource>(upstream.compute)) return "raw__" + upstream.name();
  return upstream.relation_name;
}

std::string ResolvedModelQuery(const Definitions& definitions, const Asset& model, const ReferenceOverride& override) {
  return RenderModelSql(std::get<SqlCompute>(model.compute), [&](const ResolvedReference& reference) {
    if (override) {
      if (std::optional<std::string> text = override(reference)) return *text;
    }
    return UpstreamRelation(*definitions.Find(reference.upstream), true);
  });
}

const AssetDependency* DrivingInput(const Asset& model) {
  for (const AssetDependency& dep : model.deps) {
    if (dep.edge == EdgeType::kDrivingInput) return &dep;
  }
  return nullptr;
}

std::string MaterializedViewName(const Asset& asset) {
  if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(asset.relation_name)) {
    return "mv__" + asset.name() + "__" + parts->deployment_id;
  }
  return "mv__" + asset.name();
}

namespace {

std::string ResolvedQuery(const Definitions& definitions, const Asset& model, bool qualified) {
  if (qualified) return ResolvedModelQuery(definitions, model);
  return RenderModelSql(
      std::get<SqlCompute>(model.compute),
      [&](const ResolvedReference& reference) { return UpstreamRelation(*definitions.Find(reference.upstream), false); },
      {}, RoleColumns::kCanonical);
}

sql::ModelStorage ModelStorageOf(const SqlCompute& model) {
  sql::ModelStorage storage{{}, model.storage.engine, model.storage.order_by, model.storage.partition_by,
                            model.storage.ttl, model.storage.settings};
  for (const ModelColumn& column : model.columns) {
    storage.columns.push_back({std::string(column.name), std::string(column.type), std::nullopt});
  }
  return storage;
}

}  // namespace

std::string ModelQueryPath(const Asset& model) {
  return "compiled/models/" + model.pipeline + "/" + model.name() + ".sql";
}

std::string CanonicalSql(const Definitions& definitions, const Asset& model) {
  return ResolvedQuery(definitions, model, false) + "\n";
}

std::vector<CompiledResource> ModelResources(const Definitions& definitions, const Asset& model,
                                             sql::SecretHandling secrets) {
  if (!RendersClickHouse(definitions)) return {};
  const auto& compute = std::get<SqlCompute>(model.compute);
  const std::string& db = model.key.name_space();
  const std::string base = "compiled/resources/models/" + model.pipeline + "/" + model.name();
  const std::string query = ResolvedQuery(definitions, model, true);
  if (compute.kind == ModelKind::kView) {
    return {{"view", model.relation_name, base + ".view.sql", sql::RenderView(db, model.relation_name, query) + "\n"}};
  }
  const std::string table =
      sql::RenderModelTable(db, model.relation_name, ModelStorageOf(compute), secrets);
  const std::string mv_name = MaterializedViewName(model);
  const PostgresSource* postgres = nullptr;
  for (const ResolvedReference& ref : compute.references) {
    if (ref.edge == EdgeType::kDrivingInput) {
      postgres = std::get_if<PostgresSource>(&definitions.Find(ref.upstream)->compute);
    }
  }
  const std::string mv = postgres && postgres->refresh
                             ? sql::RenderRefreshableMaterializedView(db, mv_name, model.relation_name, query,
                                                                      *postgres->refresh, postgres->append)
                             : sql::RenderMaterializedView(db, mv_name, model.relation_name, query);
  return {{"table", model.relation_name, base + ".table.sql", table + "\n"},
          {"materialized_view", mv_name, base + ".mv.sql", mv + "\n"}};
}

std::vector<CompiledResource> SourceResources(const Definitions& definitions, const Asset& source,
                                              sql::SecretHandling secrets, sql::CreateMode mode) {
  const auto* kafka = std::get_if<KafkaSource>(&source.compute);
  if (!RendersClickHouse(definitions) || kafka == nullptr) return {};
  std::vector<CompiledResource> files;
  for (const sql::ClickHouseResource& resource :
       sql::RenderKafkaSourceResources(source.key.name_space(), source.name(), *kafka, secrets, mode)) {
    files.push_back({sql::ClickHouseResourceKindName(resource.kind), resource.name,
                     "compiled/resources/sources/" + source.name() + "/" + resource.name + ".sql", resource.sql + "\n"});
  }
  return files;
}

}  // namespace sluice
