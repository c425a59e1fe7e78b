// DeploymentOperations: what an operator does around staged (virtual) deployments once they exist (StreamBuild
// reference §6: `deployment list|show|diff`, `doctor`, `repair active-view`, `reconcile`, `janitor`), as functions over
// a warehouse and the logical namespace (the project's target database) whose deployments they concern.
//
//   inventory  every deployment known from the metadata (deploy/deployment_metadata.hpp) or from the catalog (a
//              relation named `<logical>__<deployment id>`, or a materialized view `mv__<model>__<id>[__<n>]`), each
//              with its state:
//                active            a live binding reads one of its physical objects
//                physical_missing  metadata lists a created or rebuilt object the catalog lacks (not active)
//                incomplete        its latest state is planned or failed (the backfill did not finish)
//                superseded        published before, not active now
//                staged            backfilled, never published, not active
//                metadata_missing  objects in the catalog, no metadata rows
//   diff       per logical relation of two deployments (or `active`, the live bindings): columns and row counts
//   doctor     per logical name of the project and per bound view: what the stable view is
//   repair     rebinds one stable view to a deployment's physical relation (no metadata written)
//   reconcile  records the desired spec as the baseline of live tables that already match it, so the next plan keeps
//              them (no_op) instead of rebuilding
//   janitor    drops the physical objects of deployments that are neither active, nor a rollback point, nor recent;
//              never an object a kept deployment uses, never a metadata row
// Every read is a fixed number of queries whatever the number of deployments: the four metadata tables, the live
// bindings, one catalog query (plus, for diff, one row-count query).
//
// Errors (sluice::Error):
//   SLU-DEPLOY-040  an argument that should be a deployment id is not one
//   SLU-DEPLOY-041  a deployment id neither the metadata nor the catalog knows
//   SLU-DEPLOY-042  a diff argument that is not `A`, `A:B` (`active` allowed on either side)
//   SLU-DEPLOY-043  repair: the deployment has no physical relation for that logical name
//   SLU-DEPLOY-044  repair: --table names a deployment's physical relation, not a logical one
//   SLU-DEPLOY-045  janitor: a negative --retention-days or --minimum-rollback-deployments
//   SLU-DEPLOY-046  the project has no virtual pipeline (these commands concern staged deployments only)
// plus the warehouse's errors, and BindViews' SLU-DEPLOY-030 (repair over a table in the way).
// Thread-safety: plain values and functions over a Warehouse, as thread-safe as it is.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "definitions/definitions.hpp"
#include "deploy/column_diff.hpp"
#include "deploy/deployment_metadata.hpp"
#include "deploy/view_binding.hpp"
#include "sql/dialect.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// ---- Catalog ------------------------------------------------------------------------------------------------------

enum class CatalogObjectType { kTable, kView, kMaterializedView };
std::string CatalogObjectTypeName(CatalogObjectType type);  // table | view | materialized_view

// A relation of the namespace as the catalog holds it.
struct CatalogObject {
  std::string name;
  CatalogObjectType type = CatalogObjectType::kTable;
  std::optional<std::string> target;  // a materialized view's `TO` table, unqualified
  std::string engine;                 // CatalogEntry::engine (e.g. SummingMergeTree) where tables have engines; else ""
  std::string sorting_key;            // CatalogEntry::sorting_key; else ""
  std::string partition_key;          // CatalogEntry::partition_key; else ""
  std::string definition;             // a materialized view's CREATE statement; else ""
  std::vector<ColumnInfo> columns;
};

// Every relation of `name_space` (tables, views, materialized views), sorted by name: two catalog queries.
std::vector<CatalogObject> ReadCatalog(Warehouse& warehouse, const std::string& name_space);

// The deployment id a relation's name carries: `<logical>__<id>`, or a materialized view's `mv__<model>__<id>__<n>`
// (old servers need several views per table); nullopt for other names.
std::optional<std::string> DeploymentIdOfRelation(const std::string& name);

// ---- Inventory ----------------------------------------------------------------------------------------------------

enum class InventoryState { kActive, kStaged, kSuperseded, kIncomplete, kMetadataMissing, kPhysicalMissing };
std::string InventoryStateName(InventoryState state);  // active | staged | superseded | incomplete | …

// One object of a deployment's recorded scope (its latest ObjectRow per logical name).
struct DeploymentObject {
  std::string logical;
  std::string physical;     // its own `<logical>__<id>` (create, rebuild) or the kept one of another (no_op)
  std::string object_type;  // table | view
  std::string action;       // create | rebuild | no_op
  bool present = false;     // the physical relation is in the catalog
};

