// RunRequest → RunPlan: the selected assets in dependency order, each with the window it owns.
//
// Partitioned models run one key (`from == to`), an inclusive key range (one window), or by default their
// last complete partition (yesterday, UTC); with full_refresh, from their start date instead. Unpartitioned assets
// run once. Keys are validated against each
// partitioned model's own start date (SLU-PARTITION-*). The models of virtual pipelines are deployed in stages
// (deploy/virtual_plan.hpp): left out of an unselected run; when selected, a daily model's window is planned (its
// days are written into the published table, deploy/published_definitions.hpp) and any other run of one, a model
// without daily partitions or a full refresh, is SLU-DEPLOY-001.
// Thread-safety: pure function; a RunPlan is an immutable value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sluice/date.hpp"
#include "definitions/definitions.hpp"

namespace sluice {

struct RunRequest {
  std::vector<std::string> selection;       // --select items
  std::optional<std::string> partition_from;  // --partition K sets both; --from A --to B
  std::optional<std::string> partition_to;
  // Partitioned models are rebuilt whole, from their start date through the end of the window they would own.
  bool full_refresh = false;
  // When set, exactly these assets are planned (in dependency order) instead of resolving `selection`, which then
  // only names the run (a backfill's chunk: its selection as typed, the chunk's assets).
  std::optional<std::vector<AssetKey>> assets;
};

struct StepPlan {
  AssetKey key;
  std::optional<DateWindow> window;   // set for partitioned models only
  std::vector<size_t> upstream_steps; // indexes of steps in this plan it depends on
  std::vector<AssetKey> outside_upstreams;  // upstreams not in this plan, read as the warehouse holds them
  // Rebuilt whole: a partitioned model's window starts at its start date and replaces the table; a seed is
  // reloaded even when its file is unchanged.
  bool full_refresh = false;
};

struct RunPlan {
  std::string selection_text;                  // the selection as typed ("*" for everything)
  std::optional<DateWindow> window;            // the window partitioned steps own, when any
  std::vector<StepPlan> steps;                 // dependency order
};

RunPlan PlanRun(const Definitions& definitions, const RunRequest& request, Date today);

}  // namespace sluice
