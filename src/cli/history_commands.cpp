// status, runs, logs: read commands. `status` shows, for a partitioned asset, the days done, the days whose latest
// backfill outcome is a failure, and the days missing. `runs` and `logs` read the state store only, so they work whatever state the
// project's files are in. `status` also reads the project and the warehouse's catalog (read-only): when the project
// does not load it shows the history alone; when the state store holds no materializations and the warehouse has a
// ledger, it rebuilds them from it (the state file was lost or is new; engine/asset_status.hpp). None of them waits:
// while another process holds the warehouse (a DuckDB run), `status` says so and shows what the state store records.
#include <chrono>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/project_context.hpp"
#include "cli/usage_error.hpp"
#include "core/clock.hpp"
#include "engine/asset_status.hpp"
#include "engine/backfill_plan.hpp"

namespace sluice::cli {

namespace {

using nlohmann::json;

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

std::string Plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
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
          std::string line = e.view ? e.asset + " view created or replaced"
                                    : e.asset + " materialized " + FormatCount(e.rows_written) +
                                          (e.rows_written == 1 ? " row" : " rows");
          if (e.window_start) line += " in [" + *e.window_start + ", " + e.window_end.value_or("") + ")";
          if (e.rows_dropped > 0) line += ", " + FormatCount(e.rows_dropped) + " outside the window dropped";
          return line + " (sql " + e.sql_hash.substr(0, 12) + ")";
        } else if constexpr (std::is_same_v<T, StepFailedEvent>) {
          std::string line = e.asset + " failed";
          for (const EventDiagnostic& d : e.diagnostics) {
            line += "\n    " + DiagnosticLine(d.code, d.message, SourceLocation{d.file, d.line, d.column});
          }
          return line;
        } else if constexpr (std::is_same_v<T, StepSkippedEvent>) {
          return e.asset + " skipped: " + e.reason;
        } else if constexpr (std::is_same_v<T, StepFinishedEvent>) {
          return e.asset + " finished in " + std::to_string(e.duration_ms) + " ms";
        } else if constexpr (std::is_same_v<T, RunWaitingEvent>) {
          return "run queued: " + e.reason;
        } else if constexpr (std::is_same_v<T, StatementEvent>) {
          return e.step + " ran statement " + e.sha256.substr(0, 12);
        } else if constexpr (std::is_same_v<T, StepNoteEvent>) {
          return e.step + ": " + e.note;
        } else {
          return "run finished: " + e.status + (e.message.empty() ? "" : " (" + e.message + ")");
        }
      },
      event);
}

// What `status` reads besides the state store: the project (or, when it does not load, its settings), and the
// warehouse's catalog.
struct StatusInputs {
  const Project* project = nullptr;               // null when the project does not load
  std::vector<Diagnostic> project_errors;         // why it does not
  std::optional<ProjectSettings> settings;        // when only the settings load
  std::unique_ptr<Warehouse> warehouse;           // open read-only; null when there is no file or it cannot be read
  std::optional<std::vector<TableInfo>> catalog;  // nullopt when it could not be read
  std::vector<std::string> notes;

  const ProjectSettings* where() const { return project != nullptr ? project : settings ? &*settings : nullptr; }
};

StatusInputs ReadStatusInputs(const GlobalOptions& global) {
  StatusInputs inputs;
  try {
    inputs.project = &LoadProjectFor(global);
  } catch (const Error& error) {
    inputs.project_errors = error.diagnostics();
    try {
      inputs.settings = LoadSettingsFor(global);
    } catch (const Error&) {
      // The settings file is the broken one: the history alone is all there is to show.
    }
  }
  const ProjectSettings* where = inputs.where();
  if (where == nullptr) return inputs;
  try {
    WarehouseConfig config = WarehouseConfigFor(*where, AccessMode::kReadOnly);
    config.wait.timeout = std::chrono::milliseconds(0);  // status never waits for a process holding the warehouse
    inputs.warehouse = OpenWarehouse(config);
    inputs.catalog = inputs.warehouse->ListRelations();
  } catch (const Error& error) {
    const Diagnostic& first = error.diagnostics().front();
    if (first.code == "SLU-WAREHOUSE-003") {
      inputs.catalog.emplace();  // no warehouse file: nothing is in it
    } else if (first.code == "SLU-WAREHOUSE-007") {
      inputs.notes.push_back("warehouse busy: a run is writing it, or another process has it open (" + first.message +
                             "); status from the state store, without checking the warehouse");
    } else {
      inputs.notes.push_back("the warehouse was not checked (" + first.message + ")");
    }
  }
  return inputs;
}

