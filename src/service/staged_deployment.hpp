// The staged-deployment lifecycle of virtual pipelines: backfill (shadow objects, history replayed), the readiness
// audit, publish (the stable views switched) and rollback. Publish and rollback are recorded as runs in the state
// store, each statement in the run's events (`sluice logs RUN`).
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "deploy/publisher.hpp"
#include "deploy/readiness.hpp"
#include "deploy/virtual_executor.hpp"
#include "deploy/virtual_plan.hpp"
#include "service/cancellation.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

struct StagedBackfillCommand {
  std::vector<std::string> select;
  std::string deployment_id;  // empty: resume the unfinished deployment of the same plan, else a new id
  bool full_refresh = false;
  std::string start_time;
};

// A staged backfill ready to run: planned (resuming the unfinished deployment of the same plan when there is one)
// and checked against the warehouse.
class StagedBackfill {
 public:
  // Throws SLU-DEPLOY-020 when nothing selected is virtual, the checks' blockers before anything changes. Arms
  // `cancellation`.
  static std::unique_ptr<StagedBackfill> Prepare(const WorkspaceOptions& workspace,
                                                 const StagedBackfillCommand& command, Cancellation& cancellation);
  ~StagedBackfill();

  const VirtualPlan& plan() const { return chosen_.plan; }
  bool resumes() const { return chosen_.resumes; }

  struct Result {
    std::string run_id;
    StagedBackfillOutcome outcome;
    bool complete() const { return outcome.status == RunStatus::kSuccess; }
  };
  struct Observer {
    std::function<void(const std::string& run_id, size_t steps)> on_started;
    std::function<void(const BuildProgress&)> on_progress;
  };
  // Writes the workflow files under target/run/backfill/ and runs the plan.
  Result Execute(const Observer& observer);

 private:
  StagedBackfill() = default;

  const Project* project_ = nullptr;
  StagedBackfillCommand command_;
  Cancellation* cancellation_ = nullptr;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Warehouse> warehouse_;
  DeploymentPlan chosen_;
};

// {deployment_id, run_id, status, complete, resumed, boundary_time, staged_rows}.
nlohmann::json ToJson(const StagedBackfill& backfill, const StagedBackfill::Result& result);

// The readiness of deployment `id` (empty: the latest staged one). Throws SLU-DEPLOY-029 when none waits.
ReadinessReport AuditStagedDeployment(const WorkspaceOptions& workspace, const std::string& id);

struct PublishResult {
  std::string name_space;
  PublishOutcome outcome;
};
// Publishes deployment `id` (empty: the one waiting). Refuses an incomplete deployment, a not-ready one unless
// `force`, and a publish while another holds the namespace's lock.
PublishResult PublishDeployment(const WorkspaceOptions& workspace, const std::string& id, bool force);
// Binds the stable views as the publication of `id` had them, or the one before the current one when `previous`.
// Throws RequestError SLU-CLI-006 when neither is given.
PublishResult RollbackDeployment(const WorkspaceOptions& workspace, const std::string& id, bool previous);

}  // namespace sluice::service
