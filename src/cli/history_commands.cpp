// status, runs, logs: read commands. They read the state store, never the warehouse file — except when
// the state store holds no materializations at all and the warehouse file exists: then `status` rebuilds
// them from the warehouse's own ledger (the state file was lost or is new).
#include <cstdio>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "core/clock.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

// Rebuilds materializations from the warehouse ledger; returns the number of ledger rows read.
size_t RebuildFromLedger(const Project& project, MaterializationStore& store) {
  WarehouseConfig config = WarehouseConfigFor(project, AccessMode::kReadOnly);
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = OpenWarehouse(config);
  } catch (const Error&) {
    return 0;  // no warehouse file yet (or not readable now): nothing to rebuild from
  }
  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
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

struct Range {
  Date first;
  Date last;
};

std::vector<Range> MissingRanges(const std::vector<Date>& all, const std::set<std::string>& done) {
  std::vector<Range> ranges;
  for (Date d : all) {
    if (done.count(d.ToString())) continue;
    if (!ranges.empty() && ranges.back().last.AddDays(1) == d) {
      ranges.back().last = d;
    } else {
      ranges.push_back({d, d});
    }
  }
  return ranges;
}

std::string AssetKind(const Asset& asset) {
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

json EventJson(const StoredEvent& event) {
  return json{{"sequence", event.sequence},
              {"at", event.at},
              {"kind", EventKindName(event.event)},
              {"payload", EventToJson(event.event)}};
}

std::string EventLine(const RunEvent& event) {
  return std::visit(
      [](const auto& e) -> std::string {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, RunStartedEvent>) {
          return "run started: " + std::to_string(e.assets.size()) + " step(s), selection " + e.selection;
        } else if constexpr (std::is_same_v<T, StepStartedEvent>) {
          return e.asset + " started";
        } else if constexpr (std::is_same_v<T, MaterializationEvent>) {
          std::string line = e.asset + " materialized " + FormatCount(e.rows_written) + " rows";
          if (e.window_start) line += " in [" + *e.window_start + ", " + e.window_end.value_or("") + ")";
          if (e.rows_dropped > 0) line += ", " + FormatCount(e.rows_dropped) + " outside the window dropped";
          return line + " (sql " + e.sql_hash.substr(0, 12) + ")";
        } else if constexpr (std::is_same_v<T, StepFailedEvent>) {
          std::string line = e.asset + " failed";
          for (const EventDiagnostic& d : e.diagnostics) line += "\n    error[" + d.code + "]: " + d.message;
          return line;
        } else if constexpr (std::is_same_v<T, StepSkippedEvent>) {
          return e.asset + " skipped: " + e.reason;
        } else if constexpr (std::is_same_v<T, StepFinishedEvent>) {
          return e.asset + " finished in " + std::to_string(e.duration_ms) + " ms";
        } else {
          return "run finished: " + e.status + (e.message.empty() ? "" : " (" + e.message + ")");
        }
      },
      event);
}

}  // namespace

int Status(const GlobalOptions& global, bool as_json) {
  Project& project = LoadProjectFor(global);
  std::unique_ptr<SqliteStateStore> state = OpenStateStore(project);
  std::string rebuilt;
  if (!state->HasMaterializations()) {
    size_t rows = RebuildFromLedger(project, *state);
    if (rows > 0) rebuilt = "rebuilt run history from the warehouse ledger (" + std::to_string(rows) + " rows)";
  }
  std::map<std::string, std::vector<MaterializationRecord>> by_asset;
  for (MaterializationRecord& record : state->LatestMaterializations()) by_asset[record.asset].push_back(record);

  SystemClock clock;
  Date today = clock.TodayUtc();
  json assets = json::array();
  for (const AssetKey& key : project.definitions.TopologicalOrder()) {
    const Asset& asset = *project.definitions.Find(key);
    const std::vector<MaterializationRecord>& records = by_asset[key.ToString()];
    json item{{"asset", key.ToString()},
              {"kind", AssetKind(asset)},
              {"relation", key.name_space() + "." + asset.relation_name},
              {"pipeline", asset.pipeline.empty() ? json(nullptr) : json(asset.pipeline)}};
    const MaterializationRecord* last = nullptr;
    for (const MaterializationRecord& record : records) {
      if (last == nullptr || record.written_at > last->written_at) last = &record;
    }
    item["last_materialization"] =
        last ? json{{"run_id", last->run_id}, {"written_at", last->written_at}, {"rows", last->rows},
                    {"partition", last->partition.empty() ? json(nullptr) : json(last->partition)}}
             : json(nullptr);
    if (asset.partitions) {
      std::set<std::string> done;
      for (const MaterializationRecord& record : records) done.insert(record.partition);
      std::vector<Date> all = asset.partitions->partitions.AllKeys(today);
      size_t done_count = 0;
      for (Date d : all) done_count += done.count(d.ToString());
      json missing = json::array();
      for (const Range& range : MissingRanges(all, done)) {
        missing.push_back({range.first.ToString(), range.last.ToString()});
      }
      item["partitions"] = json{{"start_date", asset.partitions->partitions.start_date().ToString()},
                                {"column", asset.partitions->column},
                                {"total", all.size()},
                                {"done", done_count},
                                {"missing", all.size() - done_count},
                                {"missing_ranges", missing}};
    } else {
      item["partitions"] = nullptr;
    }
    assets.push_back(std::move(item));
  }
  if (as_json) {
    std::printf("%s\n", json{{"project", project.config.name}, {"target", project.target.name}, {"assets", assets}}
                            .dump(2).c_str());
    return 0;
  }
  if (!rebuilt.empty()) std::printf("note: %s\n", rebuilt.c_str());
  std::printf("%s  %s  %s  %s\n", Pad("ASSET", 36).c_str(), Pad("KIND", 8).c_str(), Pad("LAST MATERIALIZED", 26).c_str(),
              "ROWS / PARTITIONS");
  for (const json& item : assets) {
    std::string last = item["last_materialization"].is_null() ? "never" : item["last_materialization"]["written_at"].get<std::string>();
    std::string detail;
    if (!item["last_materialization"].is_null()) detail = FormatCount(item["last_materialization"]["rows"].get<int64_t>()) + " rows";
    if (!item["partitions"].is_null()) {
      const json& p = item["partitions"];
      detail = std::to_string(p["done"].get<size_t>()) + "/" + std::to_string(p["total"].get<size_t>()) + " days done";
      if (p["missing"].get<size_t>() > 0) {
        detail += ", missing ";
        size_t shown = 0;
        for (const json& range : p["missing_ranges"]) {
          if (shown++ == 3) {
            detail += ", …";
            break;
          }
          std::string a = range[0], b = range[1];
          detail += (shown > 1 ? ", " : "") + (a == b ? a : a + ".." + b);
        }
      }
    }
    std::printf("%s  %s  %s  %s\n", Pad(item["asset"], 36).c_str(), Pad(item["kind"], 8).c_str(), Pad(last, 26).c_str(),
                detail.c_str());
  }
  return 0;
}

