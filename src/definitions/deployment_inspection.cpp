#include "definitions/deployment_inspection.hpp"

#include <algorithm>
#include <cctype>

namespace sluice {

namespace {

bool IsDateType(std::string_view type) {
  std::string lower;
  for (char c : type) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "date" || lower == "nullable(date)";
}

// The checks a SQL model's partition column must pass, against the output columns its body declares.
void CheckPartitionColumn(const Asset& asset, const SqlCompute& model, std::vector<InspectionFinding>& rejected) {
  if (!asset.partitions || model.columns.empty()) return;
  const std::string& column = asset.partitions->column;
  for (ModelColumn output : model.columns) {
    if (output.name != column) continue;
    if (!output.type.empty() && !IsDateType(output.type)) {
      rejected.push_back({asset.key.ToString(),
                          Diagnostic{"SLU-INSPECT-012",
                                     "asset " + asset.key.ToString() + ": partition column \"" + column + "\" is " +
                                         std::string(output.type) + ", not a DATE",
                                     asset.defined_at,
                                     "daily partitions replace whole dates: cast the column to DATE in the SELECT",
                                     {}}});
    }
    return;
  }
  rejected.push_back({asset.key.ToString(),
                      Diagnostic{"SLU-INSPECT-011",
                                 "asset " + asset.key.ToString() + ": partition column \"" + column +
                                     "\" is not among its output columns",
                                 asset.defined_at, "select the DATE column the partitions are declared on", {}}});
}

}  // namespace

std::string BackfillPolicyText(const BackfillPolicy& policy) {
  return policy.max_partitions_per_run ? "multi_run(" + std::to_string(*policy.max_partitions_per_run) + ")"
                                       : "single_run";
}

InspectionReport InspectDefinitions(const Definitions& definitions) {
  InspectionReport report;
  for (const Asset& asset : definitions.assets()) {
    if (const auto* table = std::get_if<ExternalTable>(&asset.compute); table != nullptr && table->defined_in_code) {
      continue;  // a code asset's stand-in: the SDK reports the asset itself
    }
    InspectedAsset inspected;
    inspected.key = asset.key.ToString();
    inspected.relation = asset.key.name_space() + "." + asset.relation_name;
    inspected.kind = AssetKindName(asset);
    inspected.partitioning = asset.partitions ? "daily from " + asset.partitions->partitions.start_date().ToString() +
                                                    " by " + asset.partitions->column
                                              : "unpartitioned";
    inspected.backfill_policy = asset.partitions ? BackfillPolicyText(asset.backfill_policy) : "-";
    for (const AssetDependency& dep : asset.deps) inspected.inputs.push_back(dep.upstream.ToString());
    inspected.defined_at = asset.defined_at;
    if (const auto* code = std::get_if<CodeCompute>(&asset.compute)) {
      inspected.kinds = code->kinds;
      inspected.io_manager_key = code->io_manager_key;
    }
    report.assets.push_back(std::move(inspected));
    if (const auto* model = std::get_if<SqlCompute>(&asset.compute)) {
      CheckPartitionColumn(asset, *model, report.rejected);
    }
  }
  return report;
}

}  // namespace sluice
