#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "compile/artifacts.hpp"

namespace sluice::cli {

int Discover(const GlobalOptions& global) {
  const Project& project = LoadProjectFor(global);
  nlohmann::json names = nlohmann::json::array();
  for (const Pipeline& pipeline : project.definitions.pipelines()) names.push_back(pipeline.name);
  std::printf("%s\n", names.dump().c_str());
  return 0;
}

int Compile(const GlobalOptions& global, const CompileOptions& options) {
  const Project& project = LoadProjectFor(global);
  const std::filesystem::path target_dir =
      options.target_dir.empty() ? project.root / "target" : std::filesystem::path(options.target_dir);
  const ArtifactSummary summary = WriteArtifacts(project.definitions, target_dir);
  const PublishSummary& published = summary.published;
  std::printf(
      "compiled %s: %zu pipeline(s), %zu model(s), %zu source(s) → %s (%zu file(s) written, %zu removed, "
      "%zu unchanged)\n",
      project.config.name.c_str(), summary.pipelines, summary.models, summary.sources, summary.target_dir.c_str(),
      published.written, published.removed, published.unchanged);
  return 0;
}

}  // namespace sluice::cli