struct DeploymentSummary {
  std::string deployment_id;
  InventoryState state = InventoryState::kStaged;
  std::optional<std::string> recorded_state;  // the latest metadata state (planned | backfilled | failed)
  std::string created_at;                     // first metadata row, else the time the id carries (ISO-8601 UTC)
  std::optional<std::string> last_published_at;
  bool published = false;
  std::vector<DeploymentObject> objects;
  std::vector<CatalogObject> relations;      // the catalog's relations carrying its id
  std::vector<std::string> active_logicals;  // stable views bound to it now
  std::vector<std::string> missing;          // created or rebuilt physical relations the catalog lacks
};

struct DeploymentInventory {
  std::string name_space;
  std::vector<DeploymentSummary> deployments;  // newest first (ids sort by creation time)
  std::vector<LiveBinding> bindings;
  std::vector<CatalogObject> catalog;
  std::vector<ObjectRow> objects;  // every metadata object row, oldest first
  std::vector<PublicationRow> publications;
  std::vector<BoundaryRow> boundaries;

  const DeploymentSummary* Find(const std::string& deployment_id) const;
};

// Reads the metadata, the live bindings and the catalog of `name_space` (a constant number of queries).
DeploymentInventory ReadDeploymentInventory(Warehouse& warehouse, const std::string& name_space);

// Throws SLU-DEPLOY-040 unless `text` is a deployment id.
void RequireDeploymentId(const std::string& text);

// One deployment of the inventory. Throws SLU-DEPLOY-040 (not an id) or -041 (unknown).
const DeploymentSummary& FindDeployment(const DeploymentInventory& inventory, const std::string& deployment_id);

// ---- Diff ---------------------------------------------------------------------------------------------------------

enum class RelationChange { kAdded, kRemoved, kChanged, kUnchanged, kPhysicalMissing };
std::string RelationChangeName(RelationChange change);  // added | removed | changed | unchanged | physical_missing

struct RelationSide {
  std::string physical;
  bool present = false;
  std::vector<ColumnInfo> columns;  // from the catalog
  std::optional<int64_t> rows;      // when present
};

struct RelationDiff {
  std::string logical;
  RelationChange change = RelationChange::kUnchanged;
  std::optional<RelationSide> from;
  std::optional<RelationSide> to;
  ColumnDiff columns;  // from → to, both present
};

struct DeploymentDiff {
  std::string from;  // a deployment id or "active"
  std::string to;
  std::vector<RelationDiff> relations;  // by logical name
};

// `A` (≡ `active:A`: what publishing A would change) or `A:B`. Throws SLU-DEPLOY-042, -040.
std::pair<std::string, std::string> ParseDiffSides(const std::string& argument);

// Compares the relations each side binds: a deployment's recorded objects (tables and views, its no_op ones included),
// or for `active` the live bindings. Reads the inventory's catalog and one row-count query. Throws SLU-DEPLOY-041 for a
// side the inventory does not know.
DeploymentDiff DiffDeployments(Warehouse& warehouse, const DeploymentInventory& inventory, const std::string& from,
                               const std::string& to);

// ---- Doctor -------------------------------------------------------------------------------------------------------

enum class LogicalStateKind { kActiveViewPresent, kGreenfield, kLogicalViewMissing, kInvalidActiveView };
std::string LogicalStateKindName(LogicalStateKind kind);  // active_view_present | greenfield | …

struct LogicalDiagnosis {
  std::string logical;
  std::optional<std::string> model;  // the project's model named so, if any
  LogicalStateKind state_kind = LogicalStateKind::kGreenfield;
  std::optional<std::string> active_deployment_id;
  std::optional<std::string> active_physical;
  bool active_physical_present = false;
  std::vector<std::string> candidate_ids;  // deployments holding a physical relation for it, newest first
  std::string detail;                      // what is wrong, for invalid_active_view
};

// Per logical name: every virtual model of `definitions` in the inventory's namespace and every view bound to a
// deployment, sorted by name.
std::vector<LogicalDiagnosis> Doctor(const Definitions& definitions, const DeploymentInventory& inventory);

// ---- Repair -------------------------------------------------------------------------------------------------------

