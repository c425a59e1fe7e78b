#include "service/history.hpp"

#include <chrono>

#include "core/clock.hpp"
#include "core/text.hpp"
#include "engine/backfill_plan.hpp"
#include "service/request_error.hpp"

namespace sluice::service {

namespace {

using nlohmann::json;

// What status reads besides the state store: the project (or, when it does not load, its settings), and the
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

StatusInputs ReadStatusInputs(const WorkspaceOptions& workspace) {
  StatusInputs inputs;
  try {
    inputs.project = &LoadProjectFor(workspace);
  } catch (const Error& error) {
    inputs.project_errors = error.diagnostics();
    try {
      inputs.settings = LoadSettingsFor(workspace);
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
          Plural(rebuilt.writes, "write") + " by " + Plural(rebuilt.runs, "run") +
          "); the runs themselves and their logs are not in the ledger, so `sluice runs` does not list them");
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

json AssetJson(const AssetStatus& status, const StatusReport& report) {
  auto or_null = [](const std::string& text) { return text.empty() ? json(nullptr) : json(text); };
  json item{{"asset", status.key.ToString()},        {"kind", or_null(status.kind)},
            {"relation", or_null(status.relation)},  {"pipeline", or_null(status.pipeline)},
            {"state", AssetStateName(status.state)}, {"exists", status.exists ? json(*status.exists) : json(nullptr)}};
  const std::optional<MaterializationRecord>& last = status.last;
  item["last_materialization"] =
      last ? json{{"run_id", last->run_id},
                  {"written_at", last->written_at},
                  {"rows", status.kind == "view" ? json(nullptr) : json(last->rows)},  // a view holds no rows
                  {"partition", or_null(last->partition)}}
           : json(nullptr);
  auto failed_days = report.failed_days.find(status.key.ToString());
  item["partitions"] = status.partitions ? PartitionsJson(*status.partitions, failed_days != report.failed_days.end()
                                                                                  ? failed_days->second
                                                                                  : std::vector<Date>{})
                                         : json(nullptr);
  if (status.kind.empty()) {  // history only: how many partitions it records
    size_t partitions = 0;
    for (const MaterializationRecord& record : report.latest) {
      partitions += record.asset == status.key.ToString() && !record.partition.empty();
    }
    if (partitions > 0) item["partitions_recorded"] = partitions;
  }
  return item;
}

json RelationsJson(const std::vector<TableInfo>& relations) {
  json list = json::array();
  for (const TableInfo& info : relations) {
    list.push_back({{"relation", info.relation.ToString()}, {"kind", info.is_view ? "view" : "table"}});
  }
  return list;
}

// From start (or creation, while queued) to finish, or to now while it runs; nullopt when a time does not parse.
std::optional<int64_t> DurationMs(const RunRecord& run) {
  auto from = ParseUtc(run.started_at.value_or(run.created_at));
  auto to = run.finished_at ? ParseUtc(*run.finished_at) : std::optional(std::chrono::system_clock::now());
  if (!from || !to) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(*to - *from).count();
}

}  // namespace

StatusReport ReadStatus(const WorkspaceOptions& workspace) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(workspace);
  StatusInputs inputs = ReadStatusInputs(workspace);
  StatusReport report;
  report.latest = Materializations(inputs, *state);
  report.assets =
      inputs.project != nullptr
          ? StatusOf(inputs.project->definitions, report.latest, inputs.catalog, SystemClock().TodayUtc())
          : HistoryStatus(report.latest, inputs.warehouse ? inputs.warehouse->ReadLedger() : std::vector<LedgerEntry>{},
                          inputs.catalog);
  report.failed_days = FailedPartitions(state->PartitionStatuses(), report.latest);
  if (inputs.project != nullptr && inputs.warehouse && inputs.catalog) {
    report.orphans = OrphanRelations(inputs.project->definitions, inputs.warehouse->ReadLedger(), *inputs.catalog);
  }
  if (!inputs.project_errors.empty()) {
    inputs.notes.insert(inputs.notes.begin(), "the project does not load (" + inputs.project_errors.front().code +
                                                  "; `sluice compile` shows why): showing the run history only");
  }
  report.datasets = state->LatestAssetMaterializations();
  if (const ProjectSettings* where = inputs.where()) {
    report.project = where->config.name;
    report.target = where->target.name;
  }
  report.project_errors = std::move(inputs.project_errors);
  report.notes = std::move(inputs.notes);
  return report;
}

json ToJson(const StatusReport& report) {
  json assets = json::array();
  for (const AssetStatus& status : report.assets) assets.push_back(AssetJson(status, report));
  json datasets = json::array();
  for (const AssetMaterializationRecord& record : report.datasets) {
    datasets.push_back({{"dataset", record.asset},
                        {"partition", record.partition},
                        {"run_id", record.run_id},
                        {"materialized_at", record.at}});
  }
  json errors = json::array();
  for (const Diagnostic& d : report.project_errors) errors.push_back(DiagnosticJson(d));
  return json{{"project", OrNull(report.project)},
              {"target", OrNull(report.target)},
              {"project_errors", errors},
              {"notes", report.notes},
              {"assets", assets},
              {"datasets", datasets},
              {"orphans", RelationsJson(report.orphans)}};
}

CleanResult Clean(const WorkspaceOptions& workspace, bool apply,
                  const std::function<void(const TableInfo&)>& on_relation) {
  const Project& project = LoadProjectFor(workspace);
  std::unique_ptr<Warehouse> warehouse;
  try {
    warehouse = OpenWarehouse(WarehouseConfigFor(project, apply ? AccessMode::kReadWrite : AccessMode::kReadOnly));
  } catch (const Error& error) {
    if (error.diagnostics().front().code != "SLU-WAREHOUSE-003") throw;
  }
  CleanResult result{apply, {}};
  if (!warehouse) return result;
  result.relations = OrphanRelations(project.definitions, warehouse->ReadLedger(), warehouse->ListRelations());
  for (const TableInfo& info : result.relations) {
    if (apply) warehouse->DropRelation(info.relation);
    if (on_relation) on_relation(info);
  }
  return result;
}

json ToJson(const CleanResult& result) {
  return json{{"applied", result.applied}, {"relations", RelationsJson(result.relations)}};
}

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

std::vector<RunSummary> ListRuns(const WorkspaceOptions& workspace, int limit) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(workspace);
  std::vector<RunSummary> runs;
  for (RunRecord& run : state->ListRuns(limit)) {
    RunProgress progress = ProgressOf(state->EventsForRun(run.run_id));
    std::optional<int64_t> duration = DurationMs(run);
    runs.push_back({std::move(run), std::move(progress), duration});
  }
  return runs;
}

json ToJson(const std::vector<RunSummary>& runs) {
  json list = json::array();
  for (const RunSummary& summary : runs) {
    const RunRecord& run = summary.run;
    const RunProgress& p = summary.progress;
    list.push_back({{"run_id", run.run_id},
                    {"status", RunStatusName(run.status)},
                    {"selection", run.selection},
                    {"job", run.job.empty() ? json(nullptr) : json(run.job)},
                    {"tags", run.tags},
                    {"partition_start", OrNull(run.partition_start)},
                    {"partition_end", OrNull(run.partition_end)},
                    {"created_at", run.created_at},
                    {"started_at", OrNull(run.started_at)},
                    {"finished_at", OrNull(run.finished_at)},
                    {"duration_ms", summary.duration_ms ? json(*summary.duration_ms) : json(nullptr)},
                    {"steps", {{"total", p.steps}, {"ok", p.ok}, {"failed", p.failed}, {"skipped", p.skipped}}},
                    {"waiting_for", summary.waiting() ? json(p.waiting_for) : json(nullptr)},
                    {"pid", run.pid},
                    {"host", run.host},
                    {"error", run.error}});
  }
  return json{{"runs", list}};
}

RunLog ReadRunLog(const WorkspaceOptions& workspace, const std::string& run_id) {
  std::unique_ptr<StateStore> state = OpenStateStoreFor(workspace);
  std::optional<RunRecord> run = state->GetRun(run_id);
  if (!run) {
    throw RequestError(
        Diagnostic{"SLU-CLI-001", "no run with id " + run_id, {}, "list runs with `" + ProgramName() + " runs`", {}});
  }
  return RunLog{std::move(*run), state->EventsForRun(run_id)};
}

json ToJson(const RunLog& log) {
  json list = json::array();
  for (const StoredEvent& event : log.events) {
    list.push_back(json{{"sequence", event.sequence},
                        {"at", event.at},
                        {"kind", EventKindName(event.event)},
                        {"payload", EventToJson(event.event)}});
  }
  return json{{"run_id", log.run.run_id}, {"status", RunStatusName(log.run.status)}, {"events", list}};
}

}  // namespace sluice::service
