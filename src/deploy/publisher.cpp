#include "deploy/publisher.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/sha256.hpp"
#include "core/virtual_names.hpp"
#include "deploy/deployment_metadata.hpp"
#include "sql/dialect.hpp"
#include "sql/sluice_ddl.hpp"
#include "state/state_store.hpp"

namespace sluice {

namespace {

Relation LockRelation(const std::string& name_space) { return Relation{"_sluice", "publish_lock__" + name_space}; }

// Whether the process `holder` names ("<host> <pid> <start time>") is gone: on this host, no process with that pid
// started at that time. A holder on another host is never taken for dead.
bool HolderIsDead(const std::string& holder) {
  const size_t first = holder.find(' ');
  const size_t second = holder.find(' ', first + 1);
  if (first == std::string::npos || second == std::string::npos || holder.substr(0, first) != HostName()) return false;
  try {
    const int64_t pid = std::stoll(holder.substr(first + 1, second - first - 1));
    const int64_t start = std::stoll(holder.substr(second + 1));
    return ProcessStartTime(pid) != start;
  } catch (const std::exception&) {
    return false;  // not a holder this code wrote
  }
}

// The namespace's publish lock, held while the object lives. Its one row is also the operation's journal: who holds
// it, and which deployment it publishes, so that a rerun can finish a publish whose process died (InterruptedPublish).
class PublishLock {
 public:
  PublishLock(Warehouse& warehouse, const std::string& name_space, const std::string& operation,
              const std::string& deployment_id)
      : warehouse_(warehouse), relation_(LockRelation(name_space)) {
    warehouse_.EnsureSchema("_sluice");
    const std::string holder =
        HostName() + " " + std::to_string(getpid()) + " " + std::to_string(ProcessStartTime(getpid()));
    for (int attempt = 0; attempt < 2; ++attempt) {
      try {
        Create(holder, operation, deployment_id);
        return;
      } catch (const Error&) {
        if (attempt == 0 && HolderIsDead(ReadHolder().value_or(""))) {
          warehouse_.Execute("DROP TABLE IF EXISTS " + warehouse_.QualifiedName(relation_));
          continue;
        }
      }
      break;
    }
    throw Error(Diagnostic{"SLU-DEPLOY-031",
                           "another publish or rollback of " + name_space + " is in progress (" + Holder() + ")",
                           {},
                           "wait for it to finish and run the command again; if that process is gone on another host, "
                           "drop the table " +
                               relation_.ToString(),
                           {}});
  }
  ~PublishLock() {
    try {
      warehouse_.Execute("DROP TABLE IF EXISTS " + warehouse_.QualifiedName(relation_));
    } catch (const Error&) {
      // The next publish on this host sees the holder dead and takes the lock over.
    }
  }
  PublishLock(const PublishLock&) = delete;
  PublishLock& operator=(const PublishLock&) = delete;

 private:
  void Create(const std::string& holder, const std::string& operation, const std::string& deployment_id) {
    const sql::Dialect dialect = warehouse_.dialect();
    const std::string select = "SELECT " + sql::QuoteString(dialect, holder) + " AS holder, " +
                               sql::QuoteString(dialect, operation) + " AS operation, " +
                               sql::QuoteString(dialect, deployment_id) + " AS deployment_id";
    const std::string name = warehouse_.QualifiedName(relation_);
    warehouse_.Execute(sql::CreateTableAs(dialect, name, select));
  }

  std::optional<std::string> ReadHolder() {
    try {
      Rows rows = warehouse_.Query("SELECT holder FROM " + warehouse_.QualifiedName(relation_));
      if (!rows.rows.empty()) return rows.rows[0][0].value_or("");
    } catch (const Error&) {
      // Not there (any more), or being created.
    }
    return std::nullopt;
  }

  std::string Holder() {
    if (std::optional<std::string> holder = ReadHolder()) return "held by host, pid and start time " + *holder;
    return "the lock is being taken";
  }

