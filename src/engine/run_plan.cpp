#include "engine/run_plan.hpp"

#include <map>
#include <set>

#include "engine/selection.hpp"

namespace sluice {

RunPlan PlanRun(const Definitions& definitions, const RunRequest& request, Date today) {
  RunPlan plan;
  for (const std::string& item : request.selection) plan.selection_text += (plan.selection_text.empty() ? "" : " ") + item;
  if (plan.selection_text.empty()) plan.selection_text = "*";
  std::vector<AssetKey> selected =
      request.assets ? *request.assets : ResolveSelection(definitions, request.selection);
  std::set<AssetKey> chosen(selected.begin(), selected.end());

  std::map<AssetKey, size_t> step_index;
  for (const AssetKey& key : definitions.TopologicalOrder()) {
    if (!chosen.count(key)) continue;
    const Asset& asset = *definitions.Find(key);
    // A virtual pipeline's relations are stable views over its published deployment, rebuilt whole only by
    // `backfill`; a daily model's days may be run, into the table the view reads (cli/run_command.cpp resolves it).
    if (const Pipeline* pipeline = definitions.FindPipeline(asset.pipeline);
        pipeline != nullptr && pipeline->virtual_mode && !asset.is_source()) {
      if (request.selection.empty() && !request.assets) continue;
      if (!asset.partitions || request.full_refresh) {
        throw Error(Diagnostic{"SLU-DEPLOY-001",
                               "model '" + asset.name() + "' belongs to the virtual pipeline '" + pipeline->name +
                                   "': its relation is a stable view over the published deployment, which `run` " +
                                   (asset.partitions ? "--full-refresh" : "of a model without daily partitions") +
                                   " would replace whole",
                               asset.defined_at,
                               "rebuild it with `sluice backfill` then `sluice publish`; `sluice run --partition D` "
                               "writes one day of a daily model into its published table",
                               {}});
      }
    }
    StepPlan step{key, std::nullopt, {}};
    step.full_refresh = request.full_refresh;
    if (asset.partitions) {
      const DailyPartitions& partitions = asset.partitions->partitions;
      if (request.partition_from) {
        step.window = partitions.WindowForRange(*request.partition_from,
                                                request.partition_to.value_or(*request.partition_from), today);
      } else {
        Date last = partitions.LastComplete(today);
        step.window = DateWindow{last, last.AddDays(1)};
      }
      if (request.full_refresh) step.window->start = partitions.start_date();
      plan.window = step.window;
    }
    for (const AssetDependency& dep : asset.deps) {
      if (auto it = step_index.find(dep.upstream); it != step_index.end()) {
        step.upstream_steps.push_back(it->second);
      } else {
        step.outside_upstreams.push_back(dep.upstream);
      }
    }
    step_index.emplace(key, plan.steps.size());
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace sluice
