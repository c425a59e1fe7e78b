#include "engine/asset_status.hpp"

#include <algorithm>
#include <map>
#include <set>

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
        else if (compute.kind == ModelKind::kView) return "view";
        else return asset.partitions ? "daily" : "table";
      },
      asset.compute);
}

}  // namespace

size_t RebuildMaterializations(Warehouse& warehouse, MaterializationStore& store) {
  const std::vector<LedgerEntry> ledger = warehouse.ReadLedger();
  std::map<std::pair<std::string, std::string>, MaterializationRecord> latest;
  for (const LedgerEntry& entry : ledger) {
    std::vector<std::string> keys;
    if (entry.window) {
      for (Date d = entry.window->start; d < entry.window->end; d = d.AddDays(1)) keys.push_back(d.ToString());
    } else {
      keys.push_back("");
    }
    for (const std::string& key : keys) {
      latest[{entry.asset, key}] = {entry.asset, key, entry.run_id, entry.row_count, entry.sql_hash, entry.written_at};
    }
  }
  std::vector<MaterializationRecord> records;
  for (auto& [key, record] : latest) records.push_back(std::move(record));
  if (!records.empty()) store.RecordMaterializations(records);
  return ledger.size();
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
                                  Date today) {
  std::map<std::string, std::vector<const MaterializationRecord*>> by_asset;
  for (const MaterializationRecord& record : latest) by_asset[record.asset].push_back(&record);
  std::vector<AssetStatus> statuses;
  for (const AssetKey& key : definitions.TopologicalOrder()) {
    const Asset& asset = *definitions.Find(key);
    AssetStatus status{key, StatusKind(asset), key.name_space() + "." + asset.relation_name, asset.pipeline, {}, {}};
    const std::vector<const MaterializationRecord*>& records = by_asset[key.ToString()];
    for (const MaterializationRecord* record : records) {
      if (!status.last || record->written_at > status.last->written_at) status.last = *record;
    }
    if (asset.partitions) {
      std::vector<std::string> done;
      for (const MaterializationRecord* record : records) done.push_back(record->partition);
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

}  // namespace sluice
