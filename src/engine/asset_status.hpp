// What `status` shows: each asset's last materialization and, for a daily-partitioned one, which partitions are
// done and which are missing — from the state store's materializations, rebuilt from the warehouse's own ledger
// when the state store has none (its file was lost, or is new) — checked against the warehouse's catalog: a
// relation the history says was written but the warehouse no longer holds is shown missing.
// Thread-safety: pure functions over the stores and values given.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sluice/date.hpp"
#include "definitions/definitions.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct RebuildSummary {
  size_t writes = 0;  // ledger rows read
  size_t runs = 0;    // distinct runs that made them
};

// Records every ledger row of `warehouse` as the latest materialization of its asset partitions (a later row
// for a partition replaces an earlier one). Only materializations: the ledger holds no run records or events.
RebuildSummary RebuildMaterializations(Warehouse& warehouse, MaterializationStore& store);

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

enum class AssetState {
  kMaterialized,  // written (by the history) and present (when the catalog was read)
  kMissing,       // written by the history, or adopted, but not in the warehouse
  kNever,         // never written
  kPresent,       // adopted table found in the warehouse (it is never written)
};
std::string AssetStateName(AssetState state);  // materialized | missing | never | present

struct AssetStatus {
  AssetKey key;
  std::string kind;      // seed | adopted | kafka | postgres | view | daily | table; empty when unknown
  std::string relation;  // namespace.relation; empty when unknown
  std::string pipeline;  // empty for sources
  AssetState state = AssetState::kNever;
  std::optional<bool> exists;                 // in the warehouse's catalog; nullopt when not checked
  std::optional<MaterializationRecord> last;  // the latest write, any partition
  std::optional<PartitionStatus> partitions;  // daily-partitioned assets only
};

// Every asset in dependency order, with its materializations (`latest`: the state store's, one per partition).
// `catalog`, when read, decides existence: a missing relation has no partition done, whatever the history says.
std::vector<AssetStatus> StatusOf(const Definitions& definitions, const std::vector<MaterializationRecord>& latest,
                                  const std::optional<std::vector<TableInfo>>& catalog, Date today);

// Status from the history alone, for a project that does not load: every asset the history names, in name order,
// with its last write. The relation is the one the warehouse's `ledger` last records for the asset; with a
// `catalog`, its existence decides the state and a view's kind is known. Other kinds are unknown (empty).
std::vector<AssetStatus> HistoryStatus(const std::vector<MaterializationRecord>& latest,
                                       const std::vector<LedgerEntry>& ledger,
                                       const std::optional<std::vector<TableInfo>>& catalog);

// The relation an asset's data lives in: an adopted table's own name, else the asset's relation.
Relation RelationOf(const Asset& asset);

// Relations left behind: written by Sluice (the ledger records them), still in the warehouse (`catalog`), and no
// asset's relation any more (its model was removed or renamed, or its relation_name changed). Names compare
// case-insensitively, as DuckDB resolves them. A staged deployment's physical object of a current relation
// (`<relation>__<deployment id>`) is never one: `janitor` drops those. Sorted; each once, as the catalog spells it, with
// its kind.
// A server warehouse (any adapter but duckdb, whose file is the project's own) keeps one ledger for every project
// that writes to it: there only relations in the project's own namespaces count.
std::vector<TableInfo> OrphanRelations(const Definitions& definitions, const std::vector<LedgerEntry>& ledger,
                                       const std::vector<TableInfo>& catalog);

}  // namespace sluice
