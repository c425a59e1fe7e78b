// BackfillDeployment: builds a VirtualPlan's staged deployment (`sluice backfill`, StreamBuild reference §7.4), never publishing.
//   1. preflight     the deployment's metadata is absent or records the same plan (fingerprint), and it was never
//                    published (SLU-DEPLOY-026 / -027);
//   2. preparation   the metadata tables; a `planned` row; one object row per object of the scope (its physical name,
//                    action, spec fingerprint, columns, canonical query);
//   3. realization   and 4. replay: the plan's steps, run by DirectExecutor over the deployment's physical names:
//                    this deployment's objects dropped if a failed attempt left them, created, each root replayed in
//                    one quiet window (bounded and seeded per §8), so that no row is lost or doubled between the
//                    replay and the live materialized views; live ingestion goes on into the active objects
//                    throughout, and into the staged ones from their creation. On DuckDB the rebuilt tables and views
//                    are written whole by the engine's run path from their upstreams.
//   5. boundaries    one row per root (per partition in offsets mode) with the captured cut-off and lower bound;
//   6. completion    a `backfilled` row with the boundary time: from here on the deployment can be published.
// A failure records a `failed` row; a kill leaves it `planned`. Either way the deployment is incomplete and cannot be
// published, and rerunning `backfill` (same plan) resumes the same deployment id and converges.
// Pause points: backfill_after_preparation, the build_* points of DirectExecutor, backfill_before_complete.
// Every statement is recorded with its sha256 in the run's events and the statements file.
// Thread-safety: one Backfill at a time per deployment.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "deploy/direct_executor.hpp"
#include "deploy/virtual_plan.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct StagedBackfillOutcome {
  std::string run_id;
  std::string deployment_id;
  RunStatus status = RunStatus::kSuccess;
  std::vector<BuildStepOutcome> steps;
  std::string boundary_time;                                 // set when complete
  std::vector<std::pair<std::string, int64_t>> staged_rows;  // per root: logical name → rows in its staged table
};

struct StagedBackfillOptions {
  std::string project_root;
  const std::atomic<bool>* cancel = nullptr;
  std::optional<std::filesystem::path> statements_file;
  std::function<void(const BuildProgress&)> on_progress;
  std::string selection_text = "*";
  std::string tool_version;
};

// The deployment an unfinished earlier backfill left with the same plan fingerprint (planned or failed, never
// published): rerunning resumes it. Nullopt when there is none.
std::optional<std::string> ResumableDeployment(const VirtualActualState& actual,
                                               const std::vector<PublicationRow>& publications,
                                               const std::string& plan_fingerprint);

// A deployment id a `sluice plan` printed, with the fingerprint of the plan it printed it for (its plan.json).
struct RecordedPlan {
  std::string deployment_id;
  std::string fingerprint;
};

// The id a deployment of a plan with `plan_fingerprint` gets when none is given, so that `plan` prints the id
// `backfill` then uses: the unfinished deployment of the same plan (`resumes` set: its backfill resumes it), else the
// id a recorded plan of the same fingerprint printed, when the metadata does not know that id; nullopt: a new id.
struct ChosenDeploymentId {
  std::string deployment_id;
  bool resumes = false;
};
std::optional<ChosenDeploymentId> ChooseDeploymentId(const VirtualActualState& actual,
                                                     const std::vector<PublicationRow>& publications,
                                                     const std::string& plan_fingerprint,
                                                     const std::vector<RecordedPlan>& recorded);

// The plans `sluice plan` recorded under `project_root`: target/run/plan/plan.json and target/run/plan/virtual/
// plan.json, those that exist and hold a deployment id and a fingerprint.
std::vector<RecordedPlan> ReadRecordedPlans(const std::filesystem::path& project_root);

// PlanVirtual; without options.deployment_id, planned again under ChooseDeploymentId's id when there is one: what
// `plan` prints and `backfill` runs.
struct DeploymentPlan {
  VirtualPlan plan;
  bool resumes = false;  // an unfinished deployment of the same plan is resumed
};
DeploymentPlan PlanDeployment(const Definitions& definitions, const VirtualActualState& actual,
                              const std::vector<PublicationRow>& publications, const std::vector<RecordedPlan>& recorded,
                              const Capabilities& capabilities, VirtualPlanOptions options, const Clock& clock);

StagedBackfillOutcome BackfillDeployment(const VirtualPlan& plan, Warehouse& warehouse, RunStore& runs,
                                         EventLog& events, MaterializationStore& materializations, const Clock& clock,
                                         const std::string& run_id, const StagedBackfillOptions& options);

}  // namespace sluice
