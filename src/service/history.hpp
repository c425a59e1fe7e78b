// Reading what happened: `status` (assets, partitions done / failed / missing, orchestrated datasets, relations left
// behind), `clean` (dropping those relations), `runs` and `logs`. Runs and logs read the state store only, so they
// work whatever state the project's files are in. Status also reads the project and the warehouse's catalog
// (read-only): when the project does not load it shows the history alone; when the state store holds no
// materializations and the warehouse has a ledger, it rebuilds them from it (engine/asset_status.hpp). Nothing here
// waits: while another process holds the warehouse (a DuckDB run), status says so in a note and shows what the state
// store records.
// Each result's ToJson is the document faces show (`--json`, the web UI's API).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/asset_status.hpp"
#include "service/workspace.hpp"
#include "state/state_store.hpp"

namespace sluice::service {

struct StatusReport {
  std::optional<std::string> project;  // its name; unset when not even its settings load
  std::optional<std::string> target;
  std::vector<Diagnostic> project_errors;  // why the project does not load (then only the history is shown)
  std::vector<std::string> notes;          // what status could not check, or rebuilt
  std::vector<AssetStatus> assets;
  std::vector<MaterializationRecord> latest;             // the newest materialization of each asset and partition
  std::map<std::string, std::vector<Date>> failed_days;  // per asset, days whose latest outcome is a failure
  std::vector<AssetMaterializationRecord> datasets;      // what orchestrated jobs materialized, newest of each
  std::vector<TableInfo> orphans;                        // relations Sluice wrote that no model or source owns
};

StatusReport ReadStatus(const WorkspaceOptions& workspace);
// {project, target, project_errors, notes, assets: [{asset, kind, relation, pipeline, state, exists,
// last_materialization, partitions, partitions_recorded?}], datasets, orphans}.
nlohmann::json ToJson(const StatusReport& report);

struct CleanResult {
  bool applied = false;
  std::vector<TableInfo> relations;  // dropped when applied, else those that would be
};

// The relations left behind by removed or renamed models; dropped when `apply`. `on_relation` is called for each,
// after its drop.
CleanResult Clean(const WorkspaceOptions& workspace, bool apply,
                  const std::function<void(const TableInfo&)>& on_relation = {});
nlohmann::json ToJson(const CleanResult& result);

// What the events of one run say: its steps and their outcomes, and why it waits while it is queued.
struct RunProgress {
  size_t steps = 0, ok = 0, failed = 0, skipped = 0;
  std::string waiting_for;  // the latest run_waiting reason
};
RunProgress ProgressOf(const std::vector<StoredEvent>& events);

struct RunSummary {
  RunRecord run;
  RunProgress progress;
  std::optional<int64_t> duration_ms;  // from start (or creation, while queued) to finish or now
  bool waiting() const { return run.status == RunStatus::kQueued && !progress.waiting_for.empty(); }
};

// The newest `limit` runs.
std::vector<RunSummary> ListRuns(const WorkspaceOptions& workspace, int limit);
nlohmann::json ToJson(const std::vector<RunSummary>& runs);

struct RunLog {
  RunRecord run;
  std::vector<StoredEvent> events;
};

// The run's record and events. Throws RequestError SLU-CLI-001 when there is no such run.
RunLog ReadRunLog(const WorkspaceOptions& workspace, const std::string& run_id);
nlohmann::json ToJson(const RunLog& log);

}  // namespace sluice::service
