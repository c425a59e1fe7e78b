// PlanExplainer: a DirectPlan (and, when read, the warehouse's ActualState) as text for people, as JSON for
// scripts, and as workflow files: `steps/NNNN_<step>.sql` (`.sql.template` for a replay step, whose boundary is
// filled in at run time), `workflow.sql` (`workflow.template.sql` when any step is a template) and
// `workflow.json`. `plan` writes them under target/run/plan/, `build` under target/run/build/, `compile` under
// target/compiled/workflows/<pipeline>/ (core/file_system's ReplaceFolder writes a folder of them whole).
// Statements are shown with secrets redacted.
// Thread-safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "deploy/actual_state.hpp"
#include "deploy/direct_plan.hpp"

namespace sluice {

// With `with_sql` false each statement is listed by its sha256 only (workflow.json: the step files hold the text).
nlohmann::json PlanJson(const DirectPlan& plan, const ActualState* state, bool with_sql = true);

// The plan for a terminal: scope, per-model change (and SQL diffs), source changes, steps with statement counts.
std::string PlanText(const DirectPlan& plan, const ActualState* state);

// The workflow's files: path relative to the workflow's folder → contents.
std::map<std::string, std::string> WorkflowFiles(const DirectPlan& plan);

}  // namespace sluice