// Binds `logical` to `<logical>__<deployment_id>` after checking that relation exists; writes no metadata. Returns the
// binding made. Throws SLU-DEPLOY-040, -043, -044, or BindViews' errors.
ViewBinding RepairActiveView(Warehouse& warehouse, const std::string& name_space, const std::string& logical,
                             const std::string& deployment_id);

// ---- Reconcile ----------------------------------------------------------------------------------------------------

enum class ReconcileStatus { kReconcile, kInSync, kMismatch, kRejected, kNotDeployed };
std::string ReconcileStatusName(ReconcileStatus status);  // reconcile | in_sync | mismatch | rejected | not_deployed

struct ReconcileItem {
  std::string model;
  std::string logical;
  std::string object_type;
  std::optional<std::string> active_physical;
  ReconcileStatus status = ReconcileStatus::kInSync;
  std::string reason;
};

struct ReconcileReport {
  std::string name_space;
  std::string reconcile_id;  // reconcile_<CompactUtc(now)>
  bool applied = false;
  std::vector<ReconcileItem> items;  // the virtual scope, upstream first
  std::vector<ObjectRow> rows;       // what was (dry run: would be) appended, one per kReconcile item
};

struct ReconcileOptions {
  std::vector<std::string> selection;  // as --select; empty: every virtual model
  bool apply = false;
};

// For each table of the virtual scope whose live active physical table matches the desired spec (columns by name and
// normalized type; on ClickHouse also engine, sorting and partition keys, and a materialized view writing TO it) but
// whose recorded fingerprint differs or is missing, an ObjectRow of kind `reconcile` carrying the desired fingerprint,
// columns and canonical query; appended with `apply`. Views are rejected. Throws SLU-DEPLOY-046 and PlanVirtual's
// errors.
ReconcileReport Reconcile(Warehouse& warehouse, const Definitions& definitions, const std::string& name_space,
                          const ReconcileOptions& options, const Clock& clock);

// ---- Janitor ------------------------------------------------------------------------------------------------------

struct JanitorOptions {
  int retention_days = 7;
  int minimum_rollback_deployments = 2;
  // The project's stable views (its virtual models' relations in the namespace). When set, a view bound to a
  // deployment under any other name is an obsolete binding (its model was removed): it is dropped first, and it keeps
  // nothing active.
  std::optional<std::set<std::string>> current_logicals;
};

struct JanitorDrop {
  std::string deployment_id;
  std::string name;
  CatalogObjectType type = CatalogObjectType::kTable;
  std::string statement;
  bool dropped = false;  // set by ApplyJanitor
  std::string skipped;   // ApplyJanitor: why it was not dropped ("" when dropped or not applied)
  bool obsolete_binding = false;  // a stable view of a removed model (its name is the logical name)
};

struct JanitorDeployment {
  std::string deployment_id;
  InventoryState state = InventoryState::kStaged;
  bool kept = false;
  std::vector<std::string> reasons;  // kept: active | rollback point | published within retention | created …
  std::vector<std::string> protected_objects;  // its relations kept because an active or kept deployment uses them
};

// What the janitor would do: pure data, from the inventory and the time now.
struct JanitorPlan {
  std::string name_space;
  JanitorOptions options;
  std::vector<JanitorDeployment> deployments;  // newest first
  std::vector<JanitorDrop> drops;  // in drop order: obsolete bindings, materialized views, views, tables
};

// Keeps the deployments holding an active relation, the `minimum_rollback_deployments` latest published ones (rollback
// points), those published or created within `retention_days`; the others' relations are dropped, except those an
// active or kept deployment uses (its own objects, its no_op objects, the materialized views writing to them).
// Obsolete bindings (JanitorOptions::current_logicals) are dropped before anything else.
// Throws SLU-DEPLOY-045.
JanitorPlan PlanJanitor(const DeploymentInventory& inventory, const JanitorOptions& options,
                        std::chrono::system_clock::time_point now, const Capabilities& capabilities,
                        sql::Dialect dialect);

// Re-reads the live bindings, then runs the plan's drops in order, skipping a relation that became bound (directly or
// through its deployment); fills each drop's `dropped` / `skipped`. Never deletes metadata.
void ApplyJanitor(Warehouse& warehouse, JanitorPlan& plan);

// ---- Gate ---------------------------------------------------------------------------------------------------------

// Throws SLU-DEPLOY-046 when the project has no virtual pipeline.
void RequireVirtualProject(const Definitions& definitions, const std::string& command);

}  // namespace sluice
