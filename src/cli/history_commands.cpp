// status, runs, logs: read commands. They read the state store, never the warehouse file — except when
// the state store holds no materializations at all and the warehouse file exists: then `status` rebuilds
// them from the warehouse's own ledger (the state file was lost or is new; engine/asset_status.hpp).
#include <cstdio>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "core/clock.hpp"
#include "engine/asset_status.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
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

// The state store's materializations, rebuilt from the warehouse's ledger when it holds none; `rebuilt` says so.
std::vector<MaterializationRecord> Materializations(const Project& project, StateStore& state, std::string& rebuilt) {
  if (!state.HasMaterializations()) {
    std::unique_ptr<Warehouse> warehouse;
    try {
      warehouse = OpenWarehouse(WarehouseConfigFor(project, AccessMode::kReadOnly));
    } catch (const Error&) {
      // No warehouse file yet (or not readable now): nothing to rebuild from.
    }
    const size_t rows = warehouse ? RebuildMaterializations(*warehouse, state) : 0;
    if (rows > 0) rebuilt = "rebuilt run history from the warehouse ledger (" + std::to_string(rows) + " rows)";
  }
  return state.LatestMaterializations();
}

}  // namespace

int Status(const GlobalOptions& global, bool as_json) {
  const Project& project = LoadProjectFor(global);
  std::unique_ptr<StateStore> state = OpenStateStore(project.root);
  std::string rebuilt;
  const std::vector<MaterializationRecord> latest = Materializations(project, *state, rebuilt);
  json assets = json::array();
  for (const AssetStatus& status : StatusOf(project.definitions, latest, SystemClock().TodayUtc())) {
    json item{{"asset", status.key.ToString()},
              {"kind", status.kind},
              {"relation", status.relation},
              {"pipeline", status.pipeline.empty() ? json(nullptr) : json(status.pipeline)}};
    const std::optional<MaterializationRecord>& last = status.last;
    item["last_materialization"] =
        last ? json{{"run_id", last->run_id}, {"written_at", last->written_at}, {"rows", last->rows},
                    {"partition", last->partition.empty() ? json(nullptr) : json(last->partition)}}
             : json(nullptr);
    if (const std::optional<PartitionStatus>& partitions = status.partitions) {
      json missing = json::array();
      for (const DayRange& range : partitions->missing) missing.push_back({range.first.ToString(), range.last.ToString()});
      item["partitions"] = json{{"start_date", partitions->start_date.ToString()},
                                {"column", partitions->column},
                                {"total", partitions->total},
                                {"done", partitions->done},
                                {"missing", partitions->total - partitions->done},
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
  const Project& project = LoadProjectFor(global);
  std::unique_ptr<StateStore> state = OpenStateStore(project.root);
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
  const Project& project = LoadProjectFor(global);
  std::unique_ptr<StateStore> state = OpenStateStore(project.root);
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