  Warehouse& warehouse_;
  Relation relation_;
};

struct Publication {
  std::string id;
  std::string deployment_id;
  std::string published_at;
  std::map<std::string, std::string> bindings;  // logical → physical
};

std::vector<Publication> Publications(const std::vector<PublicationRow>& rows) {
  std::vector<Publication> out;
  std::map<std::string, size_t> index;
  for (const PublicationRow& row : rows) {  // oldest first
    auto [at, added] = index.emplace(row.publication_id, out.size());
    if (added) out.push_back({row.publication_id, row.deployment_id, row.published_at, {}});
    out[at->second].bindings[row.logical] = row.physical;
  }
  return out;
}

void CheckPhysicalExist(Warehouse& warehouse, const std::string& name_space, const std::string& deployment_id,
                        const std::vector<ViewBinding>& bindings) {
  for (const ViewBinding& binding : bindings) {
    if (warehouse.Describe(Relation{name_space, binding.physical})) continue;
    throw Error(
        Diagnostic{"SLU-DEPLOY-033",
                   "deployment " + deployment_id + " misses its object " + name_space + "." + binding.physical,
                   {},
                   "`sluice deployment show " + deployment_id + "` lists its objects; backfill a new deployment",
                   {}});
  }
}

// Switches the bindings and records the publication; `previous` maps each logical to the deployment it was bound to.
PublishOutcome Switch(Warehouse& warehouse, DeploymentMetadata& metadata, const Clock& clock,
                      const std::string& name_space, const std::string& deployment_id, const std::string& operation,
                      std::vector<ViewBinding> bindings, std::vector<std::string> removals, const StatementSink& sink) {
  PublishOutcome outcome;
  outcome.operation = operation;
  outcome.deployment_id = deployment_id;
  const std::map<std::string, std::string> live = BoundPhysicals(metadata.Bindings(name_space));
  std::erase_if(removals, [&](const std::string& logical) { return live.count(logical) == 0; });
  std::string digest;
  for (const ViewBinding& binding : bindings) {
    digest += binding.logical + "=" + binding.physical + ";";
    if (outcome.previous_deployment_id.empty()) {
      // A binding that stays as it is (a rollback rebinds every view of its target) says nothing of what was live.
      if (auto at = live.find(binding.logical); at != live.end() && at->second != binding.physical) {
        if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(at->second)) {
          outcome.previous_deployment_id = parts->deployment_id;
        }
      }
    }
  }
  const auto now = clock.Now();
  outcome.publication_id = CompactUtc(now) + "_" + Sha256Hex(digest + operation + FormatUtc(now)).substr(0, 12);
  std::vector<PublicationRow> rows;
  for (const ViewBinding& binding : bindings) {
    PublicationRow row;
    row.publication_id = outcome.publication_id;
    row.deployment_id = deployment_id;
    row.operation = operation;
    if (auto at = live.find(binding.logical); at != live.end()) {
      if (std::optional<PhysicalNameParts> parts = SplitPhysicalName(at->second)) {
        row.previous_deployment_id = parts->deployment_id;
      }
    }
    row.name_space = name_space;
    row.logical = binding.logical;
    row.physical = binding.physical;
    row.published_at = FormatUtc(now);
    rows.push_back(std::move(row));
  }
  metadata.EnsureTables();
  const bool bound = std::all_of(bindings.begin(), bindings.end(), [&](const ViewBinding& b) {
    auto at = live.find(b.logical);
    return at != live.end() && at->second == b.physical;
  });
  if (bound) {
    // Switched already (a publish killed after the switch): what is left is recorded and done, nothing switches.
    for (const PublicationRow& row : metadata.Publications(name_space)) {
      if (row.deployment_id == deployment_id) {
        outcome.publication_id.clear();
        break;
      }
    }
    if (!outcome.publication_id.empty()) {
      const std::string insert = metadata.InsertStatement(rows);
      if (sink) sink(insert);
      warehouse.Execute(insert);
    }
    DropStaleBindingViews(warehouse, name_space, sink);
    outcome.already_live = true;
  } else {
    BindViews(warehouse, name_space, bindings, {metadata.InsertStatement(rows)}, sink);
  }
  UnbindViews(warehouse, name_space, removals, sink);
  outcome.bindings = std::move(bindings);
  outcome.removed = std::move(removals);
  return outcome;
}

}  // namespace

