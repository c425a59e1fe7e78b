// DeploymentMetadata: what staged (virtual) deployments record in the warehouse they deploy to (StreamBuild
// reference §7.6), and the live bindings read from its catalog. Four append-only tables in Sluice's own `_sluice`
// schema (ClickHouse: database), created on first write, each row carrying the logical namespace it concerns so that
// projects sharing a server never read each other's rows:
//   _sluice.deployments            one row per state a deployment reaches: planned, backfilled, failed (the
//                                  plan's JSON and fingerprint on each row)
//   _sluice.deployment_objects     per deployment (or reconcile), one row per object of its desired state: the
//                                  logical and physical names, the action, the spec fingerprint and columns
//   _sluice.deployment_boundaries  per replayed root, the captured cut-offs and lower bounds (per partition in
//                                  offsets mode)
//   _sluice.publications           per publish or rollback, one row per stable view it bound
// Rows are never updated or deleted (janitor drops physical objects only). Every read is one query per table,
// whatever the number of deployments or objects.
// Live bindings: a logical view whose whole query is `SELECT * FROM <ns>.<logical>__<deployment id>` is bound to that
// deployment; read from the catalog in one query.
// Thread-safety: functions over a Warehouse, as thread-safe as it is.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "warehouse/warehouse.hpp"

namespace sluice {

enum class DeploymentState { kPlanned, kBackfilled, kFailed };
std::string DeploymentStateName(DeploymentState state);  // planned | backfilled | failed

struct DeploymentRow {
  std::string deployment_id;
  std::string name_space;  // the logical namespace (database) the deployment's relations live in
  DeploymentState state = DeploymentState::kPlanned;
  std::string plan_fingerprint;  // sha256 of the plan with the deployment id blanked: equal plans, equal fingerprints
  std::string lineage_mode;
  std::string boundary_time;  // ISO-8601 UTC, set from backfilled on
  std::string plan_json;
  std::string recorded_at;  // ISO-8601 UTC with milliseconds
  std::string tool_version;
};

struct ObjectRow {
  std::string deployment_id;  // a deployment's, or reconcile_<UTC stamp>
  std::string kind;           // deployment | reconcile
  std::string name_space;
  std::string logical;      // the stable view, e.g. tbl__orders
  std::string object_type;  // table | view
  std::string physical;     // e.g. tbl__orders__20260801T000000Z_a1b2c3 (no_op objects: the kept physical)
  std::string model;        // the model's name
  std::string action;       // create | rebuild | no_op | reconcile
  bool is_root = false;
  std::string fingerprint;   // sha256 of the object's spec (columns, storage, canonical query)
  std::string columns_json;  // [[name, type], …] as the project declares them
  std::string canonical_query;
  std::string recorded_at;
};

struct BoundaryRow {
  std::string deployment_id;
  std::string name_space;
  std::string root;                      // the root's logical relation
  std::string anchor;                    // the relation replayed from, qualified
  std::string mode;                      // offsets | timestamp | landed_at | cursor
  std::optional<std::string> partition;  // offsets mode: the partition; else unset
  std::optional<std::string> lower;      // exclusive lower bound (bounded replays), or unset
  std::optional<std::string> cutoff;     // inclusive cut-off, or unset when the anchor was empty
  std::string captured_at;
};

struct PublicationRow {
  std::string publication_id;
  std::string deployment_id;
  std::string operation;               // promote | rollback
  std::string previous_deployment_id;  // the deployment the view was bound to before, "" when none
  std::string name_space;
  std::string logical;
  std::string physical;
  std::string published_at;
};

// A stable view and what it reads now.
struct LiveBinding {
  std::string name_space;
  std::string logical;
  std::optional<std::string> physical;       // the relation it selects * from, when its query is just that
  std::optional<std::string> deployment_id;  // when that relation is `<logical>__<deployment id>`
  std::string definition;                    // the view's query as the catalog holds it
};

class DeploymentMetadata {
 public:
  explicit DeploymentMetadata(Warehouse& warehouse) : warehouse_(warehouse) {}

  // Creates `_sluice` and the four tables when missing (idempotent).
  void EnsureTables();

  void Append(const DeploymentRow& row);
  void Append(const std::vector<ObjectRow>& rows);
  void Append(const std::vector<BoundaryRow>& rows);
  void Append(const std::vector<PublicationRow>& rows);
  // The INSERT Append would run, to run inside a caller's transaction (the tables must exist: EnsureTables).
  std::string InsertStatement(const std::vector<PublicationRow>& rows) const;

  // Rows of `name_space`, oldest first; empty when the tables do not exist yet.
  std::vector<DeploymentRow> Deployments(const std::string& name_space);
  std::vector<ObjectRow> Objects(const std::string& name_space);
  std::vector<BoundaryRow> Boundaries(const std::string& name_space);
  std::vector<PublicationRow> Publications(const std::string& name_space);

  // Every view of `name_space` with what it reads (one catalog query, Warehouse::CatalogOf), sorted by name.
  std::vector<LiveBinding> Bindings(const std::string& name_space);

 private:
  bool TablesExist();
  Warehouse& warehouse_;
  std::optional<bool> tables_exist_;
};

// logical → the relation each stable view selects * from (views that are not a `SELECT *` left out).
std::map<std::string, std::string> BoundPhysicals(const std::vector<LiveBinding>& bindings);

// The latest state row of each deployment id (states only move forward: planned → backfilled | failed, and a rerun
// of a failed one planned again).
std::map<std::string, DeploymentRow> LatestDeploymentStates(const std::vector<DeploymentRow>& rows);

// The views of `catalog` (Warehouse::CatalogOf(name_space), sorted by name) with what they read: Bindings without a
// query, for a caller that reads the catalog of the namespace anyway.
std::vector<LiveBinding> BindingsIn(const std::vector<CatalogEntry>& catalog, const std::string& name_space);

// The relation a view's query selects * from when that is its whole query (`SELECT * FROM [ns.]name`, identifiers
// quoted or not, a trailing `;` and blanks ignored): the unqualified name, or nullopt.
std::optional<std::string> SelectStarTarget(const std::string& view_query);

}  // namespace sluice
