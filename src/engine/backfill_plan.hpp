// Backfill planning (Dagster's multi-run backfills): a selection over a set of partition keys → chunks, each one run.
//
// The algorithm of Dagster's build_run_requests_with_backfill_policies, for Sluice's one partitions definition
// (daily, UTC): every partitioned asset of the selection shares each run, over the requested keys; the keys become
// maximal ranges of consecutive days (a gap splits them); a single-run policy makes one chunk per range, a
// multi_run(n) policy walks each range in steps of n days (35 days, n = 10 → 10, 10, 10, 5). When the partitioned
// assets have different policies, the smallest n wins, as in Dagster (single run counts as no limit).
//
// Unpartitioned assets run once. When the partitioned assets fit in one chunk, that one run holds every selected
// asset, as a plain `run` would. Otherwise those upstream of a partitioned asset run in one chunk before the
// partitioned chunks (they read what it writes), the others in one chunk after them (they may read every date the
// partitioned chunks wrote). An unpartitioned asset both downstream and upstream of partitioned ones fits neither
// (SLU-BACKFILL-001).
//
// Each chunk becomes a RunPlan through PlanRun (PlanChunkRun), so a chunk's steps own exactly its window.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sluice/date.hpp"
#include "definitions/definitions.hpp"
#include "engine/asset_status.hpp"
#include "engine/run_plan.hpp"

namespace sluice {

struct BackfillRequest {
  std::vector<std::string> selection;  // --select items
  std::vector<Date> keys;              // the partition keys to materialize, any order, duplicates ignored
};

struct BackfillChunkPlan {
  std::optional<DateWindow> window;  // the window the chunk's partitioned steps own; nullopt when it has none
  std::vector<AssetKey> assets;      // dependency order
  bool operator==(const BackfillChunkPlan&) const = default;
};

struct BackfillPlan {
  std::string selection_text;                  // as typed ("*" for everything)
  Date first;                                  // the first and last requested key
  Date last;
  std::optional<int> max_partitions_per_run;   // the policy that won; nullopt: single run
  std::vector<BackfillChunkPlan> chunks;       // in the order they may start: before, partitioned, after
};

// Sorted unique days as maximal ranges of consecutive days.
std::vector<DayRange> ContiguousRanges(std::vector<Date> keys);

// `range` cut into consecutive pieces of at most `max_partitions_per_run` days (one piece when nullopt).
std::vector<DayRange> ChunkRange(const DayRange& range, std::optional<int> max_partitions_per_run);

// Plans a backfill. Keys are checked against each partitioned asset's partitions as PlanRun checks a range
// (SLU-PARTITION-*); SLU-BACKFILL-002 when no key is given or no selected asset is partitioned, SLU-BACKFILL-001 as
// above. `today` decides the last valid key (yesterday).
BackfillPlan PlanBackfill(const Definitions& definitions, const BackfillRequest& request, Date today);

// The run of one chunk: PlanRun over exactly `assets` (a chunk's, or those of its steps still to do on resume) with
// the chunk's window.
RunPlan PlanChunkRun(const Definitions& definitions, const std::string& selection_text,
                     const std::optional<DateWindow>& window, const std::vector<AssetKey>& assets, Date today);

}  // namespace sluice
