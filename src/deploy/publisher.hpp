// Publish and rollback (`sluice publish`, `deployment promote ID`, `deployment rollback ID | --previous`; StreamBuild
// reference §7.5): switch the stable views to a deployment's physical objects and record the publication.
//
// Publish refuses (nothing changed):
//   SLU-DEPLOY-031  another publish or rollback of the namespace holds the publish lock;
//   SLU-DEPLOY-032  the deployment is incomplete (never backfilled, or its backfill failed) — even with --force;
//   SLU-DEPLOY-033  a physical object of the deployment is missing;
//   SLU-DEPLOY-034  the readiness audit says not_ready, unless --force (deploy/readiness.hpp);
//   SLU-DEPLOY-030  a logical name is held by a table (deploy/view_binding.hpp).
// The bindings are the deployment's created and rebuilt tables and views (tables first, then by name); the views of
// objects it kept keep pointing where they did, and a logical name the same model had before under another relation
// name is dropped. They switch together (deploy/view_binding.hpp: one DuckDB transaction with the publication rows;
// one ClickHouse RENAME, then the rows). Publishing is idempotent: a deployment whose bindings are already live (a
// publish killed after the switch, or one that finished) is not audited again; its publication is recorded if its
// rows are missing, the logical names it removes are dropped, the views a killed ClickHouse switch left aside are
// dropped, and nothing switches.
// The lock: a table `_sluice.publish_lock__<namespace>` created without IF NOT EXISTS (exactly one concurrent creator
// succeeds) holding who took it and the operation and deployment it is for, dropped at the end; a lock whose holder
// on this host is dead is taken over, and names the publish to finish (InterruptedPublish).
//
// Rollback: the current publication is the latest whose bindings all equal the live ones (else SLU-DEPLOY-035: repair
// first; SLU-DEPLOY-036 when nothing was ever published); the target is --previous (the latest earlier publication
// with different bindings; SLU-DEPLOY-036 when none)
// or the named deployment's latest publication (SLU-DEPLOY-036 when never published); its physical objects must exist
// (SLU-DEPLOY-033). Its bindings are published again as operation `rollback`. No data is restored: tables kept since
// have gone on ingesting.
// Thread-safety: one call at a time per process; across processes the lock serializes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "definitions/definitions.hpp"
#include "deploy/readiness.hpp"
#include "deploy/view_binding.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct PublishRequest {
  std::string name_space;
  std::string deployment_id;  // publish: the deployment; rollback: the target deployment, or empty with previous
  bool force = false;         // publish a deployment that is not ready
  bool previous = false;      // rollback --previous
  int64_t maximum_lag_seconds = 30;
  double minimum_staged_row_ratio = 0.5;
  StatementSink on_statement;  // each statement that changes the warehouse, before it is sent
};

struct PublishOutcome {
  std::string operation;  // promote | rollback
  std::string publication_id;
  std::string deployment_id;
  std::string previous_deployment_id;  // of the first binding that switches, "" when it was unbound
  std::vector<ViewBinding> bindings;
  std::vector<std::string> removed;          // logical views dropped
  bool already_live = false;                 // nothing switched
  std::optional<ReadinessReport> readiness;  // publish without --force
};

PublishOutcome Publish(const Definitions& definitions, Warehouse& warehouse, const Clock& clock,
                       const PublishRequest& request);

// The deployment a publish of `name_space` was publishing when its process died (the lock it left names it, and its
// holder on this host is gone), or nullopt.
std::optional<std::string> InterruptedPublish(Warehouse& warehouse, const std::string& name_space);

struct NamespacedDeployment {
  std::string name_space;
  std::string deployment_id;
};

// What `sluice publish` without an id publishes, among `namespaces` (VirtualNamespaces): an interrupted publish's
// deployment (its rerun finishes it), else the latest staged one, else — unless a deployment started after the last
// publication is incomplete (SLU-DEPLOY-032) — the deployment of the latest current publication (published already:
// the rerun changes nothing and exits 0). SLU-DEPLOY-029 when there is none.
NamespacedDeployment DeploymentToPublish(Warehouse& warehouse, const std::vector<std::string>& namespaces);

// The namespace among `namespaces` whose metadata records deployment `id` (a state or a publication row), or nullopt.
std::optional<std::string> NamespaceOfDeployment(Warehouse& warehouse, const std::vector<std::string>& namespaces,
                                                 const std::string& id);

// The namespace among `namespaces` published in last (its latest publication row is the newest), or nullopt when
// nothing was published: what `deployment rollback --previous` rolls back.
std::optional<std::string> LastPublishedNamespace(Warehouse& warehouse, const std::vector<std::string>& namespaces);
PublishOutcome Rollback(Warehouse& warehouse, const Clock& clock, const PublishRequest& request);

std::string PublishJson(const PublishOutcome& outcome);

}  // namespace sluice
