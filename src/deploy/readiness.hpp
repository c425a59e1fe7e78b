// Readiness of a staged deployment (`sluice audit backfill`, `sluice deployment audit ID`; StreamBuild reference §6):
// per replay root, the staged table against the active one and against its anchor, plus the project's SQL audits run
// on the staged relations, each giving ready / caution / not_ready; the deployment's verdict is the worst of them.
//   not_ready  the deployment is not backfilled (incomplete or failed); a staged table is missing; the staged table
//              holds fewer than minimum_staged_row_ratio of the active table's rows; its time lag behind the anchor
//              exceeds maximum_lag_seconds; an error-severity audit fails (or its SQL fails);
//   caution    the staged table holds fewer rows than the active one; rows past its frontier are missing but within
//              the time lag; a warning-severity audit fails; the lag cannot be measured (the root has no lineage
//              columns);
//   ready      otherwise.
// Lag: the rows the root's query makes of the anchor's rows past the staged table's frontier (its highest
// `_replay_offset` per partition, or its latest time or cursor) are rows the live path should already have delivered:
// their count (caution when any) and how far their latest `_replay_timestamp` is ahead of the staged table's (not_ready
// beyond maximum_lag_seconds). Measured on ClickHouse, where the staged path follows its anchor live; a DuckDB
// deployment is a snapshot of its upstreams.
// Audits: those reading a model the deployment creates or rebuilds, with each model's relation replaced by the
// deployment's physical one (its recorded objects); deferral by warmup does not apply (the staged path is new).
// Thresholds from `[defaults.deployment_readiness]`. Read-only.
// Thread-safety: functions over a Warehouse, as thread-safe as it is.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "definitions/definitions.hpp"
#include "deploy/deployment_metadata.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

enum class Readiness { kReady, kCaution, kNotReady };
std::string ReadinessName(Readiness readiness);  // ready | caution | not_ready

struct RootReadiness {
  std::string logical;
  std::string staged;                 // the staged physical table
  std::optional<std::string> active;  // the physical table bound now, when another deployment's
  std::string anchor;
  int64_t staged_rows = 0;
  std::optional<int64_t> active_rows;
  std::optional<double> row_ratio;      // staged / active
  std::optional<int64_t> pending_rows;  // rows the root's query makes of anchor rows past the staged frontier
  std::optional<int64_t> lag_seconds;   // how far the latest of those is ahead of the staged table
  Readiness verdict = Readiness::kReady;
  std::vector<std::string> reasons;
};

struct StagedAudit {
  std::string name;
  std::string severity;  // error | warning
  std::string status;    // pass | fail | error
  int64_t failing_rows = 0;
  std::string message;
};

struct ReadinessReport {
  std::string deployment_id;
  std::string state;  // planned | backfilled | failed
  Readiness verdict = Readiness::kReady;
  std::vector<std::string> reasons;  // deployment-wide (e.g. not backfilled)
  std::vector<RootReadiness> roots;
  std::vector<StagedAudit> audits;
  int64_t maximum_lag_seconds = 0;
  double minimum_staged_row_ratio = 0;
};

// The latest backfilled deployment that is not published (`audit backfill` without an id); nullopt when none.
std::optional<std::string> LatestStagedDeployment(Warehouse& warehouse, const std::string& name_space);

// Throws SLU-DEPLOY-028 for a deployment id the metadata does not know.
ReadinessReport AuditDeployment(const Definitions& definitions, Warehouse& warehouse, const std::string& name_space,
                                const std::string& deployment_id, int64_t maximum_lag_seconds,
                                double minimum_staged_row_ratio);

std::string ReadinessJson(const ReadinessReport& report);
std::string ReadinessText(const ReadinessReport& report);

}  // namespace sluice
