// `plan` and `build` in direct mode, and the staged deployment `plan` previews for virtual pipelines.
//
// PlanProject reads the warehouse (read-only; a DuckDB file that does not exist stays absent) and changes nothing;
// it writes the plan's workflow files under target/run/plan/. A build is prepared (the plan, checked against what the
// warehouse holds: a blocker throws before anything changes), then approved by the face (protected pipelines'
// tokens, a prompt), then executed, its workflow files and statements under target/run/build/.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "deploy/actual_state.hpp"
#include "deploy/direct_executor.hpp"
#include "deploy/direct_plan.hpp"
#include "deploy/plan_explainer.hpp"
#include "deploy/virtual_plan.hpp"
#include "service/cancellation.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

struct PlanCommand {
  std::vector<std::string> select;
  // Virtual pipelines only (StreamBuild's plan flags).
  std::string deployment_id;
  bool full_refresh = false;
  std::string start_time;
};

struct DirectPlanView {
  DirectPlan plan;
  ActualState state;
  std::string plan_json;            // as written to plan.json
  std::filesystem::path directory;  // where the workflow files were written
};

struct VirtualPlanView {
  VirtualPlan plan;
  std::vector<Diagnostic> blockers;  // what `backfill` would stop at
  std::string plan_json;
  std::filesystem::path directory;
};

struct PlanReport {
  std::filesystem::path project_root;
  std::optional<DirectPlanView> direct;         // unset when only virtual pipelines are in scope
  std::optional<VirtualPlanView> virtual_part;  // set when a virtual pipeline is in scope
};

// Plans the selection. Throws RequestError for virtual-only flags on a direct selection (SLU-CLI-004) or a selection
// naming nothing. `with_virtual` false skips the virtual part of a mixed project (the --json document has one plan).
PlanReport PlanProject(const WorkspaceOptions& workspace, const PlanCommand& command, bool with_virtual = true);

// A direct build ready to run: its plan checked against the warehouse, open read-write.
class DirectBuild {
 public:
  // Throws SLU-DEPLOY-006 when the selection has only virtual pipelines, the plan's blockers when the warehouse
  // cannot take it. Arms `cancellation`: a cancel interrupts a wait for the warehouse.
  static std::unique_ptr<DirectBuild> Prepare(const WorkspaceOptions& workspace, const std::vector<std::string>& select,
                                              Cancellation& cancellation);
  ~DirectBuild();

  const DirectPlan& plan() const { return plan_; }
  const ActualState& state() const { return state_; }
  // The protected pipelines whose confirmation token is not among `tokens`.
  std::vector<const PipelineScope*> Unconfirmed(const std::vector<std::string>& tokens) const;

  struct Result {
    std::string run_id;
    BuildOutcome outcome;
    nlohmann::json execution;  // as written to execution.json: {run_id, status, steps}
    std::filesystem::path statements_file;
    std::filesystem::path project_root;
  };
  struct Observer {
    std::function<void(const std::string& run_id, size_t steps)> on_started;  // before the first step
    std::function<void(const BuildProgress&)> on_progress;
  };
  // Runs the plan.
  Result Execute(const Observer& observer);

 private:
  DirectBuild() = default;

  const Project* project_ = nullptr;
  std::vector<std::string> select_;
  Cancellation* cancellation_ = nullptr;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<Warehouse> warehouse_;
  DirectPlan plan_;
  ActualState state_;
};

// "a b" of the selection items, "*" for none.
std::string SelectionText(const std::vector<std::string>& select);
// A build step's outcome as execution.json and --events show it.
nlohmann::json ToJson(const BuildStepOutcome& step);

}  // namespace sluice::service
