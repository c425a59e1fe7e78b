#include "project/artifacts.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <tuple>

#include "core/content_hash.hpp"
#include "core/file_system.hpp"
#include "core/json_writer.hpp"
#include "core/parallel_for.hpp"
#include "core/phase_timer.hpp"
#include "core/sha256.hpp"
#include "project/artifact_publisher.hpp"
#include "project/clickhouse_resources.hpp"

namespace sluice {

namespace {

std::string ModelQueryPath(const Asset& asset) {
  return "compiled/models/" + asset.pipeline + "/" + asset.name() + ".sql";
}

bool RendersClickHouse(const Project& project) { return project.target.adapter == "clickhouse"; }

// What a reference becomes: the upstream's relation — unqualified in canonical SQL, `<db>.` qualified in
// rendered DDL. An adopted table whose replay role columns have other physical names becomes a subquery
// exposing the canonical `_replay_*` names; a Kafka source its raw landing table; a Postgres source the
// `postgresql(...)` table function (its password left as a placeholder).
std::string UpstreamRelation(const Asset& upstream, bool qualified) {
  std::string prefix = qualified ? upstream.key.name_space() + "." : "";
  if (const auto* table = std::get_if<ExternalTable>(&upstream.compute)) {
    std::string aliases;
    for (const auto& [role, physical] : table->replay_columns) {
      if (role != physical) aliases += ", " + physical + " AS " + role;
    }
    if (!aliases.empty()) return "(SELECT *" + aliases + " FROM " + prefix + table->table_name + ")";
  }
  if (const auto* postgres = std::get_if<PostgresSource>(&upstream.compute); postgres && qualified) {
    return RenderPostgresRelation(*postgres);
  }
  if (std::holds_alternative<KafkaSource>(upstream.compute)) return prefix + "raw__" + upstream.name();
  return prefix + upstream.relation_name;
}

std::string ResolvedQuery(const Definitions& definitions, const Asset& asset, bool qualified) {
  const auto& compute = std::get<SqlCompute>(asset.compute);
  std::string out;
  size_t at = 0;
  for (const ResolvedReference& ref : compute.references) {
    out.append(compute.body, at, ref.call.begin - at);
    const Asset& upstream = *definitions.Find(ref.upstream);
    out += UpstreamRelation(upstream, qualified);
    at = ref.call.end;
  }
  out.append(compute.body, at, std::string::npos);
  size_t first = out.find_first_not_of(" \t\r\n");
  size_t last = out.find_last_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  out = out.substr(first, last - first + 1);
  while (!out.empty() && out.back() == ';') out.pop_back();
  return out;
}

struct ResourceFile {
  std::string kind;  // managed_source | table | materialized_view | view
  std::string name;
  std::string path;
  std::string sql;
  size_t published = ArtifactPublication::kNotPublished;  // its position when published as rendered: `sql` dropped
};

std::vector<ResourceFile> ModelResources(const Project& project, const Asset& asset) {
  if (!RendersClickHouse(project)) return {};
  const auto& compute = std::get<SqlCompute>(asset.compute);
  const std::string& db = asset.key.name_space();
  std::string base = "compiled/resources/models/" + asset.pipeline + "/" + asset.name();
  std::string query = ResolvedQuery(project.definitions, asset, true);
  if (compute.kind == ModelKind::kView) {
    return {{"view", asset.relation_name, base + ".view.sql", RenderView(db, asset.relation_name, query) + "\n"}};
  }
  std::vector<ColumnDefinition> columns;
  for (const auto& [name, type] : compute.columns)
    columns.push_back({std::string(name), std::string(type), std::nullopt});
  std::string table =
      RenderModelTable(db, asset.relation_name, ModelStorageOf(compute.storage, columns), SecretHandling::kRedact);
  std::string mv_name = "mv__" + asset.name();
  const PostgresSource* postgres = nullptr;
  for (const ResolvedReference& ref : compute.references) {
    if (ref.edge != EdgeType::kDrivingInput) continue;
    postgres = std::get_if<PostgresSource>(&project.definitions.Find(ref.upstream)->compute);
  }
  std::string mv = postgres && postgres->refresh
                       ? RenderRefreshableMaterializedView(db, mv_name, asset.relation_name, query, *postgres->refresh,
                                                           postgres->append)
                       : RenderMaterializedView(db, mv_name, asset.relation_name, query);
  return {{"table", asset.relation_name, base + ".table.sql", table + "\n"},
          {"materialized_view", mv_name, base + ".mv.sql", mv + "\n"}};
}

std::vector<ResourceFile> SourceResources(const Project& project, const Asset& asset) {
  const auto* kafka = std::get_if<KafkaSource>(&asset.compute);
  if (!RendersClickHouse(project) || kafka == nullptr) return {};
  std::vector<ResourceFile> files;
  for (const ClickHouseResource& resource :
       RenderKafkaSourceResources(asset.key.name_space(), asset.name(), *kafka, SecretHandling::kRedact)) {
    files.push_back({ClickHouseResourceKindName(resource.kind), resource.name,
                     "compiled/resources/sources/" + asset.name() + "/" + resource.name + ".sql", resource.sql + "\n"});
  }
  return files;
}

void WriteResources(JsonWriter& json, const std::vector<ResourceFile>& resources) {
  json.BeginArray();
  for (const ResourceFile& resource : resources) {
    json.BeginObject();
    json.Key("kind");
    json.String(resource.kind);
    json.Key("name");
    json.String(resource.name);
    json.Key("path");
    json.String(resource.path);
    json.EndObject();
  }
  json.EndArray();
}

std::string LineageMode(const Project& project, const std::optional<std::string>& source) {
  if (source) {
    for (const SourceDeclaration& declaration : project.sources) {
      if (declaration.name != *source) continue;
      if (const auto* table = std::get_if<ExternalTable>(&declaration.compute)) return table->replay_mode;
    }
  }
  return "offsets";  // StreamBuild's fallback when no mode applies
}

// manifest.models[<name>], rendered at the depth it has there.
std::string ModelJson(const Project& project, const Asset& asset, const std::vector<ResourceFile>& resources) {
  constexpr int kDepthInManifest = 2;
  const auto& sql = std::get<SqlCompute>(asset.compute);
  std::string out;
  JsonWriter json(out, 2, kDepthInManifest);
  json.BeginObject();
  json.Key("logical_key");
  json.String("model:" + asset.name());
  json.Key("name");
  json.String(asset.name());
  json.Key("pipeline");
  json.String(asset.pipeline);
  json.Key("query_path");
  json.String(ModelQueryPath(asset));
  json.Key("refs");
  json.BeginArray();
  for (const ResolvedReference& ref : sql.references) {
    json.BeginObject();
    json.Key("edge_type");
    json.String(EdgeTypeName(ref.edge));
    json.Key("kind");
    json.String(ref.call.kind == sql::ReferenceKind::kSource ? "source" : "ref");
    json.Key("name");
    json.String(ref.call.name);
    json.Key("ref_type");
    if (ref.call.ref_type) {
      json.String(*ref.call.ref_type == sql::RefType::kMutable ? "mutable" : "reference");
    } else {
      json.Null();
    }
    json.EndObject();
  }
  json.EndArray();
  json.Key("relation_name");
  json.String(asset.relation_name);
  json.Key("resources");
  WriteResources(json, resources);
  json.Key("source");
  if (sql.kind == ModelKind::kView) {
    json.Null();
    json.Key("spec");
    json.Null();
    json.EndObject();
    return out;
  }
  const Pipeline* pipeline = project.definitions.FindPipeline(asset.pipeline);
  json.StringOrNull(pipeline ? pipeline->source : std::nullopt);
  json.Key("spec");
  json.BeginObject();
  json.Key("columns");
  json.BeginArray();
  for (const auto& [name, type] : sql.columns) {
    json.BeginObject();
    json.Key("default");
    json.Null();
    json.Key("name");
    json.String(name);
    json.Key("type");
    json.String(type);
    json.EndObject();
  }
  json.EndArray();
  json.Key("engine");
  json.String(sql.storage.engine);
  json.Key("order_by");
  json.StringArray(sql.storage.order_by);
  json.Key("partition_by");
  json.StringOrNull(sql.storage.partition_by);
  json.Key("settings");
  std::map<std::string, std::string> settings;  // sorted; a repeated key keeps its last value
  for (const auto& [key, value] : sql.storage.settings) settings[key] = value;
  json.BeginObject();
  for (const auto& [key, value] : settings) {
    json.Key(key);
    json.String(value);
  }
  json.EndObject();
  json.Key("ttl");
  json.StringOrNull(sql.storage.ttl);
  json.EndObject();
  json.EndObject();
  return out;
}

std::vector<const Asset*> ModelsByName(const Definitions& definitions) {
  std::vector<const Asset*> models;
  for (const Asset& asset : definitions.assets()) {
    if (!asset.is_source()) models.push_back(&asset);
  }
  std::sort(models.begin(), models.end(), [](const Asset* a, const Asset* b) { return a->name() < b->name(); });
  return models;
}

struct DagNode {
  std::string id;
  std::string name;
  const char* type;
};

// An edge: its type (an index into DagContent::edge_types, which are in name order), its ends' ids (in a node or
// in a check edge of the project), and the ranks of those ids in string order: edges sort by integers into the
// order of their (edge_type, from_id, to_id) strings.
struct DagEdge {
  uint32_t type;
  uint32_t from_rank;
  uint32_t to_rank;
  const std::string* from;
  const std::string* to;
};

struct DagContent {
  std::vector<DagNode> nodes;
  std::vector<std::string> edge_types;  // sorted
  std::vector<DagEdge> edges;           // sorted by (type, from id, to id), each once
};

DagContent DagOf(const Project& project, const std::vector<const Asset*>& models) {
  const Definitions& definitions = project.definitions;
  const CompiledChecks& checks = project.checks;
  DagContent dag;
  std::vector<DagNode>& nodes = dag.nodes;
  nodes.reserve(project.sources.size() + models.size() + checks.tests.size() + checks.audits.size());
  for (const SourceDeclaration& source : project.sources)
    nodes.push_back({"source:" + source.name, source.name, "source"});
  const size_t first_model_node = nodes.size();
  for (const Asset* model : models) nodes.push_back({"model:" + model->name(), model->name(), "model"});
  for (const TestSpec& test : checks.tests) nodes.push_back({"test:" + test.name, test.name, "test"});
  for (const AuditSpec& audit : checks.audits) nodes.push_back({"audit:" + audit.name, audit.name, "audit"});

  // The node of each asset, by its index among the definitions' assets.
  const Asset* const first_asset = definitions.assets().data();
  std::vector<uint32_t> node_of_asset(definitions.assets().size(), UINT32_MAX);
  for (size_t m = 0; m < models.size(); ++m) node_of_asset[models[m] - first_asset] = first_model_node + m;
  for (size_t s = 0; s < first_model_node; ++s) {
    // A source's name is no model's (SLU-PROJECT-004), so the asset of that name is the source.
    if (const Asset* source = definitions.FindByName(nodes[s].name)) node_of_asset[source - first_asset] = s;
  }

  // Every id an edge names, ranked in string order: the nodes' and then both ends of each check edge.
  std::vector<const std::string*> ids;
  ids.reserve(nodes.size() + 2 * checks.edges.size());
  for (const DagNode& node : nodes) ids.push_back(&node.id);
  for (const CheckEdge& edge : checks.edges) {
    ids.push_back(&edge.from_id);
    ids.push_back(&edge.to_id);
  }
  std::vector<uint32_t> order(ids.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  ParallelStableSort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return *ids[a] < *ids[b]; });
  std::vector<uint32_t> rank(ids.size());
  for (size_t k = 0; k < order.size(); ++k) {
    const bool same = k > 0 && *ids[order[k]] == *ids[order[k - 1]];
    rank[order[k]] = same ? rank[order[k - 1]] : static_cast<uint32_t>(k);
  }

