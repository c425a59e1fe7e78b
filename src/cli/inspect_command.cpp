// inspect: deployment inspection (definitions/deployment_inspection.hpp, sdk/sdk_definitions.hpp). Lists each asset
// — key, relation, partitioning, backfill policy, inputs — then every rejection with its rule, and exits 1 when there
// is one. Reads definitions only: never the warehouse, never SEGMENTSTREAM_WAREHOUSE_*.
#include <unistd.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/color_choice.hpp"
#include "cli/commands.hpp"
#include "cli/text_output.hpp"
#include "definitions/deployment_inspection.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

InspectionReport ReportFor(const GlobalOptions& global) {
  if (ActiveCodeProgram() == nullptr) return InspectDefinitions(LoadProjectFor(global).definitions);
  static std::optional<Project>* models = new std::optional<Project>;  // reachable, for leak checkers
  return InspectCodeProgram(global, *models);
}

std::string Joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text.empty() ? "-" : text;
}

}  // namespace

int Inspect(const GlobalOptions& global, bool json_output) {
  InspectionReport report = ReportFor(global);
  if (json_output) {
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
    std::printf("%s\n", json{{"ok", report.ok()}, {"assets", assets}, {"rejected", rejected}}.dump(2).c_str());
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