// The state store's materializations, rebuilt from the warehouse's ledger when it holds none.
std::vector<MaterializationRecord> Materializations(StatusInputs& inputs, StateStore& state) {
  if (!state.HasMaterializations() && inputs.warehouse) {
    const RebuildSummary rebuilt = RebuildMaterializations(*inputs.warehouse, state);
    if (rebuilt.writes > 0) {
      inputs.notes.push_back(
          "the run history is new or was lost: rebuilt which assets and partitions are materialized from the "
          "warehouse ledger (" +
          Plural(rebuilt.writes, "write") + " by " + Plural(rebuilt.runs, "run") + "); the runs themselves and their logs are not in the ledger, so `sluice runs` does not list them");
    }
  }
  return state.LatestMaterializations();
}

// Per asset, the partitions whose latest outcome (a backfill's) is a failure not followed by a materialization.
std::map<std::string, std::vector<Date>> FailedPartitions(const std::vector<PartitionStatusRecord>& outcomes,
                                                          const std::vector<MaterializationRecord>& latest) {
  std::map<std::pair<std::string, std::string>, std::string> written_at;
  for (const MaterializationRecord& record : latest) written_at[{record.asset, record.partition}] = record.written_at;
  std::map<std::string, std::vector<Date>> failed;
  for (const PartitionStatusRecord& outcome : outcomes) {
    if (outcome.state != PartitionState::kFailed) continue;
    auto written = written_at.find({outcome.asset, outcome.partition});
    if (written != written_at.end() && written->second >= outcome.at) continue;
    if (std::optional<Date> day = Date::Parse(outcome.partition)) failed[outcome.asset].push_back(*day);
  }
  return failed;
}

json PartitionsJson(const PartitionStatus& partitions, const std::vector<Date>& failed) {
  json missing = json::array();
  for (const DayRange& range : partitions.missing) missing.push_back({range.first.ToString(), range.last.ToString()});
  json failed_ranges = json::array();
  for (const DayRange& range : ContiguousRanges(failed)) {
    failed_ranges.push_back({range.first.ToString(), range.last.ToString()});
  }
  return json{{"start_date", partitions.start_date.ToString()},
              {"column", partitions.column},
              {"total", partitions.total},
              {"done", partitions.done},
              {"missing", partitions.total - partitions.done},
              {"missing_ranges", missing},
              {"failed", failed.size()},
              {"failed_ranges", failed_ranges}};
}

json StatusJson(const AssetStatus& status, const std::vector<MaterializationRecord>& latest,
                const std::map<std::string, std::vector<Date>>& failed) {
  auto or_null = [](const std::string& text) { return text.empty() ? json(nullptr) : json(text); };
  json item{{"asset", status.key.ToString()},
            {"kind", or_null(status.kind)},
            {"relation", or_null(status.relation)},
            {"pipeline", or_null(status.pipeline)},
            {"state", AssetStateName(status.state)},
            {"exists", status.exists ? json(*status.exists) : json(nullptr)}};
  const std::optional<MaterializationRecord>& last = status.last;
  item["last_materialization"] =
      last ? json{{"run_id", last->run_id},
                  {"written_at", last->written_at},
                  {"rows", status.kind == "view" ? json(nullptr) : json(last->rows)},  // a view holds no rows
                  {"partition", or_null(last->partition)}}
           : json(nullptr);
  auto failed_days = failed.find(status.key.ToString());
  item["partitions"] =
      status.partitions
          ? PartitionsJson(*status.partitions, failed_days != failed.end() ? failed_days->second : std::vector<Date>{})
          : json(nullptr);
  if (status.kind.empty()) {  // history only: how many partitions it records
    size_t partitions = 0;
    for (const MaterializationRecord& record : latest) {
      partitions += record.asset == status.key.ToString() && !record.partition.empty();
    }
    if (partitions > 0) item["partitions_recorded"] = partitions;
  }
  return item;
}

