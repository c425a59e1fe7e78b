#include "deploy/readiness.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "deploy/desired_objects.hpp"
#include "deploy/direct_plan.hpp"
#include "engine/check_runner.hpp"
#include "sql/dialect.hpp"

namespace sluice {

namespace {

using nlohmann::json;

void Worsen(Readiness& verdict, Readiness to) { verdict = std::max(verdict, to); }

std::string QualifiedIn(Warehouse& warehouse, const std::string& ns, const std::string& name) {
  return warehouse.QualifiedName(Relation{ns, name});
}

int64_t CountRows(Warehouse& warehouse, const std::string& relation) {
  Rows rows = warehouse.Query("SELECT count(*) FROM " + relation);
  return rows.rows.empty() ? 0 : std::stoll(rows.rows[0][0].value_or("0"));
}

bool HasColumn(const std::optional<TableInfo>& table, const std::string& name) {
  return table && std::any_of(table->columns.begin(), table->columns.end(),
                              [&](const ColumnInfo& column) { return column.name == name; });
}

// The audit's SQL with each `ns.relation` of `physical` replaced by `ns.<physical>`. Physical names carry the
// deployment id's upper-case letters, so where unquoted names fold to lower case (PostgreSQL) the name is quoted.
std::string OnStaged(std::string text, const std::string& ns, const std::map<std::string, std::string>& physical,
                     const Warehouse& warehouse) {
  for (const auto& [logical, staged] : physical) {
    const std::regex reference("(^|[^A-Za-z0-9_.`\"])" + ns + "\\." + logical + "(?![A-Za-z0-9_])");
    const std::string replacement = warehouse.capabilities().folds_unquoted_identifiers
                                        ? warehouse.QualifiedName(Relation{ns, staged})
                                        : ns + "." + staged;
    text = std::regex_replace(text, reference, "$1" + replacement);
  }
  return text;
}

// The rows the root's query makes of the anchor's rows past the staged table's frontier (its highest offset per
// partition, or its latest time or cursor): rows the live path should have delivered. Their count, and how far their
// latest time is ahead of the staged table's, are the lag.
void MeasureLag(const Definitions& definitions, Warehouse& warehouse, const Asset& model, const Asset& anchor,
                const std::string& mode, const std::optional<TableInfo>& staged, const std::string& staged_relation,
                int64_t maximum_lag_seconds, RootReadiness& root) {
  std::string beyond;
  if (LineageColumns(mode).empty()) {
    Worsen(root.verdict, Readiness::kCaution);
    root.reasons.push_back("its lag cannot be measured: its anchor has no lineage columns and was replayed whole");
    return;
  }
  if (mode == "offsets" && HasColumn(staged, "_replay_partition") && HasColumn(staged, "_replay_offset")) {
    Rows frontier = warehouse.Query("SELECT toString(_replay_partition), toString(max(_replay_offset)) FROM " +
                                    staged_relation + " GROUP BY _replay_partition ORDER BY _replay_partition");
    std::string listed;
    for (const auto& row : frontier.rows) {
      beyond +=
          " OR (_replay_partition = " + row[0].value_or("0") + " AND _replay_offset > " + row[1].value_or("0") + ")";
      listed += (listed.empty() ? "" : ", ") + row[0].value_or("0");
    }
    beyond = listed.empty() ? "1" : "_replay_partition NOT IN (" + listed + ")" + beyond;
  } else {
    const std::string column = LineageColumns(mode).front();
    if (!HasColumn(staged, column)) {
      Worsen(root.verdict, Readiness::kCaution);
      root.reasons.push_back("its lag cannot be measured: the table has no " + mode + " lineage columns");
      return;
    }
    beyond = column + " > (SELECT max(" + column + ") FROM " + staged_relation + ")";
  }
  const std::string pending_rows = ResolvedModelQuery(definitions, model, [&](const ResolvedReference& reference) {
    if (reference.edge != EdgeType::kDrivingInput) return std::optional<std::string>();
    return std::optional<std::string>("(SELECT * FROM " + UpstreamRelation(anchor, true) + " WHERE " +
                                      RoleColumnsRenamed(anchor, beyond) + ")");
  });
  const bool timed = HasColumn(staged, "_replay_timestamp");
  Rows rows = warehouse.Query("SELECT toString(count())" +
                              std::string(timed ? ", toString(greatest(0, toInt64(max(_replay_timestamp)) - "
                                                  "toInt64((SELECT max(_replay_timestamp) FROM " +
                                                      staged_relation + "))))"
                                                : "") +
                              " FROM (" + pending_rows + ")");
  const int64_t pending = rows.rows.empty() ? 0 : std::stoll(rows.rows[0][0].value_or("0"));
  root.pending_rows = pending;
  root.lag_seconds = pending > 0 && timed && rows.rows[0][1] ? std::stoll(*rows.rows[0][1]) : 0;
  if (*root.lag_seconds > maximum_lag_seconds) {
    Worsen(root.verdict, Readiness::kNotReady);
    root.reasons.push_back("the staged table lags its anchor by " + std::to_string(*root.lag_seconds) + "s, over the " +
                           std::to_string(maximum_lag_seconds) + "s allowed");
  } else if (pending > 0) {
    Worsen(root.verdict, Readiness::kCaution);
    root.reasons.push_back(std::to_string(pending) +
                           " row(s) from the anchor past the staged table's frontier are not in it");
  }
}

}  // namespace

std::string ReadinessName(Readiness readiness) {
  switch (readiness) {
    case Readiness::kReady:
      return "ready";
    case Readiness::kCaution:
      return "caution";
    case Readiness::kNotReady:
      return "not_ready";
  }
  return "ready";
}

std::optional<std::string> LatestStagedDeployment(Warehouse& warehouse, const std::string& name_space) {
  DeploymentMetadata metadata(warehouse);
  std::set<std::string> published;
  for (const PublicationRow& row : metadata.Publications(name_space)) published.insert(row.deployment_id);
  std::optional<std::string> latest;
  for (const auto& [id, row] : LatestDeploymentStates(metadata.Deployments(name_space))) {
    if (row.state == DeploymentState::kBackfilled && published.count(id) == 0) latest = id;
  }
  return latest;
}

ReadinessReport AuditDeployment(const Definitions& definitions, Warehouse& warehouse, const std::string& name_space,
                                const std::string& deployment_id, int64_t maximum_lag_seconds,
                                double minimum_staged_row_ratio) {
  DeploymentMetadata metadata(warehouse);
  ReadinessReport report;
  report.deployment_id = deployment_id;
  report.maximum_lag_seconds = maximum_lag_seconds;
  report.minimum_staged_row_ratio = minimum_staged_row_ratio;
  const std::map<std::string, DeploymentRow> states = LatestDeploymentStates(metadata.Deployments(name_space));
  auto state = states.find(deployment_id);
  if (state == states.end()) {
    throw Error(Diagnostic{"SLU-DEPLOY-028",
                           "no deployment " + deployment_id + " in " + name_space,
                           {},
                           "`sluice deployment list` shows the deployments",
                           {}});
  }
  report.state = DeploymentStateName(state->second.state);
  if (state->second.state != DeploymentState::kBackfilled) {
    report.verdict = Readiness::kNotReady;
    report.reasons.push_back("the deployment is incomplete (" + report.state + "): rerun `sluice backfill`");
    return report;
  }
  const bool replayed = warehouse.capabilities().materialized_views;  // roots fed live, whose lag can be measured
  const std::map<std::string, std::string> live = BoundPhysicals(metadata.Bindings(name_space));
  std::map<std::string, std::string> physical;  // logical → this deployment's physical, every object
  std::set<std::string> rebuilt_models;
  std::vector<ObjectRow> roots;
  for (const ObjectRow& row : metadata.Objects(name_space)) {
    if (row.deployment_id != deployment_id || row.kind != "deployment") continue;
    physical[row.logical] = row.physical;
    if (row.action != "no_op") rebuilt_models.insert(row.model);
    if (row.is_root &&
        std::none_of(roots.begin(), roots.end(), [&](const ObjectRow& r) { return r.logical == row.logical; })) {
      roots.push_back(row);
    }
  }
  std::map<std::string, std::vector<const BoundaryRow*>> boundaries;  // by root physical
  const std::vector<BoundaryRow> boundary_rows = metadata.Boundaries(name_space);
  for (const BoundaryRow& row : boundary_rows) {
    if (row.deployment_id == deployment_id) boundaries[row.root].push_back(&row);
  }

  for (const ObjectRow& root_row : roots) {
    RootReadiness root;
    root.logical = root_row.logical;
    root.staged = root_row.physical;
    const std::optional<TableInfo> staged = warehouse.Describe(Relation{name_space, root.staged});
    if (!staged) {
      root.verdict = Readiness::kNotReady;
      root.reasons.push_back("the staged table " + root.staged + " is missing");
      report.roots.push_back(std::move(root));
      continue;
    }
    root.staged_rows = CountRows(warehouse, QualifiedIn(warehouse, name_space, root.staged));
    if (auto bound = live.find(root.logical); bound != live.end() && bound->second != root.staged) {
      root.active = bound->second;
      if (warehouse.Describe(Relation{name_space, *root.active})) {
        root.active_rows = CountRows(warehouse, QualifiedIn(warehouse, name_space, *root.active));
      }
    }
    if (root.active_rows && *root.active_rows > 0) {
      root.row_ratio = static_cast<double>(root.staged_rows) / static_cast<double>(*root.active_rows);
      if (*root.row_ratio < minimum_staged_row_ratio) {
        Worsen(root.verdict, Readiness::kNotReady);
        root.reasons.push_back("the staged table holds " + std::to_string(root.staged_rows) + " rows, under " +
                               std::to_string(static_cast<int>(minimum_staged_row_ratio * 100)) + "% of the active " +
                               std::to_string(*root.active_rows));
      } else if (*root.row_ratio < 1.0) {
        Worsen(root.verdict, Readiness::kCaution);
        root.reasons.push_back("the staged table holds fewer rows than the active one (" +
                               std::to_string(root.staged_rows) + " < " + std::to_string(*root.active_rows) + ")");
      }
    }
    const std::vector<const BoundaryRow*>& captured = boundaries[root.staged];
    const Asset* model = definitions.FindByName(root_row.model);
    const AssetDependency* driving = model != nullptr ? DrivingInput(*model) : nullptr;
    if (replayed && !captured.empty() && driving != nullptr) {
      root.anchor = captured.front()->anchor;
      MeasureLag(definitions, warehouse, *model, *definitions.Find(driving->upstream), captured.front()->mode, staged,
                 QualifiedIn(warehouse, name_space, root.staged), maximum_lag_seconds, root);
    }
    report.roots.push_back(std::move(root));
  }
  for (const RootReadiness& root : report.roots) Worsen(report.verdict, root.verdict);

  std::map<std::string, std::string> by_relation;  // logical relation → physical, for the audits' SQL
  for (const auto& [logical, staged] : physical) {
    if (!staged.empty() && staged != logical) by_relation[logical] = staged;
  }
  for (const AuditSpec& audit : definitions.audits()) {
    if (std::none_of(audit.referenced_models.begin(), audit.referenced_models.end(),
                     [&](const std::string& model) { return rebuilt_models.count(model) > 0; })) {
      continue;
    }
    AuditSpec staged = audit;
    staged.failure_count_sql = OnStaged(audit.failure_count_sql, name_space, by_relation, warehouse);
    staged.sample_sql = OnStaged(audit.sample_sql, name_space, by_relation, warehouse);
    const AuditResult result = RunAudit(staged, warehouse);
    StagedAudit outcome;
    outcome.name = audit.name;
    outcome.severity = AuditSeverityName(audit.severity);
    outcome.failing_rows = result.failing_rows;
    if (result.status == AuditStatus::kError) {
      outcome.status = "error";
      outcome.message = result.errors.empty() ? "" : result.errors.front().message;
      Worsen(report.verdict, Readiness::kNotReady);
    } else if (result.status == AuditStatus::kFail) {
      outcome.status = "fail";
      Worsen(report.verdict, audit.severity == AuditSeverity::kError ? Readiness::kNotReady : Readiness::kCaution);
    } else {
      outcome.status = "pass";
    }
    report.audits.push_back(std::move(outcome));
  }
  return report;
}

std::string ReadinessJson(const ReadinessReport& report) {
  json roots = json::array();
  for (const RootReadiness& root : report.roots) {
    roots.push_back({{"logical", root.logical},
                     {"staged", root.staged},
                     {"active", root.active ? json(*root.active) : json()},
                     {"anchor", root.anchor},
                     {"staged_rows", root.staged_rows},
                     {"active_rows", root.active_rows ? json(*root.active_rows) : json()},
                     {"row_ratio", root.row_ratio ? json(*root.row_ratio) : json()},
                     {"pending_rows", root.pending_rows ? json(*root.pending_rows) : json()},
                     {"lag_seconds", root.lag_seconds ? json(*root.lag_seconds) : json()},
                     {"verdict", ReadinessName(root.verdict)},
                     {"reasons", root.reasons}});
  }
  json audits = json::array();
  for (const StagedAudit& audit : report.audits) {
    audits.push_back({{"name", audit.name},
                      {"severity", audit.severity},
                      {"status", audit.status},
                      {"failing_rows", audit.failing_rows},
                      {"message", audit.message}});
  }
  json out{{"deployment_id", report.deployment_id},
           {"state", report.state},
           {"verdict", ReadinessName(report.verdict)},
           {"reasons", report.reasons},
           {"roots", roots},
           {"audits", audits},
           {"thresholds",
            {{"maximum_lag_seconds", report.maximum_lag_seconds},
             {"minimum_staged_row_ratio", report.minimum_staged_row_ratio}}}};
  return out.dump(2) + "\n";
}

std::string ReadinessText(const ReadinessReport& report) {
  std::string text =
      "deployment " + report.deployment_id + " (" + report.state + "): " + ReadinessName(report.verdict) + "\n";
  for (const std::string& reason : report.reasons) text += "  " + reason + "\n";
  for (const RootReadiness& root : report.roots) {
    text += "  " + ReadinessName(root.verdict) + "  " + root.logical + " -> " + root.staged + ": " +
            std::to_string(root.staged_rows) + " rows";
    if (root.active_rows) text += " (active " + *root.active + ": " + std::to_string(*root.active_rows) + ")";
    if (root.lag_seconds) text += ", lag " + std::to_string(*root.lag_seconds) + "s";
    text += "\n";
    for (const std::string& reason : root.reasons) text += "      " + reason + "\n";
  }
  for (const StagedAudit& audit : report.audits) {
    text += "  audit " + audit.status + "  " + audit.name + " (" + audit.severity + ")";
    if (audit.status == "fail") text += ": " + std::to_string(audit.failing_rows) + " failing row(s)";
    if (!audit.message.empty()) text += ": " + audit.message;
    text += "\n";
  }
  return text;
}

}  // namespace sluice