PublishOutcome Publish(const Definitions& definitions, Warehouse& warehouse, const Clock& clock,
                       const PublishRequest& request) {
  DeploymentMetadata metadata(warehouse);
  const std::string& id = request.deployment_id;
  const std::map<std::string, DeploymentRow> states = LatestDeploymentStates(metadata.Deployments(request.name_space));
  auto state = states.find(id);
  if (state == states.end()) {
    throw Error(Diagnostic{"SLU-DEPLOY-028",
                           "no deployment " + id + " in " + request.name_space,
                           {},
                           "`sluice deployment list` shows the deployments",
                           {}});
  }
  PublishLock lock(warehouse, request.name_space, "promote", id);
  if (state->second.state != DeploymentState::kBackfilled) {
    throw Error(Diagnostic{"SLU-DEPLOY-032",
                           "deployment " + id + " is incomplete (" + DeploymentStateName(state->second.state) +
                               "): its backfill did not finish, so its tables may be partial",
                           {},
                           "rerun `sluice backfill` (it resumes the deployment), then publish",
                           {}});
  }
  std::vector<ViewBinding> tables, views;
  std::set<std::string> models;
  std::map<std::string, std::string> logical_of_model;
  const std::vector<ObjectRow> objects = metadata.Objects(request.name_space);
  for (const ObjectRow& row : objects) {
    if (row.deployment_id != id || row.kind != "deployment") continue;
    logical_of_model[row.model] = row.logical;
    if (row.action == "no_op") continue;
    auto& list = row.object_type == "view" ? views : tables;
    if (std::none_of(list.begin(), list.end(), [&](const ViewBinding& b) { return b.logical == row.logical; })) {
      list.push_back({row.logical, row.physical});
    }
  }
  auto by_name = [](const ViewBinding& a, const ViewBinding& b) { return a.logical < b.logical; };
  std::sort(tables.begin(), tables.end(), by_name);
  std::sort(views.begin(), views.end(), by_name);
  std::vector<ViewBinding> bindings = tables;
  bindings.insert(bindings.end(), views.begin(), views.end());
  CheckPhysicalExist(warehouse, request.name_space, id, bindings);
  // Logical names the same models had under another relation name before.
  std::set<std::string> removals;
  for (const ObjectRow& row : objects) {
    auto current = logical_of_model.find(row.model);
    if (row.deployment_id != id && current != logical_of_model.end() && current->second != row.logical) {
      removals.insert(row.logical);
    }
  }
  PublishOutcome outcome;
  std::optional<ReadinessReport> readiness;
  const std::map<std::string, std::string> live = BoundPhysicals(metadata.Bindings(request.name_space));
  const bool switched = std::all_of(bindings.begin(), bindings.end(), [&](const ViewBinding& b) {
    auto at = live.find(b.logical);
    return at != live.end() && at->second == b.physical;
  });
  // Readers already read it (a publish that died after its switch): what is left is finished, not judged again.
  if (!request.force && !switched) {
    readiness = AuditDeployment(definitions, warehouse, request.name_space, id, request.maximum_lag_seconds,
                                request.minimum_staged_row_ratio);
    if (readiness->verdict == Readiness::kNotReady) {
      std::string why;
      for (const std::string& reason : readiness->reasons) why += "; " + reason;
      for (const RootReadiness& root : readiness->roots) {
        for (const std::string& reason : root.reasons) why += "; " + root.logical + ": " + reason;
      }
      for (const StagedAudit& audit : readiness->audits) {
        if (audit.status != "pass") why += "; audit '" + audit.name + "' " + audit.status;
      }
      throw Error(Diagnostic{"SLU-DEPLOY-034",
                             "deployment " + id + " is not ready" + why,
                             {},
                             "`sluice audit backfill " + id + "` shows why; pass --force to publish it anyway",
                             {}});
    }
  }
  outcome = Switch(warehouse, metadata, clock, request.name_space, id, "promote", std::move(bindings),
                   {removals.begin(), removals.end()}, request.on_statement);
  outcome.readiness = std::move(readiness);
  return outcome;
}