std::string StatusDetail(const json& item) {
  const json& last = item["last_materialization"];
  if (!item["partitions"].is_null()) {
    const json& p = item["partitions"];
    std::string detail =
        std::to_string(p["done"].get<size_t>()) + "/" + std::to_string(p["total"].get<size_t>()) + " days done";
    if (p["failed"].get<size_t>() > 0) {
      detail += ", " + std::to_string(p["failed"].get<size_t>()) + " failed (";
      size_t shown = 0;
      for (const json& range : p["failed_ranges"]) {
        if (shown++ == 3) {
          detail += ", …";
          break;
        }
        std::string a = range[0], b = range[1];
        detail += (shown > 1 ? ", " : "") + (a == b ? a : a + ".." + b);
      }
      detail += ")";
    }
    if (p["missing"].get<size_t>() == 0) return detail;
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
    return detail;
  }
  if (item["state"] == "missing") return "not in the warehouse";
  if (item.contains("partitions_recorded")) {
    return std::to_string(item["partitions_recorded"].get<size_t>()) + " days recorded";
  }
  if (item["kind"] == "view") return "view";
  if (!last.is_null() && !last["rows"].is_null()) return FormatCount(last["rows"].get<int64_t>()) + " rows";
  return "";
}

}  // namespace

int Status(const GlobalOptions& global, bool as_json) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(global);
  StatusInputs inputs = ReadStatusInputs(global);
  const std::vector<MaterializationRecord> latest = Materializations(inputs, *state);
  const std::vector<AssetStatus> statuses =
      inputs.project != nullptr
          ? StatusOf(inputs.project->definitions, latest, inputs.catalog, SystemClock().TodayUtc())
          : HistoryStatus(latest, inputs.warehouse ? inputs.warehouse->ReadLedger() : std::vector<LedgerEntry>{},
                          inputs.catalog);
  const std::map<std::string, std::vector<Date>> failed = FailedPartitions(state->PartitionStatuses(), latest);
  json assets = json::array();
  for (const AssetStatus& status : statuses) assets.push_back(StatusJson(status, latest, failed));
  std::vector<TableInfo> orphans;
  if (inputs.project != nullptr && inputs.warehouse && inputs.catalog) {
    orphans = OrphanRelations(inputs.project->definitions, inputs.warehouse->ReadLedger(), *inputs.catalog);
  }
  json orphan_list = json::array();
  for (const TableInfo& info : orphans) {
    orphan_list.push_back({{"relation", info.relation.ToString()}, {"kind", info.is_view ? "view" : "table"}});
  }
  if (!inputs.project_errors.empty()) {
    inputs.notes.insert(inputs.notes.begin(), "the project does not load (" + inputs.project_errors.front().code +
                                                  "; `sluice compile` shows why): showing the run history only");
  }
  // Datasets orchestrated jobs materialize (Starlake loads and transforms): the newest record of each.
  json datasets = json::array();
  for (const AssetMaterializationRecord& record : state->LatestAssetMaterializations()) {
    datasets.push_back({{"dataset", record.asset},
                        {"partition", record.partition},
                        {"run_id", record.run_id},
                        {"materialized_at", record.at}});
  }
  const ProjectSettings* where = inputs.where();
  if (as_json) {
    json errors = json::array();
    for (const Diagnostic& d : inputs.project_errors) errors.push_back(DiagnosticJson(d));
    std::printf("%s\n", json{{"project", where ? json(where->config.name) : json(nullptr)},
                             {"target", where ? json(where->target.name) : json(nullptr)},
                             {"project_errors", errors},
                             {"notes", inputs.notes},
                             {"assets", assets},
                             {"datasets", datasets},
                             {"orphans", orphan_list}}
                            .dump(2)
                            .c_str());
    return 0;
  }
  for (const std::string& note : inputs.notes) std::printf("note: %s\n", note.c_str());
  if (!assets.empty() || datasets.empty()) {  // a project of orchestrated jobs only shows its datasets
    std::printf("%s  %s  %s  %s  %s\n", Pad("ASSET", 36).c_str(), Pad("KIND", 8).c_str(), Pad("STATE", 12).c_str(),
                Pad("LAST MATERIALIZED", 26).c_str(), "ROWS / PARTITIONS");
  }
  for (const json& item : assets) {
    const json& last = item["last_materialization"];
    std::string kind = item["kind"].is_null() ? "?" : item["kind"].get<std::string>();
    std::string written = last.is_null() ? "never" : last["written_at"].get<std::string>();
    std::printf("%s  %s  %s  %s  %s\n", Pad(item["asset"], 36).c_str(), Pad(kind, 8).c_str(),
                Pad(item["state"], 12).c_str(), Pad(written, 26).c_str(), StatusDetail(item).c_str());
  }
  if (!datasets.empty()) {
    std::printf("%s%s  %s  %s  %s\n", assets.empty() ? "" : "\n", Pad("DATASET (orchestrated jobs)", 36).c_str(),
                Pad("LAST MATERIALIZED", 26).c_str(), Pad("PARTITION", 26).c_str(), "RUN");
    for (const json& item : datasets) {
      std::printf("%s  %s  %s  %s\n", Pad(item["dataset"], 36).c_str(), Pad(item["materialized_at"], 26).c_str(),
                  Pad(item["partition"], 26).c_str(), item["run_id"].get<std::string>().c_str());
    }
  }
  if (!orphans.empty()) {
    std::printf("\nleft behind by removed or renamed models (`sluice clean --apply` drops them):\n");
    for (const TableInfo& info : orphans) {
      std::printf("  %s  %s\n", Pad(info.relation.ToString(), 36).c_str(), info.is_view ? "view" : "table");
    }
  }
  return 0;
}

