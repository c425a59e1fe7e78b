#include "engine/asset_status.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "core/virtual_names.hpp"

namespace sluice {

namespace {

std::string StatusKind(const Asset& asset) {
  return std::visit(
      [&](const auto& compute) -> std::string {
        using T = std::decay_t<decltype(compute)>;
        if constexpr (std::is_same_v<T, SeedCompute>) return "seed";
        else if constexpr (std::is_same_v<T, ExternalTable>) return "adopted";
        else if constexpr (std::is_same_v<T, KafkaSource>) return "kafka";
        else if constexpr (std::is_same_v<T, PostgresSource>) return "postgres";
        else if constexpr (std::is_same_v<T, CodeCompute>) return asset.partitions ? "daily" : "table";
        else if (compute.kind == ModelKind::kView) return "view";
        else return asset.partitions ? "daily" : "table";
      },
      asset.compute);
}

// The catalog is sorted by relation; DuckDB resolves names case-insensitively, but the engine writes them as the
// project spells them, so an exact match is what a Sluice write leaves behind.
const TableInfo* FindInCatalog(const std::vector<TableInfo>& catalog, const Relation& relation) {
  auto found = std::lower_bound(catalog.begin(), catalog.end(), relation,
                                [](const TableInfo& info, const Relation& r) { return info.relation < r; });
  return found != catalog.end() && found->relation == relation ? &*found : nullptr;
}

}  // namespace

std::string AssetStateName(AssetState state) {
  switch (state) {
    case AssetState::kMaterialized: return "materialized";
    case AssetState::kMissing: return "missing";
    case AssetState::kNever: return "never";
    case AssetState::kPresent: return "present";
  }
  return "?";
}

RebuildSummary RebuildMaterializations(Warehouse& warehouse, MaterializationStore& store) {
  const std::vector<LedgerEntry> ledger = warehouse.ReadLedger();
  std::map<std::pair<std::string, std::string>, MaterializationRecord> latest;
  std::set<std::string> runs;
  for (const LedgerEntry& entry : ledger) {
    runs.insert(entry.run_id);
    const std::vector<std::string> keys = entry.window ? entry.window->DayKeys() : std::vector<std::string>{""};
    for (const std::string& key : keys) {
      latest[{entry.asset, key}] = {entry.asset, key, entry.run_id, entry.row_count, entry.sql_hash, entry.written_at};
    }
  }
  std::vector<MaterializationRecord> records;
  for (auto& [key, record] : latest) records.push_back(std::move(record));
  if (!records.empty()) store.RecordMaterializations(records);
  return RebuildSummary{ledger.size(), runs.size()};
}

std::vector<DayRange> MissingRanges(const std::vector<Date>& all, const std::vector<std::string>& done) {
  const std::set<std::string> done_keys(done.begin(), done.end());
  std::vector<DayRange> ranges;
  for (Date d : all) {
    if (done_keys.count(d.ToString())) continue;
    if (!ranges.empty() && ranges.back().last.AddDays(1) == d) {
      ranges.back().last = d;
    } else {
      ranges.push_back({d, d});
    }
  }
  return ranges;
}

std::vector<AssetStatus> StatusOf(const Definitions& definitions, const std::vector<MaterializationRecord>& latest,
                                  const std::optional<std::vector<TableInfo>>& catalog, Date today) {
  std::map<std::string, std::vector<const MaterializationRecord*>> by_asset;
  for (const MaterializationRecord& record : latest) by_asset[record.asset].push_back(&record);
  std::vector<AssetStatus> statuses;
  for (const AssetKey& key : definitions.TopologicalOrder()) {
    const Asset& asset = *definitions.Find(key);
    AssetStatus status{key, StatusKind(asset), key.name_space() + "." + asset.relation_name, asset.pipeline};
    const std::vector<const MaterializationRecord*>& records = by_asset[key.ToString()];
    for (const MaterializationRecord* record : records) {
      if (!status.last || record->written_at > status.last->written_at) status.last = *record;
    }
    const auto* adopted = std::get_if<ExternalTable>(&asset.compute);
    if (catalog) {
      Relation relation{key.name_space(), adopted ? adopted->table_name : asset.relation_name};
      status.exists = FindInCatalog(*catalog, relation) != nullptr;
    }
    if (adopted) {
      status.state = status.exists.value_or(true) ? AssetState::kPresent : AssetState::kMissing;
    } else if (status.last) {
      status.state = status.exists.value_or(true) ? AssetState::kMaterialized : AssetState::kMissing;
    }
    if (asset.partitions) {
      std::vector<std::string> done;
      if (status.exists.value_or(true)) {
        for (const MaterializationRecord* record : records) done.push_back(record->partition);
      }
      const std::vector<Date> all = asset.partitions->partitions.AllKeys(today);
      PartitionStatus partitions{asset.partitions->partitions.start_date(), asset.partitions->column, all.size(), 0,
                                 MissingRanges(all, done)};
      size_t missing = 0;
      for (const DayRange& range : partitions.missing) {
        missing += static_cast<size_t>(range.last.days_since_epoch() - range.first.days_since_epoch()) + 1;
      }
      partitions.done = all.size() - missing;
      status.partitions = std::move(partitions);
    }
    statuses.push_back(std::move(status));
  }
  return statuses;
}

std::vector<AssetStatus> HistoryStatus(const std::vector<MaterializationRecord>& latest,
                                       const std::vector<LedgerEntry>& ledger,
                                       const std::optional<std::vector<TableInfo>>& catalog) {
  std::map<std::string, Relation> relations;  // oldest first: the last row wins
  for (const LedgerEntry& entry : ledger) {
    if (entry.relation) relations[entry.asset] = *entry.relation;
  }
  std::vector<AssetStatus> statuses;
  for (const MaterializationRecord& record : latest) {  // sorted by asset
    if (statuses.empty() || statuses.back().key.ToString() != record.asset) {
      AssetStatus status{AssetKey::Parse(record.asset), "", "", ""};
      status.state = AssetState::kMaterialized;
      auto relation = relations.find(record.asset);
      if (relation != relations.end()) {
        status.relation = relation->second.ToString();
        if (catalog) {
          const TableInfo* found = FindInCatalog(*catalog, relation->second);
          status.exists = found != nullptr;
          if (!found) status.state = AssetState::kMissing;
          if (found && found->is_view) status.kind = "view";
        }
      }
      statuses.push_back(std::move(status));
    }
    std::optional<MaterializationRecord>& last = statuses.back().last;
    if (!last || record.written_at > last->written_at) last = record;
  }
  return statuses;
}

Relation RelationOf(const Asset& asset) {
  if (const auto* external = std::get_if<ExternalTable>(&asset.compute)) {
    return Relation{asset.key.name_space(), external->table_name};
  }
  return Relation{asset.key.name_space(), asset.relation_name};
}

std::vector<TableInfo> OrphanRelations(const Definitions& definitions, const std::vector<LedgerEntry>& ledger,
                                       const std::vector<TableInfo>& catalog) {
  std::set<std::string> current;
  std::set<std::string> namespaces;
  for (const Asset& asset : definitions.assets()) {
    current.insert(RelationKey(RelationOf(asset)));
    namespaces.insert(RelationKey(Relation{asset.key.name_space(), ""}));
  }
  const bool shared_ledger = definitions.project().adapter != "duckdb";
  std::set<std::string> written;
  for (const LedgerEntry& entry : ledger) {
    if (entry.relation) written.insert(RelationKey(*entry.relation));
  }
  std::vector<TableInfo> orphans;
  for (const TableInfo& info : catalog) {
    std::string name = RelationKey(info.relation);
    if (shared_ledger && !namespaces.count(RelationKey(Relation{info.relation.name_space, ""}))) continue;
    // A deployment's physical object of a current relation is the janitor's to drop, within its retention rules.
    if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(info.relation.name);
        parts && current.count(RelationKey(Relation{info.relation.name_space, parts->logical}))) {
      continue;
    }
    if (written.count(name) && !current.count(name)) orphans.push_back(info);
  }
  return orphans;
}

}  // namespace sluice
