// What `status` shows: each asset's last materialization and, for a daily-partitioned one, which partitions are
// done and which are missing — from the state store's materializations, rebuilt from the warehouse's own ledger
// when the state store has none (its file was lost, or is new).
// Thread-safety: pure functions over the stores and values given.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/date.hpp"
#include "definitions/definitions.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// Records every ledger row of `warehouse` as the latest materialization of its asset partitions (a later row
// for a partition replaces an earlier one). Returns the number of ledger rows read.
size_t RebuildMaterializations(Warehouse& warehouse, MaterializationStore& store);

// An inclusive range of days.
struct DayRange {
  Date first;
  Date last;
  bool operator==(const DayRange&) const = default;
};

// The days of `all` (ascending) whose partition key (YYYY-MM-DD) is not in `done`, as maximal ranges of
// consecutive days.
std::vector<DayRange> MissingRanges(const std::vector<Date>& all, const std::vector<std::string>& done);

struct PartitionStatus {
  Date start_date;
  std::string column;
  size_t total = 0;  // every partition from the start date through yesterday
  size_t done = 0;
  std::vector<DayRange> missing;
};

struct AssetStatus {
  AssetKey key;
  std::string kind;      // seed | adopted | kafka | postgres | view | daily | table
  std::string relation;  // namespace.relation
  std::string pipeline;  // empty for sources
  std::optional<MaterializationRecord> last;  // the latest write, any partition
  std::optional<PartitionStatus> partitions;  // daily-partitioned assets only
};

// Every asset in dependency order, with its materializations (`latest`: the state store's, one per partition).
std::vector<AssetStatus> StatusOf(const Definitions& definitions, const std::vector<MaterializationRecord>& latest,
                                  Date today);

}  // namespace sluice