int Clean(const GlobalOptions& global, const CleanOptions& options) {
  const Project& project = LoadProjectFor(global);
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = OpenWarehouse(WarehouseConfigFor(project, options.apply ? AccessMode::kReadWrite : AccessMode::kReadOnly));
  } catch (const Error& error) {
    if (error.diagnostics().front().code != "SLU-WAREHOUSE-003") throw;
  }
  std::vector<TableInfo> orphans;
  if (warehouse) orphans = OrphanRelations(project.definitions, warehouse->ReadLedger(), warehouse->ListRelations());
  json list = json::array();
  for (const TableInfo& info : orphans) {
    if (options.apply) warehouse->DropRelation(info.relation);
    list.push_back({{"relation", info.relation.ToString()}, {"kind", info.is_view ? "view" : "table"}});
    if (!options.json) {
      std::printf("%s %s %s\n", options.apply ? "dropped" : "would drop", info.is_view ? "view" : "table",
                  info.relation.ToString().c_str());
    }
  }
  if (options.json) {
    std::printf("%s\n", json{{"applied", options.apply}, {"relations", list}}.dump(2).c_str());
  } else if (orphans.empty()) {
    std::printf("nothing to clean: every relation Sluice wrote belongs to a model or source\n");
  } else if (!options.apply) {
    std::printf("dry run: %s; run `sluice clean --apply` to drop them\n", Plural(orphans.size(), "relation").c_str());
  }
  return 0;
}

namespace {

// What the events of one run say: its steps and their outcomes, and why it waits while it is queued.
struct RunProgress {
  size_t steps = 0, ok = 0, failed = 0, skipped = 0;
  std::string waiting_for;  // the latest run_waiting reason
};

RunProgress ProgressOf(const std::vector<StoredEvent>& events) {
  RunProgress progress;
  for (const StoredEvent& stored : events) {
    std::visit(
        [&](const auto& e) {
          using T = std::decay_t<decltype(e)>;
          if constexpr (std::is_same_v<T, RunStartedEvent>) progress.steps = e.assets.size();
          if constexpr (std::is_same_v<T, StepFinishedEvent>) ++progress.ok;
          if constexpr (std::is_same_v<T, StepFailedEvent>) ++progress.failed;
          if constexpr (std::is_same_v<T, StepSkippedEvent>) ++progress.skipped;
          if constexpr (std::is_same_v<T, RunWaitingEvent>) progress.waiting_for = e.reason;
        },
        stored.event);
  }
  return progress;
}

// From start (or creation, while queued) to finish, or to now while it runs; nullopt when a time does not parse.
std::optional<int64_t> DurationMs(const RunRecord& run) {
  auto from = ParseUtc(run.started_at.value_or(run.created_at));
  auto to = run.finished_at ? ParseUtc(*run.finished_at) : std::optional(std::chrono::system_clock::now());
  if (!from || !to) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*to - *from).count();
}

