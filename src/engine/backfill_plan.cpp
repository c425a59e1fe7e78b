#include "engine/backfill_plan.hpp"

#include <algorithm>
#include <set>

#include "core/diagnostic.hpp"

namespace sluice {

std::vector<DayRange> ContiguousRanges(std::vector<Date> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<DayRange> ranges;
  for (Date key : keys) {
    if (!ranges.empty() && ranges.back().last.AddDays(1) == key) {
      ranges.back().last = key;
    } else {
      ranges.push_back(DayRange{key, key});
    }
  }
  return ranges;
}

std::vector<DayRange> ChunkRange(const DayRange& range, std::optional<int> max_partitions_per_run) {
  if (!max_partitions_per_run) return {range};
  const int step = std::max(1, *max_partitions_per_run);
  std::vector<DayRange> chunks;
  for (Date first = range.first; first <= range.last; first = first.AddDays(step)) {
    chunks.push_back(DayRange{first, std::min(range.last, first.AddDays(step - 1))});
  }
  return chunks;
}

BackfillPlan PlanBackfill(const Definitions& definitions, const BackfillRequest& request, Date today) {
  std::vector<DayRange> ranges = ContiguousRanges(request.keys);
  if (ranges.empty()) {
    throw Error(Diagnostic{"SLU-BACKFILL-002", "a backfill needs at least one partition key", {},
                           "pass --from and --to", {}});
  }
  // One plan over the whole span: the selection resolved, in dependency order, every key's bounds checked.
  RunRequest whole{request.selection, ranges.front().first.ToString(), ranges.back().last.ToString(), false, {}};
  RunPlan all = PlanRun(definitions, whole, today);

  BackfillPlan plan;
  plan.selection_text = all.selection_text;
  plan.first = ranges.front().first;
  plan.last = ranges.back().last;

  const size_t count = all.steps.size();
  std::vector<bool> partitioned(count), feeds_partitioned(count), fed_by_partitioned(count);
  for (size_t i = 0; i < count; ++i) {
    partitioned[i] = all.steps[i].window.has_value();
    for (size_t up : all.steps[i].upstream_steps) {
      fed_by_partitioned[i] = fed_by_partitioned[i] || partitioned[up] || fed_by_partitioned[up];
    }
  }
  for (size_t i = count; i-- > 0;) {  // steps are in dependency order: downstream ones come later
    for (size_t up : all.steps[i].upstream_steps) {
      feeds_partitioned[up] = feeds_partitioned[up] || partitioned[i] || feeds_partitioned[i];
    }
  }

  std::vector<AssetKey> partitioned_assets, before, after;
  for (size_t i = 0; i < count; ++i) {
    const AssetKey& key = all.steps[i].key;
    if (partitioned[i]) {
      partitioned_assets.push_back(key);
      std::optional<int> n = definitions.Find(key)->backfill_policy.max_partitions_per_run;
      if (n && (!plan.max_partitions_per_run || *n < *plan.max_partitions_per_run)) plan.max_partitions_per_run = n;
    } else if (feeds_partitioned[i] && fed_by_partitioned[i]) {
      throw Error(Diagnostic{"SLU-BACKFILL-001",
                             "unpartitioned asset " + key.ToString() +
                                 " reads a partitioned asset and is read by one, so a backfill can run it neither "
                                 "before nor after the partitioned runs",
                             definitions.Find(key)->defined_at,
                             "backfill the partitioned assets on each side separately (--select), or make " +
                                 key.name() + " partitioned",
                             {}});
    } else if (feeds_partitioned[i]) {
      before.push_back(key);
    } else {
      after.push_back(key);
    }
  }
  if (partitioned_assets.empty()) {
    throw Error(Diagnostic{"SLU-BACKFILL-002", "no selected asset is partitioned, so there is nothing to backfill", {},
                           "select a partitioned model, or run without --from and --to", {}});
  }

  std::vector<DayRange> pieces;
  for (const DayRange& range : ranges) {
    for (const DayRange& piece : ChunkRange(range, plan.max_partitions_per_run)) pieces.push_back(piece);
  }
  auto window_of = [](const DayRange& piece) { return DateWindow{piece.first, piece.last.AddDays(1)}; };
  if (pieces.size() == 1) {
    std::vector<AssetKey> every;
    for (const StepPlan& step : all.steps) every.push_back(step.key);
    plan.chunks.push_back(BackfillChunkPlan{window_of(pieces.front()), every});
    return plan;
  }
  if (!before.empty()) plan.chunks.push_back(BackfillChunkPlan{std::nullopt, before});
  for (const DayRange& piece : pieces) plan.chunks.push_back(BackfillChunkPlan{window_of(piece), partitioned_assets});
  if (!after.empty()) plan.chunks.push_back(BackfillChunkPlan{std::nullopt, after});
  return plan;
}

RunPlan PlanChunkRun(const Definitions& definitions, const std::string& selection_text,
                     const std::optional<DateWindow>& window, const std::vector<AssetKey>& assets, Date today) {
  RunRequest request;
  request.selection = {selection_text};
  if (window) {
    request.partition_from = window->start.ToString();
    request.partition_to = window->end.AddDays(-1).ToString();
  }
  request.assets = assets;
  return PlanRun(definitions, request, today);
}

}  // namespace sluice
