// The operations over a project's files that never connect: discover (what the project holds), compile (target/
// artifacts), inspect (deployment inspection), and over Starlake's files: import one as a Sluice pipeline file,
// validate a folder of pipeline files.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "compile/artifacts.hpp"
#include "definitions/deployment_inspection.hpp"
#include "orchestrate/pipeline_file.hpp"
#include "orchestrate/starlake_job_graph.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

struct DiscoveredModel {
  std::string name;
  std::string description;  // its kind, and "daily from D" when partitioned; empty when it does not load
};
struct DiscoveredPipeline {
  std::string name;
  std::string name_space;
  bool virtual_mode = false;
  std::optional<std::string> source;
  std::vector<DiscoveredModel> models;
};
struct DiscoveredSource {
  std::string name;
  std::string kind;
  std::string relation;
};
struct DiscoverReport {
  std::string project;
  std::string target;
  std::string adapter;
  std::vector<DiscoveredPipeline> pipelines;
  std::vector<DiscoveredSource> sources;
};
DiscoverReport Discover(const WorkspaceOptions& workspace);
// StreamBuild's output: the pipelines' names.
nlohmann::json ToJson(const DiscoverReport& report);

struct CompileResult {
  std::string project;
  ArtifactSummary summary;
};
// Writes the artifacts to `target_dir` (empty: the project's target/).
CompileResult Compile(const WorkspaceOptions& workspace, const std::string& target_dir);

// Deployment inspection of the project's definitions, or of a code program's. Reads definitions only: never the
// warehouse, never SEGMENTSTREAM_WAREHOUSE_*.
InspectionReport Inspect(const WorkspaceOptions& workspace);
// {ok, assets, rejected}.
nlohmann::json ToJson(const InspectionReport& report);

struct StarlakeImport {
  orchestrate::StarlakeJobGraph graph;
  std::optional<orchestrate::SavedPipelineFile> saved;  // unset when only the graph was asked for
};
// Reads a task_deps JSON or a generated Dagster DAG module (`file`, relative to the working directory) and, unless
// `graph_only`, writes its pipeline file under `output` (replacing a different one only when `force`).
StarlakeImport ImportStarlakeFile(const std::string& file, const std::string& output, bool force, bool graph_only);

struct ValidPipelineFile {
  std::filesystem::path path;
  orchestrate::StarlakeJobGraph graph;
};
struct PipelineValidation {
  size_t files = 0;                      // *.yml and *.yaml files read
  std::vector<ValidPipelineFile> valid;  // in the folder's order
  orchestrate::StarlakeJobGraph jobs;    // of the valid files
  std::vector<Diagnostic> errors;        // of every file, sorted by location
};
PipelineValidation ValidatePipelineFiles(const std::string& folder);

}  // namespace sluice::service
