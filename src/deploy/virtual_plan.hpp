// VirtualPlan: what a staged deployment of the selected virtual pipelines builds (StreamBuild reference §7.3 and §8),
// as plain data. `plan` prints it, `backfill` executes it (deploy/virtual_executor.hpp), and its JSON is recorded with
// the deployment, so a rerun can prove it would build the same thing.
//
// Each model of the scope (the selection plus its downstream, virtual pipelines only; all of them when nothing is
// selected) is one object, its logical relation a stable view over the physical object of the deployment published
// last. Its action:
//   create   no live binding: the logical view is missing, or is not a `SELECT *` over a deployment's object;
//   rebuild  its spec (columns, storage, canonical query) differs from the one recorded for the bound object, the
//            bound object is missing, nothing is recorded for it, a model upstream of it is created or rebuilt, or
//            --full-refresh / --start-time force it;
//   no_op    otherwise: the deployment keeps the bound object.
// Created and rebuilt models get new physical objects `<relation>__<deployment id>`; a model they read that is kept
// is read at its bound physical table (never through the logical view: materialized views do not fire through
// views). Roots are the rebuilt tables whose driving input is not rebuilt; each replays from that input (its
// anchor), in full or bounded (§8: replay_on_change, bounded_replay_fallback, --full-refresh, --start-time).
//
// The actual state is read in a fixed number of queries whatever the project's size: the catalog's relations, its
// views (the bindings) and, on ClickHouse, its materialized views and its tables' row counts, plus one query per
// metadata table. Warnings: mutable_ref_replay_not_guaranteed (a rebuilt model reads a mutable reference),
// empty_replay_source (a root's anchor has no rows).
// Errors: SLU-DEPLOY-020 nothing virtual selected, -021 --full-refresh / --start-time without --select or together,
// -022 an upstream outside the selection that is not deployed, -023 a deployment id that is not one, -024 selected
// pipelines with different lineage modes; the warehouse's errors reading the state.
// Thread-safety: plain values; PlanVirtual reads the warehouse from the calling thread.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "definitions/definitions.hpp"
#include "deploy/column_diff.hpp"
#include "deploy/deployment_metadata.hpp"
#include "deploy/direct_plan.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

enum class ObjectAction { kCreate, kRebuild, kNoOp };
std::string ObjectActionName(ObjectAction action);  // create | rebuild | no_op

enum class ReplayExecution { kFull, kSeededBounded, kUnseededBounded };
std::string ReplayExecutionName(ReplayExecution execution);  // full_rebuild | seeded_bounded_rebuild | unseeded_…

struct VirtualObject {
  AssetKey model;
  std::string logical;      // the stable view, e.g. tbl__orders
  std::string object_type;  // table | view
  ObjectAction action = ObjectAction::kCreate;
  std::string reason;                          // why, e.g. "columns changed", "upstream paid_orders rebuilt"
  std::optional<std::string> active_physical;  // what the stable view reads now
  std::string physical;                        // what it will read once published
  std::string fingerprint;
  std::vector<ColumnSpec> columns;  // as the project declares them
  std::string canonical_query;
  ColumnDiff column_diff;  // against the columns recorded for the bound object (tables being rebuilt)
};

struct VirtualRoot {
  AssetKey root;
  std::string logical;
  std::string anchor;  // the relation replayed from, qualified
  std::string mode;    // lineage: offsets | timestamp | landed_at | cursor
  ReplayExecution execution = ReplayExecution::kFull;
  std::string reason;  // which rule decided it
  bool history_preserving_bounded_supported = false;
  std::string resolved_bounded_replay_fallback;  // full | bounded_without_history, when the fallback applied
  std::optional<std::string> requested_start_time;
  std::optional<std::string> lower_time;  // bounded by a time ("YYYY-MM-DD HH:MM:SS" UTC)
  bool lower_at_active_frontier = false;
  std::vector<AssetKey> affected;  // the root and what its replay fills, upstream first
};

struct VirtualPlanOptions {
  std::vector<std::string> selection;
  std::optional<std::string> deployment_id;  // else a new one
  bool full_refresh = false;
  std::optional<std::string> start_time;  // YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.fff][Z], UTC
  // The warehouse the deployment runs on, when known: DuckDB and PostgreSQL steps show the SELECTs its run path sends
  // (RunRendering, with the clock's day).
  const Warehouse* warehouse = nullptr;
};

struct VirtualPlan {
  std::string deployment_id;
  std::string adapter;
  std::string name_space;  // the logical namespace (the target database)
  std::vector<std::string> selection;
  std::string lineage_mode;
  std::vector<VirtualObject> objects;  // the scope, upstream first
  std::vector<VirtualRoot> roots;
  std::vector<std::string> warnings;
  // The deployment's steps: PlanScope over `physical` for the created and rebuilt models.
  DirectPlan steps;
  // The definitions with each created or rebuilt model named by its new physical relation and each kept virtual
  // model by its bound one: what the steps, the staged audits and a DuckDB backfill read.
  std::shared_ptr<const Definitions> physical;
  // sha256 of the plan's JSON with the deployment id blanked (equal for equal plans).
  std::string fingerprint;

  bool Empty() const;  // nothing to create or rebuild
};

// The state PlanVirtual reads, separable so that a caller (and the benchmark) can count its queries.
struct VirtualActualState {
  std::vector<TableInfo> relations;  // of the catalog
  std::vector<LiveBinding> bindings;
  std::map<std::string, std::vector<std::string>> materialized_views;  // by qualified target table: qualified views
  // Rows of the namespace's tables where the catalog counts them (Warehouse::CatalogRowCounts), for warnings.
  std::map<std::string, int64_t> table_rows;
  std::vector<ObjectRow> objects;
  std::vector<DeploymentRow> deployments;
};
VirtualActualState ReadVirtualActualState(Warehouse& warehouse, const std::string& name_space);

VirtualPlan PlanVirtual(const Definitions& definitions, const VirtualActualState& actual,
                        const Capabilities& capabilities, const VirtualPlanOptions& options, const Clock& clock);

// The plan as JSON text (plan.json; recorded with the deployment).
std::string VirtualPlanJson(const VirtualPlan& plan);
// The plan as text for a terminal.
std::string VirtualPlanText(const VirtualPlan& plan);

// Columns as an object row records them (ObjectRow::columns_json): `[[name, type], …]`; the planner diffs against it.
std::string ColumnsRecord(const std::vector<ColumnSpec>& columns);

// The spec fingerprint of a model as deployed: sha256 over its columns, storage and canonical query.
std::string ObjectFingerprint(const Definitions& definitions, const Asset& model);

// Whether an asset is a SQL model of a virtual pipeline.
bool IsVirtualModel(const Definitions& definitions, const Asset& asset);

// The namespaces (databases) holding the project's virtual models, sorted: where its staged deployments, their
// metadata rows and stable views live (the target's database, or a pipeline's own `database`).
std::vector<std::string> VirtualNamespaces(const Definitions& definitions);

// The namespace of the first virtual model a selection reaches (with its downstream; nothing selected: the project's
// first), or nullopt when it reaches none.
std::optional<std::string> VirtualNamespaceOf(const Definitions& definitions,
                                              const std::vector<std::string>& selection);

}  // namespace sluice
