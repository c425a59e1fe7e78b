#include "compile/manifest.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/parallel_for.hpp"
#include "core/sha256.hpp"

namespace sluice {

namespace {

using nlohmann::json;

// `value` as nlohmann-json renders it with a 2-space indent (invalid UTF-8 replaced), for a place `depth` levels
// deep in a document: its lines after the first indented by 2 * depth spaces. Raw newlines in the rendering
// only ever separate lines (a newline inside a string is escaped).
std::string Render(const json& value, int depth = 0) {
  std::string text = value.dump(2, ' ', false, json::error_handler_t::replace);
  if (depth == 0) return text;
  const std::string indent = "\n" + std::string(2 * static_cast<size_t>(depth), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  for (size_t at = 0; at < text.size();) {
    const size_t line_end = std::min(text.find('\n', at), text.size());
    out.append(text, at, line_end - at);
    if (line_end < text.size()) out += indent;
    at = line_end + 1;
  }
  return out;
}

std::string Compact(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

json OptionalString(const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); }

json ResourcesJson(const std::vector<CompiledResource>& resources) {
  json list = json::array();
  for (const CompiledResource& resource : resources) {
    list.push_back({{"kind", resource.kind}, {"name", resource.name}, {"path", resource.path}});
  }
  return list;
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

// manifest.models[<name>]. Built member by member: a braced list of members would copy each nested value.
json ModelJson(const Definitions& definitions, const Asset& model, const std::vector<CompiledResource>& resources) {
  const auto& sql = std::get<SqlCompute>(model.compute);
  json entry = json::object();
  entry["logical_key"] = "model:" + model.name();
  entry["name"] = model.name();
  entry["pipeline"] = model.pipeline;
  entry["query_path"] = ModelQueryPath(model);
  json& refs = entry["refs"] = json::array();
  for (const ResolvedReference& ref : sql.references) {
    json& item = refs.emplace_back(json::object());
    item["edge_type"] = EdgeTypeName(ref.edge);
    item["kind"] = ref.call.kind == sql::ReferenceKind::kSource ? "source" : "ref";
    item["name"] = ref.call.name;
    item["ref_type"] = nullptr;
    if (ref.call.ref_type) item["ref_type"] = *ref.call.ref_type == sql::RefType::kMutable ? "mutable" : "reference";
  }
  entry["relation_name"] = model.relation_name;
  entry["resources"] = ResourcesJson(resources);
  entry["source"] = nullptr;
  entry["spec"] = nullptr;
  if (sql.kind == ModelKind::kView) return entry;
  const Pipeline* pipeline = definitions.FindPipeline(model.pipeline);
  entry["source"] = OptionalString(pipeline ? pipeline->source : std::nullopt);
  json& spec = entry["spec"] = json::object();
  json& columns = spec["columns"] = json::array();
  for (const ModelColumn& column : sql.columns) {
    json& item = columns.emplace_back(json::object());
    item["default"] = nullptr;
    item["name"] = column.name;
    item["type"] = column.type;
  }
  spec["engine"] = sql.storage.engine;
  spec["order_by"] = sql.storage.order_by;
  spec["partition_by"] = OptionalString(sql.storage.partition_by);
  json& settings = spec["settings"] = json::object();  // a repeated key keeps its last value
  for (const auto& [key, value] : sql.storage.settings) settings[key] = value;
  spec["ttl"] = OptionalString(sql.storage.ttl);
  return entry;
}

json AuditsJson(const Definitions& definitions) {
  json audits = json::object();
  for (const AuditSpec& audit : definitions.audits()) {
    audits[audit.name] = {{"file", audit.file},
                          {"name", audit.name},
                          {"path", audit.path},
                          {"referenced_models", audit.referenced_models},
                          {"severity", AuditSeverityName(audit.severity)}};
  }
  return audits;
}

json TestsJson(const Definitions& definitions) {
  json tests = json::object();
  for (const TestSpec& test : definitions.tests()) {
    tests[test.name] = {{"file", test.file}, {"name", test.name}, {"path", test.path}, {"targets", test.targets}};
  }
  return tests;
}

json MacrosJson(const Definitions& definitions) {
  json macros = json::object();
  for (const MacroSource& macro : definitions.macros()) {
    macros[macro.name] = {{"file", macro.file}, {"source", macro.source}};
  }
  return macros;
}

json PipelinesJson(const Definitions& definitions) {
  json pipelines = json::object();
  for (const Pipeline& pipeline : definitions.pipelines()) {
    json relations = json::object();
    for (const std::string& model : pipeline.models) relations[model] = definitions.FindByName(model)->relation_name;
    pipelines[pipeline.name] = {{"file", pipeline.directory},
                                {"models", pipeline.models},
                                {"name", pipeline.name},
                                {"relations", relations},
                                {"replay_lineage_mode", LineageModeName(definitions, pipeline.source)},
                                {"resolved_database", pipeline.name_space},
                                {"source_name", OptionalString(pipeline.source)}};
  }
  return pipelines;
}

json SourcesJson(const Definitions& definitions) {
  json sources = json::object();
  for (const Asset* source : SourcesByName(definitions)) {
    const auto* kafka = std::get_if<KafkaSource>(&source->compute);
    const bool derived = kafka != nullptr && kafka->name_origin == "derived" && kafka->naming_macro;
    sources[source->name()] = {
        {"logical_key", "source:" + source->name()},
        {"name", source->name()},
        {"name_origin",
         {{"kind", derived ? "derived" : "declared"},
          {"macro", derived ? json(*kafka->naming_macro) : json(nullptr)},
          {"macro_fingerprint", derived ? OptionalString(kafka->naming_macro_fingerprint) : json(nullptr)}}},
        {"relation_name", source->relation_name},
        {"replay_lineage_mode", LineageModeName(definitions, source->name())},
        {"resources", ResourcesJson(SourceResources(definitions, *source))}};
  }
  return sources;
}

// manifest.sluice: Sluice's additions.
json SluiceJson(const Definitions& definitions, const std::vector<const Asset*>& models,
                const std::string& dag_identity) {
  json assets = json::object();  // the first asset of each key text
  for (const Asset& asset : definitions.assets()) {
    const std::string key = asset.key.ToString();
    if (assets.contains(key)) continue;
    assets[key] = {{"file", asset.defined_at.file},
                   {"kind", AssetKindName(asset)},
                   {"name", asset.name()},
                   {"namespace", asset.key.name_space()},
                   {"relation", asset.key.name_space() + "." + asset.relation_name}};
  }
  json partitions = json::object();
  for (const Asset* model : models) {
    if (!model->partitions) continue;
    partitions[model->name()] = {{"column", model->partitions->column},
                                 {"kind", "daily"},
                                 {"start_date", model->partitions->partitions.start_date().ToString()}};
  }
  json seeds = json::object();
  for (const Asset* source : SourcesByName(definitions)) {
    const auto* seed = std::get_if<SeedCompute>(&source->compute);
    if (seed == nullptr) continue;
    json columns = json::array();
    for (const auto& [column, type] : seed->columns) columns.push_back({{"name", column}, {"type", type}});
    seeds[source->name()] = {{"asset", source->key.ToString()}, {"columns", columns}, {"path", seed->path}};
  }
  const ProjectInfo& project = definitions.project();
  return json{{"adapter", project.adapter}, {"assets", assets},        {"dag_identity", dag_identity},
              {"partitions", partitions},   {"project", project.name}, {"seeds", seeds},
              {"target", project.target}};
}

json DagNodesJson(const Dag& dag) {
  json nodes = json::array();
  for (const DagNode& node : dag.nodes) nodes.push_back({{"id", node.id}, {"name", node.name}, {"type", node.type}});
  return nodes;
}

json DagEdgesJson(const Dag& dag) {
  json edges = json::array();
  for (const DagEdge& edge : dag.edges) {
    edges.push_back({{"edge_type", edge.edge_type}, {"from_id", edge.from_id}, {"to_id", edge.to_id}});
  }
  return edges;
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
  json macros = json::array();
  for (const MacroSource& macro : definitions.macros()) macros.push_back(macro.name);
  json file{{"edges", DagEdgesJson(dag)},
            {"macros", macros},
            {"metadata", {{"dag_version", 1}, {"tool", "sluice"}}},
            {"nodes", DagNodesJson(dag)}};
  return DagFile{Render(file) + "\n", Sha256Hex(Compact(file["nodes"]) + Compact(file["edges"]))};
}

void StreamManifest(const Definitions& definitions, const ManifestInputs& inputs,
                    const std::function<void(std::string_view)>& sink) {
  std::string out;
  out.reserve(kManifestPiece + kManifestPiece / 2);
  auto hand_on = [&](bool always) {
    if (always || out.size() >= kManifestPiece) {
      sink(out);
      out.clear();
    }
  };
  auto member = [&](const char* key, const json& value) { out += ",\n  \"" + std::string(key) + "\": " + Render(value, 1); };

  // Top-level members in key order; `artifacts` and `models` are written an item at a time.
  out += "{\n  \"artifacts\": [\n    \"manifest.json\",\n    \"streambuild_dag.json\"";
  for (std::string_view path : inputs.compiled_paths) {
    out += ",\n    " + Compact(json(path));
    hand_on(false);
  }
  out += "\n  ]";
  member("audits", AuditsJson(definitions));
  member("macros", MacrosJson(definitions));
  member("metadata", {{"manifest_version", 1}, {"tool", "sluice"}});
  out += ",\n  \"models\": {";
  const std::vector<const Asset*>& models = inputs.models;
  std::vector<std::string> entries;
  bool first_entry = true;
  for (size_t first = 0; first < models.size(); first += kManifestBatch) {
    const size_t count = std::min(kManifestBatch, models.size() - first);
    entries.assign(count, {});
    ParallelFor(count, [&](size_t i) {
      entries[i] = Render(ModelJson(definitions, *models[first + i], inputs.resources[first + i]), 2);
    });
    for (size_t i = 0; i < count; ++i) {
      const size_t m = first + i;
      if (m > 0 && models[m]->name() == models[m - 1]->name()) continue;  // one entry per name
      out += first_entry ? "\n    " : ",\n    ";
      first_entry = false;
      out += Compact(json(models[m]->name())) + ": " + entries[i];
      hand_on(false);
    }
  }
  out += first_entry ? "}" : "\n  }";
  member("pipelines", PipelinesJson(definitions));
  member("sluice", SluiceJson(definitions, models, inputs.dag_identity));
  member("sources", SourcesJson(definitions));
  member("tests", TestsJson(definitions));
  out += "\n}\n";
  hand_on(true);
}

}  // namespace sluice
