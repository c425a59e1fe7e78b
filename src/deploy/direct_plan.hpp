// DirectPlan: what `sluice build` does to deploy the selected pipelines in direct mode (StreamBuild reference
// §7.2), as plain data. `plan` prints it, `compile` writes it as workflow files, `build` executes it: one value,
// so the preview cannot drift from the run. Built from Definitions and the warehouse's Capabilities alone, with
// no connection; what the warehouse holds now is read separately (deploy/actual_state.hpp).
//
// Scope: the selected models plus everything downstream of them (all of the project's models when nothing is
// selected). On ClickHouse the phases are:
//   prepare      CREATE DATABASE IF NOT EXISTS; each managed Kafka source's objects IF NOT EXISTS; each seed the scope
//                reads loaded when its file changed; when planned for a server (RunRendering), the realization
//                check: every table, view and materialized view of the scope created under another name in `_sluice`
//                and dropped again, so that what the server refuses stops the build before its teardown
//   teardown     every object in scope dropped, downstream first
//   realization  tables, the materialized views of non-root tables, and views, upstream first
//   replay       per root (a table in scope whose driving input is not): its materialized view is created and the
//                history of its driving relation inserted, inside one quiet window (see direct_executor.hpp)
//   audit        the audits whose models were all rebuilt and have no warmup
// On DuckDB there are no materialized views: each table in scope is replaced whole by the engine's run path (the
// same write `sluice run --full-refresh` does), views are replaced, then the audits run.
// Thread-safety: plain values.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/asset_key.hpp"
#include "sluice/date.hpp"
#include "definitions/definitions.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

enum class DeployPhase { kPrepare, kTeardown, kRealization, kReplay, kAudit };
std::string DeployPhaseName(DeployPhase phase);  // prepare | teardown | realization | replay | audit

// One statement as it runs and as it is shown: `shown` has secrets redacted (equal to `sql` when there are none).
struct PlanStatement {
  std::string sql;
  std::string shown;
};

// A replay that keeps the history before a lower bound instead of replaying it (virtual deployments, StreamBuild
// reference §8): rows of the anchor at or before the bound are not replayed; a seeded replay copies the active
// table's rows at or before it first (its columns shared with the new table), an unseeded one leaves them out.
struct BoundedReplay {
  bool seeded = false;
  // The bound: the active table's frontier (its highest lineage position per partition, time or cursor), or a time
  // ("YYYY-MM-DD HH:MM:SS", UTC; given, or the boundary time minus a lookback) taken as the anchor's position then.
  bool at_active_frontier = false;
  std::string lower_time;
  std::optional<int64_t> lookback_seconds;  // else: the bound is the boundary time minus this
  std::string active_table;               // qualified: seeded from, its frontier read
  std::vector<std::string> seed_columns;  // seeded replays: the columns copied
};

// What a replay step fills, and from where. The INSERT's WHERE holds kReplayBoundaryPlaceholder, replaced at run
// time by the boundary the executor captures (per-partition offsets, a time, or a cursor).
struct ReplaySpec {
  AssetKey root;
  AssetKey driving;               // the source (or preserved model) whose history is replayed
  std::string driving_namespace;  // its physical table, watched for inserts during the replay
  std::string driving_table;
  // offsets | timestamp | landed_at | cursor; snapshot when the driving table has no lineage columns (a seed, a model
  // without its source's): the whole table is replayed, the quiet window's watermark alone proving that no row
  // arrived meanwhile, so no row is lost or doubled either.
  std::string mode;
  // A managed Kafka source's landing view, detached while the replay runs so nothing lands meanwhile.
  std::optional<std::string> landing_view;
  std::vector<AssetKey> subtree;  // the root and the models in scope below it, upstream first
  std::optional<BoundedReplay> bounded;  // unset: the whole history is replayed
};

inline constexpr const char* kReplayBoundaryPlaceholder = "{replay_boundary}";

// The canonical lineage columns of a replay mode: `_replay_partition`, `_replay_offset` (offsets); none (snapshot); else
// the one column the mode orders by (`_replay_timestamp`, `_replay_landed_at`, `_replay_cursor`).
std::vector<std::string> LineageColumns(const std::string& mode);

struct PlanStep {
  DeployPhase phase = DeployPhase::kPrepare;
  std::string name;  // unique within the plan, usable as a file name: e.g. create_table_tbl__orders
  std::optional<AssetKey> asset;
  std::optional<std::string> name_space;  // a prepare step creating a database (schema): which one
  std::vector<PlanStatement> statements;
  std::optional<ReplaySpec> replay;   // replay steps
  std::optional<std::string> audit;   // audit steps: the audit's name
  // Prepare steps of a ClickHouse build: a seed the scope reads, loaded (when its file changed since its last load) by
  // the warehouse's seed write, with its ledger row, before anything is dropped.
  std::optional<AssetKey> seed;
  // Runs even after an earlier step failed (the realization check's cleanup).
  bool always = false;
};

struct PipelineScope {
  std::string name;
  std::vector<std::string> models;  // in scope, sorted
  std::optional<std::string> confirmation;  // a protected pipeline's token
  std::string protection_warning;
};

struct DirectPlan {
  std::string adapter;                // clickhouse | duckdb
  std::vector<std::string> selection;  // as typed
  std::vector<PipelineScope> pipelines;
  std::vector<AssetKey> scope;        // the models rebuilt, upstream first
  std::vector<AssetKey> sources;      // the sources the scope reads (managed ones are prepared)
  std::vector<PlanStep> steps;        // in execution order
  std::vector<std::string> warnings;
};

// What a DuckDB or PostgreSQL plan renders each write's SELECT with, so that its step shows the SELECT the engine's
// run path sends (engine/run_sql.hpp: the same function, the same inputs): the warehouse the plan runs on (its names
// for relations) and the day a full refresh's windows end at. Without a warehouse (`compile`, offline) relations are
// named by the dialect and partitioned inputs are not filtered to a window.
struct RunRendering {
  const Warehouse* warehouse = nullptr;
  Date today = Date();
};

// The direct plan of `selection` (engine/selection.hpp's items; downstream closure added). Throws
// SLU-DEPLOY-001 when the selection holds a virtual pipeline's model (staged deployments are `backfill`'s),
// SLU-DEPLOY-002 for an adapter with no direct build, and SLU-WAREHOUSE / SLU-CLICKHOUSE errors, located in the
// model file, for a model that needs a feature the server lacks.
DirectPlan PlanDirect(const Definitions& definitions, const std::vector<std::string>& selection,
                      const Capabilities& capabilities, const RunRendering& rendering = {});

// PlanDirect's machinery for a virtual deployment (deploy/virtual_plan.hpp): `definitions` name each model in `scope`
// by its physical relation, the scope is given as keys (nothing is added), and no audit steps are planned.
// `upstream_feeds`: for a model outside the scope that a model in scope is driven by, the (qualified) materialized
// views that fill it; where views do not cascade, the new views must read those, since rows written by a view do not
// fire views reading its table.
struct ScopedPlanOptions {
  std::map<AssetKey, std::vector<std::string>> upstream_feeds;
  RunRendering rendering;
};
DirectPlan PlanScope(const Definitions& definitions, const std::vector<AssetKey>& scope, const Capabilities& capabilities,
                     const ScopedPlanOptions& options);

// The capabilities of a current ClickHouse (the server StreamBuild targets): what `compile` renders workflows for.
Capabilities ModernClickHouseCapabilities();

}  // namespace sluice