std::string DurationText(std::optional<int64_t> ms) {
  if (!ms) return "-";
  char text[32];
  if (*ms < 60000) {
    std::snprintf(text, sizeof text, "%.1fs", static_cast<double>(*ms) / 1000.0);
  } else {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(*ms / 60000),
                  static_cast<long long>((*ms / 1000) % 60));
  }
  return text;
}

}  // namespace

int Runs(const GlobalOptions& global, bool as_json, int limit) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(global);
  std::vector<RunRecord> runs = state->ListRuns(limit);
  std::vector<RunProgress> progress;
  for (const RunRecord& run : runs) progress.push_back(ProgressOf(state->EventsForRun(run.run_id)));
  if (as_json) {
    json list = json::array();
    for (size_t i = 0; i < runs.size(); ++i) {
      const RunRecord& run = runs[i];
      const RunProgress& p = progress[i];
      std::optional<int64_t> duration = DurationMs(run);
      list.push_back({{"run_id", run.run_id},
                      {"status", RunStatusName(run.status)},
                      {"selection", run.selection},
                      {"job", run.job.empty() ? json(nullptr) : json(run.job)},
                      {"tags", run.tags},
                      {"partition_start", run.partition_start ? json(*run.partition_start) : json(nullptr)},
                      {"partition_end", run.partition_end ? json(*run.partition_end) : json(nullptr)},
                      {"created_at", run.created_at},
                      {"started_at", run.started_at ? json(*run.started_at) : json(nullptr)},
                      {"finished_at", run.finished_at ? json(*run.finished_at) : json(nullptr)},
                      {"duration_ms", duration ? json(*duration) : json(nullptr)},
                      {"steps", {{"total", p.steps}, {"ok", p.ok}, {"failed", p.failed}, {"skipped", p.skipped}}},
                      {"waiting_for", run.status == RunStatus::kQueued && !p.waiting_for.empty() ? json(p.waiting_for)
                                                                                                : json(nullptr)},
                      {"pid", run.pid},
                      {"host", run.host},
                      {"error", run.error}});
    }
    std::printf("%s\n", json{{"runs", list}}.dump(2).c_str());
    return 0;
  }
  std::printf("%s  %s  %s  %s  %s  %s  %s\n", Pad("RUN", 26).c_str(), Pad("STATUS", 8).c_str(),
              Pad("STARTED", 24).c_str(), Pad("DURATION", 8).c_str(), Pad("STEPS", 18).c_str(),
              Pad("PARTITIONS", 22).c_str(), "SELECTION");
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunRecord& run = runs[i];
    const RunProgress& p = progress[i];
    bool waiting = run.status == RunStatus::kQueued && !p.waiting_for.empty();
    std::string steps = "-";
    if (p.steps > 0) {
      steps = std::to_string(p.ok) + "/" + std::to_string(p.steps) + " ok";
      if (p.failed > 0) steps += ", " + std::to_string(p.failed) + " failed";
      if (p.skipped > 0) steps += ", " + std::to_string(p.skipped) + " skipped";
    }
    std::string partitions = run.partition_start ? *run.partition_start + ".." + run.partition_end.value_or("") : "-";
    std::string line = Pad(run.run_id, 26) + "  " + Pad(waiting ? "WAITING" : RunStatusName(run.status), 8) + "  " +
                       Pad(run.started_at.value_or(run.created_at), 24) + "  " + Pad(DurationText(DurationMs(run)), 8) +
                       "  " + Pad(steps, 18) + "  " + Pad(partitions, 22) + "  " + run.selection;
    if (waiting) line += "  (" + p.waiting_for + ")";
    if (!run.error.empty()) line += "  (" + run.error + ")";
    std::printf("%s\n", line.c_str());
  }
  return 0;
}

int Logs(const GlobalOptions& global, const std::string& run_id, bool as_json) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(global);
  std::optional<RunRecord> run = state->GetRun(run_id);
  if (!run) {
    throw UsageError(Diagnostic{"SLU-CLI-001", "no run with id " + run_id, {}, "list runs with `sluice runs`", {}});
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