PublishOutcome Rollback(Warehouse& warehouse, const Clock& clock, const PublishRequest& request) {
  DeploymentMetadata metadata(warehouse);
  PublishLock lock(warehouse, request.name_space, "rollback", request.deployment_id);
  const std::vector<Publication> publications = Publications(metadata.Publications(request.name_space));
  const std::map<std::string, std::string> live = BoundPhysicals(metadata.Bindings(request.name_space));
  auto matches_live = [&](const Publication& publication) {
    return std::all_of(publication.bindings.begin(), publication.bindings.end(), [&](const auto& binding) {
      auto at = live.find(binding.first);
      return at != live.end() && at->second == binding.second;
    });
  };
  std::optional<size_t> current;
  for (size_t i = publications.size(); i-- > 0;) {
    if (matches_live(publications[i])) {
      current = i;
      break;
    }
  }
  if (publications.empty()) {
    throw Error(Diagnostic{"SLU-DEPLOY-036",
                           "nothing was ever published in " + request.name_space,
                           {},
                           "`sluice publish` binds the stable views to a deployment first",
                           {}});
  }
  if (!current) {
    throw Error(Diagnostic{"SLU-DEPLOY-035",
                           "the live views of " + request.name_space + " match no recorded publication",
                           {},
                           "`sluice doctor` shows each view; `sluice repair active-view` rebinds one, then roll back",
                           {}});
  }
  std::optional<size_t> target;
  for (size_t i = *current; i-- > 0;) {
    const Publication& candidate = publications[i];
    if (request.previous ? candidate.bindings != publications[*current].bindings
                         : candidate.deployment_id == request.deployment_id) {
      target = i;
      break;
    }
  }
  if (!target && !request.previous && publications[*current].deployment_id == request.deployment_id) target = current;
  if (!target) {
    throw Error(Diagnostic{"SLU-DEPLOY-036",
                           request.previous ? "there is no earlier publication to roll back to"
                                            : "deployment " + request.deployment_id + " was never published",
                           {},
                           "`sluice deployment list` shows the published deployments",
                           {}});
  }
  const Publication& to = publications[*target];
  std::vector<ViewBinding> bindings;
  for (const auto& [logical, physical] : to.bindings) bindings.push_back({logical, physical});
  CheckPhysicalExist(warehouse, request.name_space, to.deployment_id, bindings);
  PublishOutcome outcome = Switch(warehouse, metadata, clock, request.name_space, to.deployment_id, "rollback",
                                  std::move(bindings), {}, request.on_statement);
  if (outcome.previous_deployment_id.empty()) outcome.previous_deployment_id = publications[*current].deployment_id;
  return outcome;
}

std::optional<std::string> InterruptedPublish(Warehouse& warehouse, const std::string& name_space) {
  const Relation lock = LockRelation(name_space);
  if (!warehouse.Describe(lock)) return std::nullopt;
  Rows rows;
  try {
    rows = warehouse.Query("SELECT holder, operation, deployment_id FROM " + warehouse.QualifiedName(lock));
  } catch (const Error&) {
    return std::nullopt;  // a lock without a journal, or one being dropped
  }
  if (rows.rows.empty() || rows.rows[0][1].value_or("") != "promote" || !HolderIsDead(rows.rows[0][0].value_or(""))) {
    return std::nullopt;
  }
  const std::string id = rows.rows[0][2].value_or("");
  return IsDeploymentId(id) ? std::optional<std::string>(id) : std::nullopt;
}

