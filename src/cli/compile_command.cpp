// discover, compile and inspect (service/project_files.hpp): what the project holds, its artifacts, its deployment
// inspection. None connects.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "service/project_files.hpp"

namespace sluice::cli {

namespace {

std::string Joined(const std::vector<std::string>& items) { return items.empty() ? "-" : Join(items, ", "); }

}  // namespace

int Discover(const GlobalOptions& global, bool json) {
  const service::DiscoverReport report = service::Discover(global);
  if (json) {
    std::printf("%s\n", service::ToJson(report).dump().c_str());
    return 0;
  }
  size_t models = 0;
  std::printf("project %s, target %s (%s)\n", report.project.c_str(), report.target.c_str(), report.adapter.c_str());
  for (const service::DiscoveredPipeline& pipeline : report.pipelines) {
    std::printf("pipeline %s: namespace %s, %s, source %s\n", pipeline.name.c_str(), pipeline.name_space.c_str(),
                pipeline.virtual_mode ? "virtual" : "direct", pipeline.source ? pipeline.source->c_str() : "none");
    size_t width = 0;
    for (const service::DiscoveredModel& model : pipeline.models) width = std::max(width, model.name.size());
    for (const service::DiscoveredModel& model : pipeline.models) {
      std::printf("  %s  %s\n", Pad(model.name, width).c_str(), model.description.c_str());
      ++models;
    }
  }
  size_t width = 0;
  for (const service::DiscoveredSource& source : report.sources) width = std::max(width, source.name.size());
  if (!report.sources.empty()) std::printf("sources\n");
  for (const service::DiscoveredSource& source : report.sources) {
    std::printf("  %s  %s, %s\n", Pad(source.name, width).c_str(), source.kind.c_str(), source.relation.c_str());
  }
  std::printf("%zu pipeline(s), %zu model(s), %zu source(s)\n", report.pipelines.size(), models, report.sources.size());
  return 0;
}

int Compile(const GlobalOptions& global, const CompileOptions& options) {
  const service::CompileResult result = service::Compile(global, options.target_dir);
  const ArtifactSummary& summary = result.summary;
  const PublishSummary& published = summary.published;
  std::printf(
      "compiled %s: %zu pipeline(s), %zu model(s), %zu source(s) → %s (%zu file(s) written, %zu removed, "
      "%zu unchanged)\n",
      result.project.c_str(), summary.pipelines, summary.models, summary.sources, summary.target_dir.c_str(),
      published.written, published.removed, published.unchanged);
  return 0;
}

int Inspect(const GlobalOptions& global, bool json_output) {
  const InspectionReport report = service::Inspect(global);
  if (json_output) {
    PrintJson(service::ToJson(report));
    return report.ok() ? 0 : 1;
  }
  for (const InspectedAsset& asset : report.assets) {
    std::printf("%s  %s → %s  %s", asset.kind.c_str(), asset.key.c_str(), asset.relation.c_str(),
                asset.partitioning.c_str());
    if (asset.backfill_policy != "-") std::printf("  backfill %s", asset.backfill_policy.c_str());
    std::printf("  inputs: %s\n", Joined(asset.inputs).c_str());
  }
  const TextStyle style = StyleFor(STDERR_FILENO);
  for (const InspectionFinding& finding : report.rejected) {
    std::fprintf(stderr, "%s", FormatDiagnostic(finding.diagnostic, style).c_str());
  }
  if (report.ok()) {
    std::printf("inspection passed: %zu asset(s)\n", report.assets.size());
    return 0;
  }
  std::printf("inspection rejected %zu problem(s) in %zu asset(s)\n", report.rejected.size(), report.assets.size());
  return 1;
}

}  // namespace sluice::cli