int Runs(const GlobalOptions& global, bool as_json, int limit) {
  Project& project = LoadProjectFor(global);
  std::unique_ptr<SqliteStateStore> state = OpenStateStore(project);
  std::vector<RunRecord> runs = state->ListRuns(limit);
  if (as_json) {
    json list = json::array();
    for (const RunRecord& run : runs) {
      list.push_back({{"run_id", run.run_id},
                      {"status", RunStatusName(run.status)},
                      {"selection", run.selection},
                      {"partition_start", run.partition_start ? json(*run.partition_start) : json(nullptr)},
                      {"partition_end", run.partition_end ? json(*run.partition_end) : json(nullptr)},
                      {"created_at", run.created_at},
                      {"started_at", run.started_at ? json(*run.started_at) : json(nullptr)},
                      {"finished_at", run.finished_at ? json(*run.finished_at) : json(nullptr)},
                      {"pid", run.pid},
                      {"error", run.error}});
    }
    std::printf("%s\n", json{{"runs", list}}.dump(2).c_str());
    return 0;
  }
  std::printf("%s  %s  %s  %s  %s\n", Pad("RUN", 26).c_str(), Pad("STATUS", 8).c_str(), Pad("STARTED", 24).c_str(),
              Pad("PARTITIONS", 24).c_str(), "SELECTION");
  for (const RunRecord& run : runs) {
    std::string partitions = run.partition_start ? *run.partition_start + ".." + run.partition_end.value_or("") : "-";
    std::string line = Pad(run.run_id, 26) + "  " + Pad(RunStatusName(run.status), 8) + "  " +
                       Pad(run.started_at.value_or(run.created_at), 24) + "  " + Pad(partitions, 24) + "  " + run.selection;
    if (!run.error.empty()) line += "  (" + run.error + ")";
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

int Logs(const GlobalOptions& global, const std::string& run_id, bool as_json) {
  Project& project = LoadProjectFor(global);
  std::unique_ptr<SqliteStateStore> state = OpenStateStore(project);
  std::optional<RunRecord> run = state->GetRun(run_id);
  if (!run) {
    throw Error(Diagnostic{"SLU-CLI-001", "no run with id " + run_id, {}, "list runs with `sluice runs`", {}});
  }
  std::vector<StoredEvent> events = state->EventsForRun(run_id);
  if (as_json) {
    json list = json::array();
    for (const StoredEvent& event : events) list.push_back(EventJson(event));
    std::printf("%s\n", json{{"run_id", run_id}, {"status", RunStatusName(run->status)}, {"events", list}}.dump(2).c_str());
    return 0;
  }
  std::printf("run %s  %s  selection %s\n", run_id.c_str(), RunStatusName(run->status).c_str(), run->selection.c_str());
  for (const StoredEvent& event : events) std::printf("%s  %s\n", event.at.c_str(), EventLine(event.event).c_str());
  if (!run->error.empty()) std::printf("error: %s\n", run->error.c_str());
  return 0;
}

}  // namespace sluice::cli