NamespacedDeployment DeploymentToPublish(Warehouse& warehouse, const std::vector<std::string>& namespaces) {
  for (const std::string& name_space : namespaces) {
    if (std::optional<std::string> interrupted = InterruptedPublish(warehouse, name_space)) {
      return {name_space, *interrupted};
    }
  }
  std::optional<NamespacedDeployment> staged;  // ids sort by creation time: the greatest is the latest
  for (const std::string& name_space : namespaces) {
    std::optional<std::string> latest = LatestStagedDeployment(warehouse, name_space);
    if (latest && (!staged || *latest > staged->deployment_id)) staged = NamespacedDeployment{name_space, *latest};
  }
  if (staged) return *staged;
  // A deployment backfilled since the last publication but not completely: that is what was meant, and it cannot be.
  for (const std::string& name_space : namespaces) {
    DeploymentMetadata metadata(warehouse);
    std::string last_published;  // ISO-8601 UTC times compare as text
    for (const PublicationRow& row : metadata.Publications(name_space)) {
      last_published = std::max(last_published, row.published_at);
    }
    const std::vector<DeploymentRow> rows = metadata.Deployments(name_space);
    std::map<std::string, std::string> started;  // id → its first row's time
    for (const DeploymentRow& row : rows) started.emplace(row.deployment_id, row.recorded_at);
    for (const auto& [id, row] : LatestDeploymentStates(rows)) {
      if (row.state == DeploymentState::kBackfilled || started[id] <= last_published) continue;
      throw Error(Diagnostic{"SLU-DEPLOY-032",
                             "deployment " + id + " is incomplete (" + DeploymentStateName(row.state) +
                                 "): its backfill did not finish, so its tables may be partial",
                             {},
                             "rerun `sluice backfill` (it resumes the deployment), then publish",
                             {}});
    }
  }
  std::optional<std::pair<std::string, NamespacedDeployment>> current;  // by its publication time
  for (const std::string& name_space : namespaces) {
    DeploymentMetadata metadata(warehouse);
    const std::vector<Publication> publications = Publications(metadata.Publications(name_space));
    const std::map<std::string, std::string> live = BoundPhysicals(metadata.Bindings(name_space));
    for (size_t i = publications.size(); i-- > 0;) {
      const bool matches = std::all_of(publications[i].bindings.begin(), publications[i].bindings.end(),
                                       [&](const auto& binding) {
                                         auto at = live.find(binding.first);
                                         return at != live.end() && at->second == binding.second;
                                       });
      if (!matches) continue;
      if (!current || publications[i].published_at > current->first) {
        current = {publications[i].published_at, NamespacedDeployment{name_space, publications[i].deployment_id}};
      }
      break;
    }
  }
  if (current) return current->second;
  std::string list;
  for (const std::string& name_space : namespaces) list += (list.empty() ? "" : ", ") + name_space;
  throw Error(Diagnostic{"SLU-DEPLOY-029",
                         "no staged deployment in " + list + " waits to be published",
                         {},
                         "run `sluice backfill` first; `sluice deployment list` shows the deployments",
                         {}});
}

std::optional<std::string> NamespaceOfDeployment(Warehouse& warehouse, const std::vector<std::string>& namespaces,
                                                 const std::string& id) {
  DeploymentMetadata metadata(warehouse);
  for (const std::string& name_space : namespaces) {
    const std::vector<DeploymentRow> deployments = metadata.Deployments(name_space);
    const std::vector<PublicationRow> publications = metadata.Publications(name_space);
    if (std::any_of(deployments.begin(), deployments.end(), [&](const DeploymentRow& row) { return row.deployment_id == id; }) ||
        std::any_of(publications.begin(), publications.end(),
                    [&](const PublicationRow& row) { return row.deployment_id == id; })) {
      return name_space;
    }
  }
  return std::nullopt;
}

std::optional<std::string> LastPublishedNamespace(Warehouse& warehouse, const std::vector<std::string>& namespaces) {
  DeploymentMetadata metadata(warehouse);
  std::optional<std::pair<std::string, std::string>> last;  // published_at, namespace
  for (const std::string& name_space : namespaces) {
    for (const PublicationRow& row : metadata.Publications(name_space)) {
      if (!last || row.published_at > last->first) last = {row.published_at, name_space};
    }
  }
  if (!last) return std::nullopt;
  return last->second;
}

std::string PublishJson(const PublishOutcome& outcome) {
  nlohmann::json bindings = nlohmann::json::array();
  for (const ViewBinding& binding : outcome.bindings) {
    bindings.push_back({{"logical", binding.logical}, {"physical", binding.physical}});
  }
  nlohmann::json out{{"operation", outcome.operation},
                     {"publication_id", outcome.publication_id},
                     {"deployment_id", outcome.deployment_id},
                     {"previous_deployment_id", outcome.previous_deployment_id},
                     {"bindings", bindings},
                     {"removed", outcome.removed},
                     {"already_live", outcome.already_live}};
  if (outcome.readiness) out["readiness"] = ReadinessName(outcome.readiness->verdict);
  return out.dump(2) + "\n";
}

}  // namespace sluice
