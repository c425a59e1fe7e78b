#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "project/artifacts.hpp"

namespace sluice::cli {

int Discover(const GlobalOptions& global) {
  Project& project = LoadProjectFor(global);
  nlohmann::json names = nlohmann::json::array();
  for (const Pipeline& pipeline : project.definitions.pipelines()) names.push_back(pipeline.name);
  std::printf("%s\n", names.dump().c_str());
  return 0;
}

int Compile(const GlobalOptions& global, const CompileOptions& options) {
  Project& project = LoadProjectFor(global);
  // The loader's scratch is freed, so rendering the artifacts reuses its memory rather than adding to it (peak
  // RSS at 10,000 models 355 -> ~190 MiB). Handing the pages back (malloc_trim) would save a few MiB but cost
  // 190 ms.
  project.load_scratch.reset();
  ArtifactSummary summary = WriteArtifacts(project, options.target_dir);
  const PublishSummary& published = summary.published;
  std::printf(
      "compiled %s: %zu pipeline(s), %zu model(s), %zu source(s) → %s (%zu file(s) written, %zu removed, "
      "%zu unchanged)\n",
      project.config.name.c_str(), summary.pipelines, summary.models, summary.sources, summary.target_dir.c_str(),
      published.written, published.removed, published.unchanged);
  return 0;
}

}  // namespace sluice::cli
