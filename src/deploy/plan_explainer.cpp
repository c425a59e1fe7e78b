#include "deploy/plan_explainer.hpp"

#include <cstdio>

#include "core/sha256.hpp"

namespace sluice {

namespace {

using nlohmann::json;

bool IsTemplate(const PlanStep& step) {
  for (const PlanStatement& statement : step.statements) {
    if (statement.shown.find(kReplayBoundaryPlaceholder) != std::string::npos) return true;
  }
  return false;
}

std::string StepFileName(size_t index, const PlanStep& step) {
  char number[16];
  std::snprintf(number, sizeof number, "%04zu", index + 1);
  return std::string("steps/") + number + "_" + step.name + (IsTemplate(step) ? ".sql.template" : ".sql");
}

std::string StepSql(const PlanStep& step) {
  std::string text;
  for (const PlanStatement& statement : step.statements) text += statement.shown + ";\n";
  return text;
}

// With `with_sql` false the statements are listed by sha256 only: the workflow files beside the JSON hold their text.
json StepJson(size_t index, const PlanStep& step, bool with_sql) {
  json statements = json::array();
  for (const PlanStatement& statement : step.statements) {
    json entry{{"sha256", Sha256Hex(statement.shown)}};
    if (with_sql) entry["sql"] = statement.shown;
    statements.push_back(std::move(entry));
  }
  json out{{"index", index + 1},
           {"name", step.name},
           {"phase", DeployPhaseName(step.phase)},
           {"file", StepFileName(index, step)},
           {"asset", step.asset ? json(step.asset->ToString()) : json(nullptr)},
           {"statements", statements}};
  if (step.replay) {
    json subtree = json::array();
    for (const AssetKey& key : step.replay->subtree) subtree.push_back(key.ToString());
    out["replay"] = {{"root", step.replay->root.ToString()},
                     {"driving", step.replay->driving.ToString()},
                     {"driving_table", step.replay->driving_table.empty()
                                           ? json(nullptr)
                                           : json(step.replay->driving_namespace + "." + step.replay->driving_table)},
                     {"lineage_mode", step.replay->mode},
                     {"landing_view", step.replay->landing_view ? json(*step.replay->landing_view) : json(nullptr)},
                     {"subtree", subtree}};
  }
  if (step.audit) out["audit"] = *step.audit;
  return out;
}

}  // namespace

json PlanJson(const DirectPlan& plan, const ActualState* state, bool with_sql) {
  json scope = json::array();
  for (const AssetKey& key : plan.scope) scope.push_back(key.ToString());
  json sources = json::array();
  for (const AssetKey& key : plan.sources) sources.push_back(key.ToString());
  json pipelines = json::array();
  for (const PipelineScope& pipeline : plan.pipelines) {
    pipelines.push_back({{"name", pipeline.name},
                         {"mode", "direct"},
                         {"models", pipeline.models},
                         {"protected", pipeline.confirmation.has_value()},
                         {"warning", pipeline.protection_warning}});
  }
  json steps = json::array();
  for (size_t i = 0; i < plan.steps.size(); ++i) steps.push_back(StepJson(i, plan.steps[i], with_sql));
  json out{{"adapter", plan.adapter}, {"mode", "direct"},  {"selection", plan.selection}, {"pipelines", pipelines},
           {"scope", scope},          {"sources", sources}, {"steps", steps},             {"warnings", plan.warnings}};
  if (state != nullptr) {
    json models = json::array();
    for (const ModelState& model : state->models) {
      models.push_back({{"model", model.model.ToString()},
                        {"exists", model.exists},
                        {"action", model.exists ? "rebuild" : "create"},
                        {"change", ModelChangeName(model.change)},
                        {"sha256", model.sha256},
                        {"diff", model.diff.empty() ? json(nullptr) : json(model.diff)}});
    }
    json changes = json::array();
    for (const SourceChange& change : state->source_changes) {
      changes.push_back({{"source", change.source}, {"object", change.object}, {"change", change.what}});
    }
    json blockers = json::array();
    for (const Diagnostic& d : state->blockers) {
      blockers.push_back({{"code", d.code}, {"message", d.message}, {"file", d.location.file}, {"line", d.location.line}});
    }
    out["actual"] = {{"server_version", state->server_version},
                     {"blockers", blockers},
                     {"models", models},
                     {"source_changes", changes},
                     {"existing_sources", state->existing_sources}};
  }
  return out;
}

std::string PlanText(const DirectPlan& plan, const ActualState* state) {
  std::string text = "Direct build on " + plan.adapter;
  if (state != nullptr && !state->server_version.empty()) text += " " + state->server_version;
  text += ": " + std::to_string(plan.scope.size()) + " model(s) in " + std::to_string(plan.pipelines.size()) +
          " pipeline(s), " + std::to_string(plan.steps.size()) + " step(s)\n";
  for (const PipelineScope& pipeline : plan.pipelines) {
    text += "  pipeline " + pipeline.name + (pipeline.confirmation ? " (protected)" : "") + "\n";
    if (!pipeline.protection_warning.empty()) text += "    warning: " + pipeline.protection_warning + "\n";
  }
  if (state != nullptr) {
    text += "Models (every model in scope is dropped and rebuilt from its source's history):\n";
    for (const ModelState& model : state->models) {
      text += "  " + std::string(model.exists ? "rebuild " : "create  ") + model.model.ToString() + "  (" +
              ModelChangeName(model.change) + " since the last build)\n";
      if (!model.diff.empty()) {
        for (size_t start = 0; start < model.diff.size();) {
          size_t end = model.diff.find('\n', start);
          if (end == std::string::npos) end = model.diff.size();
          text += "      " + model.diff.substr(start, end - start) + "\n";
          start = end + 1;
        }
      }
    }
    for (const SourceChange& change : state->source_changes) {
      text += "  source " + change.source + ": " + change.object + " differs from the project: " + change.what +
              " (kept as it is: drop it to recreate it)\n";
    }
  }
  text += "Steps:\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    char line[32];
    std::snprintf(line, sizeof line, "  %4zu  ", i + 1);
    text += line + DeployPhaseName(step.phase);
    text.append(std::max<int>(1, 13 - static_cast<int>(DeployPhaseName(step.phase).size())), ' ');
    text += step.name + "\n";
  }
  for (const std::string& warning : plan.warnings) text += "warning: " + warning + "\n";
  return text;
}

std::map<std::string, std::string> WorkflowFiles(const DirectPlan& plan) {
  std::map<std::string, std::string> files;
  std::string workflow;
  bool any_template = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& step = plan.steps[i];
    any_template = any_template || IsTemplate(step);
    const std::string& sql = files[StepFileName(i, step)] = StepSql(step);
    workflow += "-- " + std::to_string(i + 1) + " " + DeployPhaseName(step.phase) + " " + step.name + "\n" + sql + "\n";
  }
  if (!workflow.empty()) workflow.pop_back();  // one newline at the end, as every compiled SQL file
  files[any_template ? "workflow.template.sql" : "workflow.sql"] = std::move(workflow);
  files["workflow.json"] = PlanJson(plan, nullptr, false).dump(2) + "\n";
  return files;
}

}  // namespace sluice
