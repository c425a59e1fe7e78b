#include "deploy/virtual_executor.hpp"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/pause_point.hpp"
#include "core/virtual_names.hpp"
#include "sql/dialect.hpp"

namespace sluice {

namespace {

bool IsRoot(const VirtualPlan& plan, const AssetKey& key) {
  for (const VirtualRoot& root : plan.roots) {
    if (root.root == key) return true;
  }
  return false;
}

void Preflight(const VirtualPlan& plan, DeploymentMetadata& metadata) {
  for (const DeploymentRow& row : metadata.Deployments(plan.name_space)) {
    if (row.deployment_id != plan.deployment_id || row.plan_fingerprint == plan.fingerprint) continue;
    throw Error(Diagnostic{"SLU-DEPLOY-026",
                           "deployment " + plan.deployment_id +
                               " was started with another plan: the project or the warehouse changed since",
                           {},
                           "run `sluice backfill` without --deployment-id to start a new deployment",
                           {}});
  }
  for (const PublicationRow& row : metadata.Publications(plan.name_space)) {
    if (row.deployment_id != plan.deployment_id) continue;
    throw Error(Diagnostic{"SLU-DEPLOY-027",
                           "deployment " + plan.deployment_id + " is already published",
                           {},
                           "a published deployment is never rebuilt: run `sluice backfill` for a new one",
                           {}});
  }
}

std::vector<ObjectRow> ObjectRows(const VirtualPlan& plan, const std::string& now) {
  std::vector<ObjectRow> rows;
  for (const VirtualObject& object : plan.objects) {
    ObjectRow row;
    row.deployment_id = plan.deployment_id;
    row.kind = "deployment";
    row.name_space = plan.name_space;
    row.logical = object.logical;
    row.object_type = object.object_type;
    row.physical = object.physical;
    row.model = object.model.name();
    row.action = ObjectActionName(object.action);
    row.is_root = IsRoot(plan, object.model);
    row.fingerprint = object.fingerprint;
    row.columns_json = ColumnsRecord(object.columns);
    row.canonical_query = object.canonical_query;
    row.recorded_at = now;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::optional<std::string> ResumableDeployment(const VirtualActualState& actual,
                                               const std::vector<PublicationRow>& publications,
                                               const std::string& plan_fingerprint) {
  std::optional<std::string> found;
  for (const auto& [id, row] : LatestDeploymentStates(actual.deployments)) {
    if (row.state == DeploymentState::kBackfilled || row.plan_fingerprint != plan_fingerprint) continue;
    const bool published =
        std::any_of(publications.begin(), publications.end(),
                    [&](const PublicationRow& publication) { return publication.deployment_id == id; });
    if (!published) found = id;  // ids sort by creation time: the latest wins
  }
  return found;
}

std::optional<ChosenDeploymentId> ChooseDeploymentId(const VirtualActualState& actual,
                                                     const std::vector<PublicationRow>& publications,
                                                     const std::string& plan_fingerprint,
                                                     const std::vector<RecordedPlan>& recorded) {
  if (std::optional<std::string> resumable = ResumableDeployment(actual, publications, plan_fingerprint)) {
    return ChosenDeploymentId{*resumable, true};
  }
  for (const RecordedPlan& plan : recorded) {
    if (plan.fingerprint != plan_fingerprint || !IsDeploymentId(plan.deployment_id)) continue;
    const bool known = std::any_of(actual.deployments.begin(), actual.deployments.end(), [&](const DeploymentRow& row) {
      return row.deployment_id == plan.deployment_id;
    });
    if (!known) return ChosenDeploymentId{plan.deployment_id, false};
  }
  return std::nullopt;
}

std::vector<RecordedPlan> ReadRecordedPlans(const std::filesystem::path& project_root) {
  std::vector<RecordedPlan> plans;
  for (const char* file : {"target/run/plan/plan.json", "target/run/plan/virtual/plan.json"}) {
    std::ifstream in(project_root / file);
    if (!in) continue;
    const nlohmann::json plan = nlohmann::json::parse(in, nullptr, false);
    if (!plan.is_object() || !plan.value("deployment_id", nlohmann::json()).is_string() ||
        !plan.value("fingerprint", nlohmann::json()).is_string()) {
      continue;
    }
    plans.push_back({plan["deployment_id"].get<std::string>(), plan["fingerprint"].get<std::string>()});
  }
  return plans;
}

DeploymentPlan PlanDeployment(const Definitions& definitions, const VirtualActualState& actual,
                              const std::vector<PublicationRow>& publications, const std::vector<RecordedPlan>& recorded,
                              const Capabilities& capabilities, VirtualPlanOptions options, const Clock& clock) {
  DeploymentPlan chosen{PlanVirtual(definitions, actual, capabilities, options, clock), false};
  if (options.deployment_id) return chosen;
  if (std::optional<ChosenDeploymentId> id =
          ChooseDeploymentId(actual, publications, chosen.plan.fingerprint, recorded)) {
    options.deployment_id = id->deployment_id;
    chosen.plan = PlanVirtual(definitions, actual, capabilities, options, clock);
    chosen.resumes = id->resumes;
  }
  return chosen;
}

StagedBackfillOutcome BackfillDeployment(const VirtualPlan& plan, Warehouse& warehouse, RunStore& runs,
                                         EventLog& events, MaterializationStore& materializations, const Clock& clock,
                                         const std::string& run_id, const StagedBackfillOptions& options) {
  StagedBackfillOutcome outcome;
  outcome.run_id = run_id;
  outcome.deployment_id = plan.deployment_id;
  DeploymentMetadata metadata(warehouse);
  metadata.EnsureTables();
  Preflight(plan, metadata);

  DeploymentRow header;
  header.deployment_id = plan.deployment_id;
  header.name_space = plan.name_space;
  header.plan_fingerprint = plan.fingerprint;
  header.lineage_mode = plan.lineage_mode;
  header.plan_json = VirtualPlanJson(plan);
  header.tool_version = options.tool_version;
  header.recorded_at = FormatUtc(clock.Now());
  metadata.Append(header);
  metadata.Append(ObjectRows(plan, header.recorded_at));
  PausePoint("backfill_after_preparation");

  std::vector<BoundaryRow> boundaries;
  std::string boundary_time;
  DirectExecutorOptions direct;
  direct.project_root = options.project_root;
  direct.cancel = options.cancel;
  direct.statements_file = options.statements_file;
  direct.on_progress = options.on_progress;
  direct.selection_text = options.selection_text;
  direct.command = "backfill " + plan.deployment_id;
  direct.on_boundary = [&](const ReplaySpec& spec, const CapturedBoundary& cutoff, const CapturedBoundary* lower) {
    const std::string captured = FormatUtc(clock.Now());
    if (boundary_time.empty()) boundary_time = captured;
    const std::string root = plan.physical->Find(spec.root)->relation_name;
    const std::string anchor = spec.driving_namespace + "." + spec.driving_table;
    std::map<std::optional<std::string>, BoundaryRow> by_partition;
    auto row_for = [&](const std::optional<std::string>& partition) -> BoundaryRow& {
      BoundaryRow& row = by_partition[partition];
      row.deployment_id = plan.deployment_id;
      row.name_space = plan.name_space;
      row.root = root;
      row.anchor = anchor;
      row.mode = spec.mode;
      row.partition = partition;
      row.captured_at = captured;
      return row;
    };
    for (const BoundaryValue& value : cutoff.values) row_for(value.partition).cutoff = value.value;
    if (lower != nullptr) {
      for (const BoundaryValue& value : lower->values) row_for(value.partition).lower = value.value;
    }
    if (by_partition.empty()) row_for(std::nullopt);  // an empty anchor: recorded, with no values
    for (auto& [partition, row] : by_partition) boundaries.push_back(std::move(row));
  };
  DirectExecutor executor(*plan.physical, warehouse, runs, events, materializations, clock, direct);
  BuildOutcome built = executor.Execute(plan.steps, run_id);
  outcome.status = built.status;
  outcome.steps = std::move(built.steps);
  if (outcome.status != RunStatus::kSuccess) {
    try {
      DeploymentRow failed = header;
      failed.state = DeploymentState::kFailed;
      failed.recorded_at = FormatUtc(clock.Now());
      metadata.Append(failed);
    } catch (const Error&) {
      // The deployment stays `planned`: incomplete all the same.
    }
    return outcome;
  }
  metadata.Append(boundaries);
  // Readiness reads: what each root's staged table holds now.
  for (const VirtualRoot& root : plan.roots) {
    const Asset& staged = *plan.physical->Find(root.root);
    Rows count = warehouse.Query("SELECT count(*) FROM " +
                                 warehouse.QualifiedName(Relation{root.root.name_space(), staged.relation_name}));
    outcome.staged_rows.emplace_back(root.logical, count.rows.empty() ? 0 : std::stoll(count.rows[0][0].value_or("0")));
  }
  PausePoint("backfill_before_complete");
  DeploymentRow complete = header;
  complete.state = DeploymentState::kBackfilled;
  complete.boundary_time = boundary_time.empty() ? FormatUtc(clock.Now()) : boundary_time;
  complete.recorded_at = FormatUtc(clock.Now());
  metadata.Append(complete);
  outcome.boundary_time = complete.boundary_time;
  return outcome;
}

}  // namespace sluice
