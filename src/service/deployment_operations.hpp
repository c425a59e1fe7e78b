// The operations over the staged deployments of the databases a project's virtual pipelines live in (the target's,
// or a pipeline's own): list, show, diff, doctor, repair active-view, reconcile, janitor. Each refuses a project
// without virtual pipelines before it connects. Results cover every database; their ToJson is one document for one
// database, else {"databases": [...]}.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "deploy/deployment_operations.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

// One per database, in the project's order.
std::vector<DeploymentInventory> ListDeployments(const WorkspaceOptions& workspace);
nlohmann::ordered_json ToJson(const std::vector<DeploymentInventory>& inventories);

struct DeploymentDetail {
  DeploymentSummary summary;
  std::vector<BoundaryRow> boundaries;
  std::vector<PublicationRow> publications;
};
// Throws RequestError for a malformed id.
DeploymentDetail ShowDeployment(const WorkspaceOptions& workspace, const std::string& id);
nlohmann::ordered_json ToJson(const DeploymentDetail& detail);
nlohmann::ordered_json ToJson(const BoundaryRow& row);
nlohmann::ordered_json ToJson(const PublicationRow& row);

// `sides`: ID (the active bindings against ID) or FROM:TO, either side `active`. Throws RequestError when malformed.
DeploymentDiff DiffDeployments(const WorkspaceOptions& workspace, const std::string& sides);
nlohmann::ordered_json ToJson(const DeploymentDiff& diff);

// Per database, per logical name: its state and the deployments holding a relation for it.
nlohmann::ordered_json Doctor(const WorkspaceOptions& workspace);

struct RepairResult {
  std::string name_space;
  ViewBinding binding;
};
RepairResult RepairActiveView(const WorkspaceOptions& workspace, const std::string& table, const std::string& id);

// Reconciles the selected models (`select` empty: each database's virtual pipelines); records rows when `apply`.
struct ReconcileResult {
  std::vector<ReconcileReport> reports;  // one per database reconciled
  bool apply = false;
};
ReconcileResult Reconcile(const WorkspaceOptions& workspace, const std::vector<std::string>& select, bool apply);
nlohmann::ordered_json ToJson(const ReconcileResult& result);

struct JanitorReport {
  JanitorPlan plan;
  JanitorOptions options;
  bool applied = false;
};
// Plans (and, when `apply`, runs) the janitor of each database.
std::vector<JanitorReport> Janitor(const WorkspaceOptions& workspace, const JanitorOptions& options, bool apply);
nlohmann::ordered_json ToJson(const std::vector<JanitorReport>& reports);

}  // namespace sluice::service