  std::vector<std::string>& types = dag.edge_types;
  for (EdgeType type : {EdgeType::kDrivingInput, EdgeType::kReference, EdgeType::kMutableReference}) {
    types.push_back(EdgeTypeName(type));
  }
  for (CheckEdgeType type : {CheckEdgeType::kTest, CheckEdgeType::kAudit}) types.push_back(CheckEdgeTypeName(type));
  std::sort(types.begin(), types.end());
  types.erase(std::unique(types.begin(), types.end()), types.end());
  auto type_index = [&](const std::string& name) {
    return static_cast<uint32_t>(std::lower_bound(types.begin(), types.end(), name) - types.begin());
  };
  const uint32_t model_edge_types[] = {type_index(EdgeTypeName(EdgeType::kDrivingInput)),
                                       type_index(EdgeTypeName(EdgeType::kReference)),
                                       type_index(EdgeTypeName(EdgeType::kMutableReference))};

  for (size_t m = 0; m < models.size(); ++m) {
    const size_t to = first_model_node + m;
    for (const AssetDependency& dep : models[m]->deps) {
      const size_t from = node_of_asset[definitions.Find(dep.upstream) - first_asset];
      if (from == UINT32_MAX) throw std::logic_error("no DAG node for " + dep.upstream.ToString());
      dag.edges.push_back(DagEdge{model_edge_types[static_cast<size_t>(dep.edge)], rank[from], rank[to],
                                  &nodes[from].id, &nodes[to].id});
    }
  }
  for (size_t e = 0; e < checks.edges.size(); ++e) {
    const CheckEdge& edge = checks.edges[e];
    const size_t slot = nodes.size() + 2 * e;
    dag.edges.push_back(
        DagEdge{type_index(CheckEdgeTypeName(edge.type)), rank[slot], rank[slot + 1], &edge.from_id, &edge.to_id});
  }
  auto key = [](const DagEdge& edge) { return std::tie(edge.type, edge.from_rank, edge.to_rank); };
  ParallelStableSort(dag.edges.begin(), dag.edges.end(),
                     [&](const DagEdge& a, const DagEdge& b) { return key(a) < key(b); });
  dag.edges.erase(std::unique(dag.edges.begin(), dag.edges.end(),
                              [&](const DagEdge& a, const DagEdge& b) { return key(a) == key(b); }),
                  dag.edges.end());
  return dag;
}

void WriteDagNodes(JsonWriter& json, const DagContent& dag) {
  json.BeginArray();
  for (const DagNode& node : dag.nodes) {
    json.BeginObject();
    json.Key("id");
    json.String(node.id);
    json.Key("name");
    json.String(node.name);
    json.Key("type");
    json.String(node.type);
    json.EndObject();
  }
  json.EndArray();
}

void WriteDagEdges(JsonWriter& json, const DagContent& dag) {
  json.BeginArray();
  for (const DagEdge& edge : dag.edges) {
    json.BeginObject();
    json.Key("edge_type");
    json.String(dag.edge_types[edge.type]);
    json.Key("from_id");
    json.String(*edge.from);
    json.Key("to_id");
    json.String(*edge.to);
    json.EndObject();
  }
  json.EndArray();
}

std::string RenderDagFile(const Project& project, const DagContent& dag) {
  std::string out;
  JsonWriter json(out);
  json.BeginObject();
  json.Key("edges");
  WriteDagEdges(json, dag);
  json.Key("macros");
  json.BeginArray();
  for (const MacroDefinition& macro : project.macros->macros()) json.String(macro.name);
  json.EndArray();
  json.Key("metadata");
  json.BeginObject();
  json.Key("dag_version");
  json.Int(1);
  json.Key("tool");
  json.String("sluice");
  json.EndObject();
  json.Key("nodes");
  WriteDagNodes(json, dag);
  json.EndObject();
  out += '\n';
  return out;
}

// The DAG's identity: a digest of its nodes and edges in compact JSON.
std::string DagIdentity(const DagContent& dag) {
  std::string compact;
  JsonWriter nodes(compact, -1);
  WriteDagNodes(nodes, dag);
  JsonWriter edges(compact, -1);
  WriteDagEdges(edges, dag);
  return Sha256Hex(compact);
}

std::string AssetKindName(const Asset& asset) {
  return std::visit(
      [](const auto& compute) -> std::string {
        using T = std::decay_t<decltype(compute)>;
        if constexpr (std::is_same_v<T, SqlCompute>)
          return compute.kind == ModelKind::kView ? "view" : "table";
        else if constexpr (std::is_same_v<T, SeedCompute>)
          return "seed";
        else if constexpr (std::is_same_v<T, ExternalTable>)
          return "stream_table";
        else if constexpr (std::is_same_v<T, KafkaSource>)
          return "kafka";
        else
          return "postgres";
      },
      asset.compute);
}

void WriteNameOrigin(JsonWriter& json, const Project& project, const SourceDeclaration& source) {
  const auto* kafka = std::get_if<KafkaSource>(&source.compute);
  const auto& macro = project.target.defaults.kafka_naming_macro;
  bool derived = kafka != nullptr && kafka->name_origin == "derived" && macro;
  json.BeginObject();
  json.Key("kind");
  json.String(derived ? "derived" : "declared");
  json.Key("macro");
  json.StringOrNull(derived ? macro : std::nullopt);
  json.Key("macro_fingerprint");
  json.StringOrNull(derived ? std::optional<std::string>(project.macros->MacroFingerprint(*macro)) : std::nullopt);
  json.EndObject();
}

void WriteMacros(JsonWriter& json, const Project& project) {
  std::map<std::string, const MacroDefinition*> macros;  // sorted; a repeated name keeps the last
  for (const MacroDefinition& macro : project.macros->macros()) macros[macro.name] = &macro;
  json.BeginObject();
  for (const auto& [name, macro] : macros) {
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(macro->file);
    json.Key("source");
    json.String(macro->source);
    json.EndObject();
  }
  json.EndObject();
}

void WriteAudits(JsonWriter& json, const Project& project) {
  std::map<std::string, const AuditSpec*> audits;
  for (const AuditSpec& audit : project.checks.audits) audits[audit.name] = &audit;
  json.BeginObject();
  for (const auto& [name, audit] : audits) {
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(audit->file);
    json.Key("name");
    json.String(audit->name);
    json.Key("path");
    json.String(audit->path);
    json.Key("referenced_models");
    json.StringArray(audit->referenced_models);
    json.Key("severity");
    json.String(AuditSeverityName(audit->severity));
    json.EndObject();
  }
  json.EndObject();
}

void WriteTests(JsonWriter& json, const Project& project) {
  std::map<std::string, const TestSpec*> tests;
  for (const TestSpec& test : project.checks.tests) tests[test.name] = &test;
  json.BeginObject();
  for (const auto& [name, test] : tests) {
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(test->file);
    json.Key("name");
    json.String(test->name);
    json.Key("path");
    json.String(test->path);
    json.Key("targets");
    json.StringArray(test->targets);
    json.EndObject();
  }
  json.EndObject();
}

void WritePipelines(JsonWriter& json, const Project& project) {
  const Definitions& definitions = project.definitions;
  std::map<std::string, const Pipeline*> pipelines;
  for (const Pipeline& pipeline : definitions.pipelines()) pipelines[pipeline.name] = &pipeline;
  json.BeginObject();
  for (const auto& [name, pipeline] : pipelines) {
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(pipeline->directory);
    json.Key("models");
    json.StringArray(pipeline->models);
    json.Key("name");
    json.String(pipeline->name);
    json.Key("relations");
    std::map<std::string, std::string> relations;
    for (const std::string& model : pipeline->models) relations[model] = definitions.FindByName(model)->relation_name;
    json.BeginObject();
    for (const auto& [model, relation] : relations) {
      json.Key(model);
      json.String(relation);
    }
    json.EndObject();
    json.Key("replay_lineage_mode");
    json.String(LineageMode(project, pipeline->source));
    json.Key("resolved_database");
    json.String(pipeline->name_space);
    json.Key("source_name");
    json.StringOrNull(pipeline->source);
    json.EndObject();
  }
  json.EndObject();
}

void WriteSources(JsonWriter& json, const Project& project) {
  std::map<std::string, const SourceDeclaration*> sources;
  for (const SourceDeclaration& source : project.sources) sources[source.name] = &source;
  json.BeginObject();
  for (const auto& [name, source] : sources) {
    const Asset* asset = project.definitions.FindByName(name);
    json.Key(name);
    json.BeginObject();
    json.Key("logical_key");
    json.String("source:" + name);
    json.Key("name");
    json.String(name);
    json.Key("name_origin");
    WriteNameOrigin(json, project, *source);
    json.Key("relation_name");
    json.String(asset->relation_name);
    json.Key("replay_lineage_mode");
    json.String(LineageMode(project, name));
    json.Key("resources");
    WriteResources(json, SourceResources(project, *asset));
    json.EndObject();
  }
  json.EndObject();
}

// manifest.sluice: Sluice's additions.
void WriteSluiceSection(JsonWriter& json, const Project& project, const std::vector<const Asset*>& models,
                        const std::string& dag_identity) {
  const Definitions& definitions = project.definitions;
  json.BeginObject();
  json.Key("adapter");
  json.String(project.target.adapter);
  json.Key("assets");
  std::vector<std::pair<std::string, const Asset*>> assets;
  assets.reserve(definitions.assets().size());
  for (const Asset& asset : definitions.assets()) assets.emplace_back(asset.key.ToString(), &asset);
  std::sort(assets.begin(), assets.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  assets.erase(
      std::unique(assets.begin(), assets.end(), [](const auto& a, const auto& b) { return a.first == b.first; }),
      assets.end());
  json.BeginObject();
  for (const auto& [key, asset] : assets) {
    json.Key(key);
    json.BeginObject();
    json.Key("file");
    json.String(asset->defined_at.file);
    json.Key("kind");
    json.String(AssetKindName(*asset));
    json.Key("name");
    json.String(asset->name());
    json.Key("namespace");
    json.String(asset->key.name_space());
    json.Key("relation");
    json.String(asset->key.name_space() + "." + asset->relation_name);
    json.EndObject();
  }
  json.EndObject();
  json.Key("dag_identity");
  json.String(dag_identity);
  json.Key("partitions");
  json.BeginObject();
  for (const Asset* model : models) {
    if (!model->partitions) continue;
    json.Key(model->name());
    json.BeginObject();
    json.Key("column");
    json.String(model->partitions->column);
    json.Key("kind");
    json.String("daily");
    json.Key("start_date");
    json.String(model->partitions->partitions.start_date().ToString());
    json.EndObject();
  }
  json.EndObject();
  json.Key("project");
  json.String(project.config.name);
  json.Key("seeds");
  std::map<std::string, const SourceDeclaration*> seeds;
  for (const SourceDeclaration& source : project.sources) {
    if (std::holds_alternative<SeedCompute>(source.compute)) seeds[source.name] = &source;
  }
  json.BeginObject();
  for (const auto& [name, source] : seeds) {
    const auto& seed = std::get<SeedCompute>(source->compute);
    json.Key(name);
    json.BeginObject();
    json.Key("asset");
    json.String(definitions.FindByName(name)->key.ToString());
    json.Key("columns");
    json.BeginArray();
    for (const auto& [column, type] : seed.columns) {
      json.BeginObject();
      json.Key("name");
      json.String(column);
      json.Key("type");
      json.String(type);
      json.EndObject();
    }
    json.EndArray();
    json.Key("path");
    json.String(seed.path);
    json.EndObject();
  }
  json.EndObject();
  json.Key("target");
  json.String(project.target.name);
  json.EndObject();
}

// What one model contributes: its files (rendered on a worker thread). Its manifest entry is rendered later, in
// batches, straight into the manifest (see RenderManifestFile).
struct ModelArtifacts {
  std::vector<ResourceFile> resources;  // once the files are collected, only kind, name and path remain
  std::string canonical_sql;
  size_t canonical_published = ArtifactPublication::kNotPublished;  // as ResourceFile::published
};

// Model manifest entries are rendered in parallel this many at a time and handed on at once, so neither the
// entries of all models nor the whole manifest (45 MB at 10,000 models) is ever in memory.
constexpr size_t kManifestBatch = 1024;
// The manifest's text is handed to the sink in pieces of about this size.
constexpr size_t kManifestPiece = size_t{1} << 20;

// What the manifest is made of, kept by its stream (which the publisher calls after BuildArtifacts returns).
struct ManifestInputs {
  std::vector<const Asset*> models;
  std::vector<ModelArtifacts> rendered;  // resources: kind, name and path
  // Views of the files' paths and of the publication's (both outlive the manifest's stream).
  std::vector<std::string_view> compiled_paths;
  std::string dag_identity;
};

void StreamManifest(const Project& project, const ManifestInputs& in,
                    const std::function<void(std::string_view)>& sink) {
  const std::vector<const Asset*>& models = in.models;
  std::string out;
  out.reserve(kManifestPiece + kManifestPiece / 2);
  auto hand_on = [&](bool always) {
    if (always || out.size() >= kManifestPiece) {
      sink(out);
      out.clear();
    }
  };
  JsonWriter json(out);
  json.BeginObject();
  json.Key("artifacts");
  json.BeginArray();
  json.String("manifest.json");
  json.String("streambuild_dag.json");
  for (std::string_view path : in.compiled_paths) {
    json.String(path);
    hand_on(false);
  }
  json.EndArray();
  json.Key("audits");
  WriteAudits(json, project);
  json.Key("macros");
  WriteMacros(json, project);
  json.Key("metadata");
  json.BeginObject();
  json.Key("manifest_version");
  json.Int(1);
  json.Key("tool");
  json.String("sluice");
  json.EndObject();
  json.Key("models");
  json.BeginObject();
  std::vector<std::string> entries;
  for (size_t first = 0; first < models.size(); first += kManifestBatch) {
    size_t count = std::min(kManifestBatch, models.size() - first);
    entries.resize(count);
    ParallelFor(count, [&](size_t i) {
      entries[i] = ModelJson(project, *models[first + i], in.rendered[first + i].resources);
    });
    for (size_t i = 0; i < count; ++i) {
      size_t m = first + i;
      if (m > 0 && models[m]->name() == models[m - 1]->name()) continue;
      json.Key(models[m]->name());
      json.Raw(entries[i]);
      hand_on(false);
    }
  }
  json.EndObject();
  json.Key("pipelines");
  WritePipelines(json, project);
  json.Key("sluice");
  WriteSluiceSection(json, project, models, in.dag_identity);
  json.Key("sources");
  WriteSources(json, project);
  json.Key("tests");
  WriteTests(json, project);
  json.EndObject();
  out += '\n';
  hand_on(true);
}

// Everything compile writes: the manifest as a stream (the largest file by far), the files a publication
// already holds exactly as rendered by their fingerprint only, the rest whole.
struct RenderedArtifacts {
  ArtifactFiles files;
  StreamedArtifacts streamed;
  std::vector<uint8_t> kept;  // by published position: the files published as rendered (empty: none)
};

// With a publication, a model file it already holds as rendered is fingerprinted and dropped on the rendering
// thread, whose next model then reuses the memory: an unchanged project never holds its files' contents.
RenderedArtifacts RenderArtifacts(const Project& project, const ArtifactPublication* publication) {
  if (publication != nullptr && !publication->incremental()) publication = nullptr;  // everything is written
  auto manifest = std::make_shared<ManifestInputs>();
  manifest->models = ModelsByName(project.definitions);
  const std::vector<const Asset*>& models = manifest->models;
  std::vector<ModelArtifacts>& rendered = manifest->rendered;
  rendered.resize(models.size());
  auto drop_if_published = [&](const std::string& path, std::string& contents, size_t& published) {
    published = publication->PublishedPosition(path, ArtifactFingerprint{ContentHash(contents), contents.size()});
    if (published != ArtifactPublication::kNotPublished) std::string().swap(contents);
  };
  ParallelFor(models.size(), [&](size_t m) {
    const Asset& asset = *models[m];
    ModelArtifacts& out = rendered[m];
    out.resources = ModelResources(project, asset);
    out.canonical_sql = CanonicalSql(project.definitions, asset);
    if (publication == nullptr) return;
    for (ResourceFile& resource : out.resources) drop_if_published(resource.path, resource.sql, resource.published);
    drop_if_published(ModelQueryPath(asset), out.canonical_sql, out.canonical_published);
  });
  MarkPhase("models rendered");

  RenderedArtifacts result;
  ArtifactFiles& files = result.files;
  std::vector<uint8_t>& kept = result.kept;
  if (publication != nullptr) kept.assign(publication->published_count(), 0);
  for (const Asset& asset : project.definitions.assets()) {
    if (!asset.is_source()) continue;
    for (ResourceFile& resource : SourceResources(project, asset)) files[resource.path] = std::move(resource.sql);
  }
  // A file published as rendered is marked by its position; the others are kept whole.
  auto collect = [&](std::string path, std::string& contents, size_t published) {
    if (published != ArtifactPublication::kNotPublished) {
      kept[published] = 1;
    } else {
      files[std::move(path)] = std::move(contents);
    }
    std::string().swap(contents);
  };
  for (size_t m = 0; m < models.size(); ++m) {
    for (ResourceFile& resource : rendered[m].resources) collect(resource.path, resource.sql, resource.published);
    collect(ModelQueryPath(*models[m]), rendered[m].canonical_sql, rendered[m].canonical_published);
  }
  for (const AuditSpec& audit : project.checks.audits) files[audit.path] = audit.sql;
  for (const TestSpec& test : project.checks.tests) files[test.path] = test.sql;
  // Every compiled path, in order: the map's and the publication's are sorted, so one merge lists them.
  std::vector<std::string_view>& compiled = manifest->compiled_paths;
  compiled.reserve(files.size() + kept.size());
  auto file = files.begin();
  for (size_t p = 0; p < kept.size(); ++p) {
    if (!kept[p]) continue;
    const std::string& path = publication->published_path(p);
    for (; file != files.end() && file->first < path; ++file) compiled.push_back(file->first);
    compiled.push_back(path);
  }
  for (; file != files.end(); ++file) compiled.push_back(file->first);

  DagContent dag = DagOf(project, models);
  manifest->dag_identity = DagIdentity(dag);
  files["streambuild_dag.json"] = RenderDagFile(project, dag);
  result.streamed["manifest.json"] = [&project, manifest](const std::function<void(std::string_view)>& sink) {
    StreamManifest(project, *manifest, sink);
  };
  return result;
}

}  // namespace

std::string CanonicalSql(const Definitions& definitions, const Asset& asset) {
  return ResolvedQuery(definitions, asset, false) + "\n";
}

ArtifactFiles BuildArtifacts(const Project& project) {
  RenderedArtifacts rendered = RenderArtifacts(project, nullptr);
  for (const auto& [path, stream] : rendered.streamed) rendered.files[path] = Materialize(stream);
  return std::move(rendered.files);
}

ArtifactSummary WriteArtifacts(const Project& project, const std::string& target_dir) {
  std::filesystem::path dir = target_dir.empty() ? project.root / "target" : std::filesystem::path(target_dir);
  ArtifactPublication publication(dir);  // locks the folder and reads its index
  RenderedArtifacts rendered = RenderArtifacts(project, &publication);
  MarkPhase("artifacts rendered");  // all but the manifest, which is rendered as it is fingerprinted and written
  PublishSummary published = publication.Publish(rendered.files, rendered.streamed, rendered.kept);
  MarkPhase("artifacts published");
  ArtifactSummary summary{dir.string(), project.definitions.pipelines().size(), 0, project.sources.size(), published};
  for (const Asset& asset : project.definitions.assets()) summary.models += asset.is_source() ? 0 : 1;
  return summary;
}

}  // namespace sluice
