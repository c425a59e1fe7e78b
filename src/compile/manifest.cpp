#include "compile/manifest.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "compile/json_writer.hpp"
#include "core/parallel_for.hpp"
#include "core/sha256.hpp"

namespace sluice {

namespace {

void WriteResources(JsonWriter& json, const std::vector<CompiledResource>& resources) {
  json.BeginArray();
  for (const CompiledResource& resource : resources) {
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

// StreamBuild writes a pipeline's lineage mode from its adopted source's replay mode, else `offsets`.
std::string LineageModeName(const Definitions& definitions, const std::optional<std::string>& source) {
  if (source) {
    const Asset* asset = definitions.FindByName(*source);
    if (const auto* table = asset ? std::get_if<ExternalTable>(&asset->compute) : nullptr) return table->replay_mode;
  }
  return "offsets";
}

std::vector<const Asset*> SourcesByName(const Definitions& definitions) {
  std::vector<const Asset*> sources;
  for (const Asset& asset : definitions.assets()) {
    if (asset.is_source()) sources.push_back(&asset);
  }
  std::stable_sort(sources.begin(), sources.end(), [](const Asset* a, const Asset* b) { return a->name() < b->name(); });
  return sources;
}

// manifest.models[<name>], rendered at the depth it has there.
std::string ModelJson(const Definitions& definitions, const Asset& model,
                      const std::vector<CompiledResource>& resources) {
  constexpr int kDepthInManifest = 2;
  const auto& sql = std::get<SqlCompute>(model.compute);
  std::string out;
  JsonWriter json(out, 2, kDepthInManifest);
  json.BeginObject();
  json.Key("logical_key");
  json.String("model:" + model.name());
  json.Key("name");
  json.String(model.name());
  json.Key("pipeline");
  json.String(model.pipeline);
  json.Key("query_path");
  json.String(ModelQueryPath(model));
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
  json.String(model.relation_name);
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
  const Pipeline* pipeline = definitions.FindPipeline(model.pipeline);
  json.StringOrNull(pipeline ? pipeline->source : std::nullopt);
  json.Key("spec");
  json.BeginObject();
  json.Key("columns");
  json.BeginArray();
  for (const ModelColumn& column : sql.columns) {
    json.BeginObject();
    json.Key("default");
    json.Null();
    json.Key("name");
    json.String(column.name);
    json.Key("type");
    json.String(column.type);
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

// Each of the writers below keys its object by name through a map: sorted, and one entry per name (the last).
void WriteAudits(JsonWriter& json, const Definitions& definitions) {
  std::map<std::string, const AuditSpec*> audits;
  for (const AuditSpec& audit : definitions.audits()) audits[audit.name] = &audit;
  json.BeginObject();
  for (const auto& [name, audit_pointer] : audits) {
    const AuditSpec& audit = *audit_pointer;
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(audit.file);
    json.Key("name");
    json.String(audit.name);
    json.Key("path");
    json.String(audit.path);
    json.Key("referenced_models");
    json.StringArray(audit.referenced_models);
    json.Key("severity");
    json.String(AuditSeverityName(audit.severity));
    json.EndObject();
  }
  json.EndObject();
}

void WriteTests(JsonWriter& json, const Definitions& definitions) {
  std::map<std::string, const TestSpec*> tests;
  for (const TestSpec& test : definitions.tests()) tests[test.name] = &test;
  json.BeginObject();
  for (const auto& [name, test_pointer] : tests) {
    const TestSpec& test = *test_pointer;
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(test.file);
    json.Key("name");
    json.String(test.name);
    json.Key("path");
    json.String(test.path);
    json.Key("targets");
    json.StringArray(test.targets);
    json.EndObject();
  }
  json.EndObject();
}

void WriteMacros(JsonWriter& json, const Definitions& definitions) {
  std::map<std::string, const MacroSource*> macros;
  for (const MacroSource& macro : definitions.macros()) macros[macro.name] = &macro;
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

void WritePipelines(JsonWriter& json, const Definitions& definitions) {
  std::map<std::string, const Pipeline*> pipelines;
  for (const Pipeline& pipeline : definitions.pipelines()) pipelines[pipeline.name] = &pipeline;
  json.BeginObject();
  for (const auto& [name, pipeline_pointer] : pipelines) {
    const Pipeline& pipeline = *pipeline_pointer;
    json.Key(name);
    json.BeginObject();
    json.Key("file");
    json.String(pipeline.directory);
    json.Key("models");
    json.StringArray(pipeline.models);
    json.Key("name");
    json.String(pipeline.name);
    json.Key("relations");
    std::map<std::string, std::string> relations;
    for (const std::string& model : pipeline.models) relations[model] = definitions.FindByName(model)->relation_name;
    json.BeginObject();
    for (const auto& [model, relation] : relations) {
      json.Key(model);
      json.String(relation);
    }
    json.EndObject();
    json.Key("replay_lineage_mode");
    json.String(LineageModeName(definitions, pipeline.source));
    json.Key("resolved_database");
    json.String(pipeline.name_space);
    json.Key("source_name");
    json.StringOrNull(pipeline.source);
    json.EndObject();
  }
  json.EndObject();
}

void WriteSources(JsonWriter& json, const Definitions& definitions, const std::vector<const Asset*>& by_name) {
  std::map<std::string, const Asset*> sources;
  for (const Asset* source : by_name) sources[source->name()] = source;
  json.BeginObject();
  for (const auto& [name, source] : sources) {
    const auto* kafka = std::get_if<KafkaSource>(&source->compute);
    const bool derived = kafka != nullptr && kafka->name_origin == "derived" && kafka->naming_macro;
    json.Key(source->name());
    json.BeginObject();
    json.Key("logical_key");
    json.String("source:" + source->name());
    json.Key("name");
    json.String(source->name());
    json.Key("name_origin");
    json.BeginObject();
    json.Key("kind");
    json.String(derived ? "derived" : "declared");
    json.Key("macro");
    json.StringOrNull(derived ? kafka->naming_macro : std::nullopt);
    json.Key("macro_fingerprint");
    json.StringOrNull(derived ? kafka->naming_macro_fingerprint : std::nullopt);
    json.EndObject();
    json.Key("relation_name");
    json.String(source->relation_name);
    json.Key("replay_lineage_mode");
    json.String(LineageModeName(definitions, source->name()));
    json.Key("resources");
    WriteResources(json, SourceResources(definitions, *source));
    json.EndObject();
  }
  json.EndObject();
}

// manifest.sluice: Sluice's additions.
void WriteSluiceSection(JsonWriter& json, const Definitions& definitions, const std::vector<const Asset*>& models,
                        const std::vector<const Asset*>& sources, const std::string& dag_identity) {
  const ProjectInfo& project = definitions.project();
  json.BeginObject();
  json.Key("adapter");
  json.String(project.adapter);
  json.Key("assets");
  std::vector<std::pair<std::string, const Asset*>> assets;  // by key text, the first asset of each
  assets.reserve(definitions.assets().size());
  for (const Asset& asset : definitions.assets()) assets.emplace_back(asset.key.ToString(), &asset);
  std::stable_sort(assets.begin(), assets.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
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
  for (size_t m = 0; m < models.size(); ++m) {
    const Asset* model = models[m];
    if (!model->partitions || (m > 0 && models[m - 1]->name() == model->name())) continue;
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
  json.String(project.name);
  json.Key("seeds");
  std::map<std::string, const Asset*> seeds;
  for (const Asset* source : sources) {
    if (std::holds_alternative<SeedCompute>(source->compute)) seeds[source->name()] = source;
  }
  json.BeginObject();
  for (const auto& [name, source] : seeds) {
    const auto* seed = &std::get<SeedCompute>(source->compute);
    json.Key(source->name());
    json.BeginObject();
    json.Key("asset");
    json.String(source->key.ToString());
    json.Key("columns");
    json.BeginArray();
    for (const auto& [column, type] : seed->columns) {
      json.BeginObject();
      json.Key("name");
      json.String(column);
      json.Key("type");
      json.String(type);
      json.EndObject();
    }
    json.EndArray();
    json.Key("path");
    json.String(seed->path);
    json.EndObject();
  }
  json.EndObject();
  json.Key("target");
  json.String(project.target);
  json.EndObject();
}

void WriteDagNodes(JsonWriter& json, const Dag& dag) {
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

void WriteDagEdges(JsonWriter& json, const Dag& dag) {
  json.BeginArray();
  for (const DagEdge& edge : dag.edges) {
    json.BeginObject();
    json.Key("edge_type");
    json.String(edge.edge_type);
    json.Key("from_id");
    json.String(edge.from_id);
    json.Key("to_id");
    json.String(edge.to_id);
    json.EndObject();
  }
  json.EndArray();
}

// Model manifest entries are rendered in parallel this many at a time, and the manifest is handed on in pieces
// of about kManifestPiece bytes: neither all entries nor the whole manifest is ever held.
constexpr size_t kManifestBatch = 1024;
constexpr size_t kManifestPiece = size_t{1} << 20;

}  // namespace

std::vector<const Asset*> ModelsByName(const Definitions& definitions) {
  std::vector<const Asset*> models;
  for (const Asset& asset : definitions.assets()) {
    if (!asset.is_source()) models.push_back(&asset);
  }
  std::stable_sort(models.begin(), models.end(), [](const Asset* a, const Asset* b) { return a->name() < b->name(); });
  return models;
}

Dag DagOf(const Definitions& definitions) {
  Dag dag;
  for (const Asset* source : SourcesByName(definitions)) {
    dag.nodes.push_back({"source:" + source->name(), source->name(), "source"});
  }
  const std::vector<const Asset*> models = ModelsByName(definitions);
  for (const Asset* model : models) dag.nodes.push_back({"model:" + model->name(), model->name(), "model"});
  for (const TestSpec& test : definitions.tests()) dag.nodes.push_back({"test:" + test.name, test.name, "test"});
  for (const AuditSpec& audit : definitions.audits()) {
    dag.nodes.push_back({"audit:" + audit.name, audit.name, "audit"});
  }
  for (const Asset* model : models) {
    for (const AssetDependency& dep : model->deps) {
      const Asset& upstream = *definitions.Find(dep.upstream);
      dag.edges.push_back({EdgeTypeName(dep.edge), (upstream.is_source() ? "source:" : "model:") + upstream.name(),
                           "model:" + model->name()});
    }
  }
  for (const TestSpec& test : definitions.tests()) {
    if (test.mode != TestMode::kModel) continue;
    for (const std::string& target : test.targets) dag.edges.push_back({"test", "model:" + target, "test:" + test.name});
  }
  for (const AuditSpec& audit : definitions.audits()) {
    for (const std::string& model : audit.referenced_models) {
      dag.edges.push_back({"audit", "model:" + model, "audit:" + audit.name});
    }
  }
  auto key = [](const DagEdge& edge) { return std::tie(edge.edge_type, edge.from_id, edge.to_id); };
  std::sort(dag.edges.begin(), dag.edges.end(), [&](const DagEdge& a, const DagEdge& b) { return key(a) < key(b); });
  dag.edges.erase(std::unique(dag.edges.begin(), dag.edges.end(),
                              [&](const DagEdge& a, const DagEdge& b) { return key(a) == key(b); }),
                  dag.edges.end());
  return dag;
}

DagFile RenderDag(const Definitions& definitions, const Dag& dag) {
  std::string text;
  JsonWriter json(text);
  json.BeginObject();
  json.Key("edges");
  WriteDagEdges(json, dag);
  json.Key("macros");
  json.BeginArray();
  for (const MacroSource& macro : definitions.macros()) json.String(macro.name);
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
  text += '\n';
  std::string compact;  // the identity's input: the nodes, then the edges, as compact JSON
  JsonWriter nodes(compact, -1);
  WriteDagNodes(nodes, dag);
  JsonWriter edges(compact, -1);
  WriteDagEdges(edges, dag);
  return DagFile{std::move(text), Sha256Hex(compact)};
}

void StreamManifest(const Definitions& definitions, const ManifestInputs& inputs,
                    const std::function<void(std::string_view)>& sink) {
  const std::vector<const Asset*>& models = inputs.models;
  const std::vector<const Asset*> sources = SourcesByName(definitions);
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
  for (std::string_view path : inputs.compiled_paths) {
    json.String(path);
    hand_on(false);
  }
  json.EndArray();
  json.Key("audits");
  WriteAudits(json, definitions);
  json.Key("macros");
  WriteMacros(json, definitions);
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
    const size_t count = std::min(kManifestBatch, models.size() - first);
    entries.assign(count, {});
    ParallelFor(count, [&](size_t i) {
      entries[i] = ModelJson(definitions, *models[first + i], inputs.resources[first + i]);
    });
    for (size_t i = 0; i < count; ++i) {
      const size_t m = first + i;
      if (m > 0 && models[m]->name() == models[m - 1]->name()) continue;  // one entry per name
      json.Key(models[m]->name());
      json.Raw(entries[i]);
      hand_on(false);
    }
  }
  json.EndObject();
  json.Key("pipelines");
  WritePipelines(json, definitions);
  json.Key("sluice");
  WriteSluiceSection(json, definitions, models, sources, inputs.dag_identity);
  json.Key("sources");
  WriteSources(json, definitions, sources);
  json.Key("tests");
  WriteTests(json, definitions);
  json.EndObject();
  out += '\n';
  hand_on(true);
}

}  // namespace sluice
