#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "compile/artifacts.hpp"
#include "engine/asset_status.hpp"

namespace sluice::cli {

namespace {

// How `discover` describes a model: its kind, and its partitions when it has them.
std::string ModelLine(const Asset& model) {
  std::string line = AssetKindName(model);
  if (model.partitions) line += ", daily from " + model.partitions->partitions.start_date().ToString();
  return line;
}

}  // namespace

int Discover(const GlobalOptions& global, bool json) {
  const Project& project = LoadProjectFor(global);
  const Definitions& definitions = project.definitions;
  if (json) {
    nlohmann::json names = nlohmann::json::array();
    for (const Pipeline& pipeline : definitions.pipelines()) names.push_back(pipeline.name);
    std::printf("%s\n", names.dump().c_str());
    return 0;
  }
  size_t models = 0, sources = 0;
  std::printf("project %s, target %s (%s)\n", project.config.name.c_str(), definitions.project().target.c_str(),
              definitions.project().adapter.c_str());
  for (const Pipeline& pipeline : definitions.pipelines()) {
    std::printf("pipeline %s: namespace %s, %s, source %s\n", pipeline.name.c_str(), pipeline.name_space.c_str(),
                pipeline.virtual_mode ? "virtual" : "direct", pipeline.source ? pipeline.source->c_str() : "none");
    size_t width = 0;
    for (const std::string& name : pipeline.models) width = std::max(width, name.size());
    for (const std::string& name : pipeline.models) {
      const Asset* model = definitions.FindByName(name);
      std::printf("  %s  %s\n", Pad(name, width).c_str(), model != nullptr ? ModelLine(*model).c_str() : "");
      ++models;
    }
  }
  size_t width = 0;
  for (const Asset& asset : definitions.assets()) {
    if (asset.is_source()) width = std::max(width, asset.name().size());
  }
  for (const Asset& asset : definitions.assets()) {
    if (!asset.is_source()) continue;
    if (sources++ == 0) std::printf("sources\n");
    std::printf("  %s  %s, %s\n", Pad(asset.name(), width).c_str(), AssetKindName(asset).c_str(),
                RelationOf(asset).ToString().c_str());
  }
  std::printf("%zu pipeline(s), %zu model(s), %zu source(s)\n", definitions.pipelines().size(), models, sources);
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
