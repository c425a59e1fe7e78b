#include "service/project_files.hpp"

#include "engine/asset_status.hpp"
#include "orchestrate/starlake_dag_file.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

// How discover describes a model: its kind, and its partitions when it has them.
std::string ModelDescription(const Asset& model) {
  std::string line = AssetKindName(model);
  if (model.partitions) line += ", daily from " + model.partitions->partitions.start_date().ToString();
  return line;
}

}  // namespace

DiscoverReport Discover(const WorkspaceOptions& workspace) {
  const Project& project = LoadProjectFor(workspace);
  const Definitions& definitions = project.definitions;
  DiscoverReport report{project.config.name, definitions.project().target, definitions.project().adapter, {}, {}};
  for (const Pipeline& pipeline : definitions.pipelines()) {
    DiscoveredPipeline discovered{pipeline.name, pipeline.name_space, pipeline.virtual_mode, pipeline.source, {}};
    for (const std::string& name : pipeline.models) {
      const Asset* model = definitions.FindByName(name);
      discovered.models.push_back({name, model != nullptr ? ModelDescription(*model) : ""});
    }
    report.pipelines.push_back(std::move(discovered));
  }
  for (const Asset& asset : definitions.assets()) {
    if (asset.is_source()) report.sources.push_back({asset.name(), AssetKindName(asset), RelationOf(asset).ToString()});
  }
  return report;
}

json ToJson(const DiscoverReport& report) {
  json names = json::array();
  for (const DiscoveredPipeline& pipeline : report.pipelines) names.push_back(pipeline.name);
  return names;
}

CompileResult Compile(const WorkspaceOptions& workspace, const std::string& target_dir) {
  const Project& project = LoadProjectFor(workspace);
  const std::filesystem::path directory =
      target_dir.empty() ? project.root / "target" : std::filesystem::path(target_dir);
  return CompileResult{project.config.name, WriteArtifacts(project.definitions, directory)};
}

InspectionReport Inspect(const WorkspaceOptions& workspace) {
  if (ActiveCodeProgram() == nullptr) return InspectDefinitions(LoadProjectFor(workspace).definitions);
  static std::optional<Project>* models = new std::optional<Project>;  // reachable, for leak checkers
  return InspectCodeProgram(workspace, *models);
}

json ToJson(const InspectionReport& report) {
  json assets = json::array();
  for (const InspectedAsset& asset : report.assets) {
    assets.push_back({{"key", asset.key},
                      {"relation", asset.relation},
                      {"kind", asset.kind},
                      {"partitioning", asset.partitioning},
                      {"backfill_policy", asset.backfill_policy},
                      {"inputs", asset.inputs},
                      {"kinds", asset.kinds},
                      {"io_manager_key", asset.io_manager_key},
                      {"file", asset.defined_at.file},
                      {"line", asset.defined_at.line}});
  }
  json rejected = json::array();
  for (const InspectionFinding& finding : report.rejected) {
    json item = DiagnosticJson(finding.diagnostic);
    item["asset"] = finding.asset;
    rejected.push_back(item);
  }
  return json{{"ok", report.ok()}, {"assets", assets}, {"rejected", rejected}};
}

StarlakeImport ImportStarlakeFile(const std::string& file, const std::string& output, bool force, bool graph_only) {
  const orchestrate::StarlakeDagFile dag = orchestrate::ReadStarlakeDagFile(std::filesystem::path(file));
  StarlakeImport result{orchestrate::BuildStarlakeJobGraph(dag), std::nullopt};
  if (!graph_only) result.saved = orchestrate::SavePipelineFile(dag, std::filesystem::path(output), force);
  return result;
}

PipelineValidation ValidatePipelineFiles(const std::string& folder) {
  PipelineValidation validation;
  const std::vector<orchestrate::PipelineFolderEntry> entries =
      orchestrate::ScanPipelineFolder(std::filesystem::path(folder));
  validation.files = entries.size();
  for (const orchestrate::PipelineFolderEntry& entry : entries) {
    validation.errors.insert(validation.errors.end(), entry.errors.begin(), entry.errors.end());
    if (!entry.pipeline || !entry.errors.empty()) continue;
    orchestrate::StarlakeJobGraph graph = orchestrate::BuildStarlakeJobGraph(*entry.pipeline);
    validation.jobs.jobs.insert(validation.jobs.jobs.end(), graph.jobs.begin(), graph.jobs.end());
    validation.valid.push_back({entry.path, std::move(graph)});
  }
  SortByLocation(validation.errors);
  return validation;
}

}  // namespace sluice::service
