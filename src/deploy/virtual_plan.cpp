#include "deploy/virtual_plan.hpp"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "core/sha256.hpp"
#include "core/virtual_names.hpp"
#include "deploy/desired_objects.hpp"
#include "engine/selection.hpp"
#include "sql/dialect.hpp"

namespace sluice {

namespace {

using nlohmann::json;

const SqlCompute* SqlOf(const Asset& asset) { return std::get_if<SqlCompute>(&asset.compute); }

// "YYYY-MM-DD" or "YYYY-MM-DDTHH:MM:SS[.fff][Z]" → "YYYY-MM-DD HH:MM:SS"; nullopt for anything else.
std::optional<std::string> StartTimeLiteral(const std::string& text) {
  static const std::regex kDate(R"(^(\d{4}-\d{2}-\d{2})$)");
  static const std::regex kDateTime(R"(^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d{1,9})?Z?$)");
  std::smatch match;
  if (std::regex_match(text, match, kDate)) return match[1].str() + " 00:00:00";
  if (std::regex_match(text, match, kDateTime)) return match[1].str() + " " + match[2].str();
  return std::nullopt;
}

std::vector<ColumnSpec> DesiredColumns(const SqlCompute& model) {
  std::vector<ColumnSpec> columns;
  for (const ModelColumn& column : model.columns) {
    columns.push_back({std::string(column.name), NormalizeTypeSpelling(std::string(column.type))});
  }
  return columns;
}

json ColumnsJson(const std::vector<ColumnSpec>& columns) {
  json out = json::array();
  for (const ColumnSpec& column : columns) out.push_back({column.name, column.type});
  return out;
}

std::vector<ColumnSpec> ColumnsFromJson(const std::string& text) {
  std::vector<ColumnSpec> columns;
  json parsed = json::parse(text, nullptr, false);
  if (!parsed.is_array()) return columns;
  for (const json& pair : parsed) {
    if (pair.is_array() && pair.size() == 2 && pair[0].is_string() && pair[1].is_string()) {
      columns.push_back({pair[0].get<std::string>(), pair[1].get<std::string>()});
    }
  }
  return columns;
}

std::string Qualified(const std::string& ns, const std::string& name) { return ns + "." + name; }

// ObjectFingerprint of a model whose canonical query is already rendered.
std::string SpecFingerprint(const SqlCompute& compute, const std::string& canonical_query);

class VirtualPlanner {
 public:
  VirtualPlanner(const Definitions& definitions, const VirtualActualState& actual, const Capabilities& capabilities,
                 const VirtualPlanOptions& options, const Clock& clock)
      : definitions_(definitions), actual_(actual), capabilities_(capabilities), options_(options), clock_(clock) {}

  VirtualPlan Plan() {
    CheckOptions();
    plan_.adapter = definitions_.project().adapter;
    plan_.selection = options_.selection;
    plan_.deployment_id = options_.deployment_id ? *options_.deployment_id : NewDeploymentId(clock_);
    ResolveScope();
    IndexActual();
    for (const AssetKey& key : scope_) plan_.objects.push_back(Desired(*definitions_.Find(key)));
    PropagateRebuilds();
    CheckUpstreams();
    BuildPhysicalDefinitions();
    PlanSteps();
    plan_.fingerprint = Fingerprint();
    return std::move(plan_);
  }

 private:
  void CheckOptions() {
    if (options_.deployment_id && !IsDeploymentId(*options_.deployment_id)) {
      throw Error(Diagnostic{"SLU-DEPLOY-023",
                             "'" + *options_.deployment_id + "' is not a deployment id",
                             {},
                             "deployment ids look like 20260801T000000Z_a1b2c3 (UTC time, then letters or digits)",
                             {}});
    }
    if (options_.full_refresh && options_.start_time) {
      throw Error(Diagnostic{"SLU-DEPLOY-021",
                             "--full-refresh and --start-time cannot be used together",
                             {},
                             "--full-refresh replays everything; --start-time keeps the history before that time",
                             {}});
    }
    if ((options_.full_refresh || options_.start_time) && options_.selection.empty()) {
      throw Error(Diagnostic{"SLU-DEPLOY-021",
                             std::string(options_.full_refresh ? "--full-refresh" : "--start-time") +
                                 " needs --select: it forces the replay of the selected roots only",
                             {},
                             "add --select with the pipelines or models to replay",
                             {}});
    }
    if (options_.start_time) {
      start_literal_ = StartTimeLiteral(*options_.start_time);
      if (!start_literal_) {
        throw Error(Diagnostic{"SLU-DEPLOY-021",
                               "--start-time '" + *options_.start_time + "' is not a time",
                               {},
                               "use YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS[.fff][Z] (UTC)",
                               {}});
      }
    }
  }

  void ResolveScope() {
    std::vector<AssetKey> selected;
    if (!options_.selection.empty()) {
      selected = ResolveSelection(definitions_, options_.selection);
      selected_.insert(selected.begin(), selected.end());
    }
    std::set<AssetKey> in_scope;
    const std::vector<AssetKey> closure =
        options_.selection.empty() ? definitions_.TopologicalOrder() : definitions_.DownstreamClosure(selected);
    for (const AssetKey& key : closure) {
      if (IsVirtualModel(definitions_, *definitions_.Find(key))) in_scope.insert(key);
    }
    for (const AssetKey& key : definitions_.TopologicalOrder()) {
      if (in_scope.count(key) > 0) scope_.push_back(key);
    }
    if (scope_.empty()) {
      throw Error(Diagnostic{"SLU-DEPLOY-020",
                             options_.selection.empty() ? "the project has no virtual pipeline"
                                                        : "the selection holds no model of a virtual pipeline",
                             {},
                             "staged deployments deploy pipelines whose pipeline.toml sets mode = \"virtual\" "
                             "(or [defaults] pipeline_mode = \"virtual\"); direct pipelines deploy with `build`",
                             {}});
    }
    std::set<std::string> namespaces;
    for (const AssetKey& key : scope_) namespaces.insert(key.name_space());
    if (namespaces.size() > 1) {
      std::string list;
      for (const std::string& ns : namespaces) list += (list.empty() ? "" : ", ") + ns;
      throw Error(Diagnostic{"SLU-DEPLOY-025",
                             "the selected virtual models live in several databases (" + list + ")",
                             {},
                             "deploy one database's pipelines at a time with --select",
                             {}});
    }
    plan_.name_space = *namespaces.begin();
  }

  void IndexActual() {
    for (const TableInfo& relation : actual_.relations) {
      if (relation.relation.name_space == plan_.name_space) relations_[relation.relation.name] = &relation;
    }
    for (const LiveBinding& binding : actual_.bindings) bindings_[binding.logical] = &binding;
    // Later rows win: a reconcile row recorded after a deployment's replaces what it says of the same object.
    for (const ObjectRow& row : actual_.objects) recorded_[row.physical] = &row;
  }

  std::optional<std::string> BoundPhysical(const std::string& logical) const {
    auto binding = bindings_.find(logical);
    if (binding == bindings_.end() || !binding->second->deployment_id) return std::nullopt;
    return binding->second->physical;
  }

  VirtualObject Desired(const Asset& model) {
    const SqlCompute& compute = *SqlOf(model);
    VirtualObject object;
    object.model = model.key;
    object.logical = model.relation_name;
    object.object_type = compute.kind == ModelKind::kView ? "view" : "table";
    object.columns = DesiredColumns(compute);
    object.canonical_query = CanonicalSql(definitions_, model);
    object.fingerprint = SpecFingerprint(compute, object.canonical_query);
    object.active_physical = BoundPhysical(object.logical);
    const bool forced = (options_.full_refresh || options_.start_time) && selected_.count(model.key) > 0;
    if (!object.active_physical) {
      object.action = ObjectAction::kCreate;
      object.reason =
          bindings_.count(object.logical) > 0 ? "the logical view reads no deployment's object" : "not deployed yet";
      return object;
    }
    object.action = ObjectAction::kRebuild;
    auto recorded = recorded_.find(*object.active_physical);
    if (relations_.count(*object.active_physical) == 0) {
      object.reason = "the bound object " + *object.active_physical + " is missing";
    } else if (recorded == recorded_.end()) {
      object.reason = "nothing is recorded for the bound object " + *object.active_physical;
    } else {
      if (object.object_type == "table") {
        object.column_diff = DiffColumns(ColumnsFromJson(recorded->second->columns_json), object.columns);
      }
      if (recorded->second->fingerprint != object.fingerprint) {
        object.reason = object.column_diff.impact ? "columns changed" : "query or storage changed";
      } else if (forced) {
        object.reason = options_.full_refresh ? "--full-refresh" : "--start-time";
      } else {
        object.action = ObjectAction::kNoOp;
        object.reason = "unchanged";
        object.physical = *object.active_physical;
      }
    }
    return object;
  }

  // A model reading a created or rebuilt one is rebuilt too (into the same deployment).
  void PropagateRebuilds() {
    std::map<AssetKey, size_t> index;
    for (size_t i = 0; i < plan_.objects.size(); ++i) index[plan_.objects[i].model] = i;
    for (VirtualObject& object : plan_.objects) {
      if (object.action == ObjectAction::kNoOp) {
        for (const AssetDependency& dep : definitions_.Find(object.model)->deps) {
          auto upstream = index.find(dep.upstream);
          if (upstream == index.end() || plan_.objects[upstream->second].action == ObjectAction::kNoOp) continue;
          object.action = ObjectAction::kRebuild;
          object.reason = "upstream " + dep.upstream.name() + " is rebuilt";
          object.physical.clear();
          break;
        }
      }
      if (object.action != ObjectAction::kNoOp) {
        object.physical = PhysicalName(object.logical, plan_.deployment_id);
        rebuilt_.insert(object.model);
        rebuilt_order_.push_back(object.model);
      }
    }
  }

  // Every model a rebuilt one reads must be rebuilt with it or readable now.
  void CheckUpstreams() {
    for (const AssetKey& key : rebuilt_order_) {
      const Asset& model = *definitions_.Find(key);
      for (const AssetDependency& dep : model.deps) {
        const Asset& upstream = *definitions_.Find(dep.upstream);
        if (dep.edge == EdgeType::kMutableReference) {
          plan_.warnings.push_back("mutable_ref_replay_not_guaranteed: model '" + model.name() + "' reads '" +
                                   upstream.name() +
                                   "' as a mutable reference; its replay sees that relation as it is now");
        }
        if (rebuilt_.count(dep.upstream) > 0 || !IsVirtualModel(definitions_, upstream)) continue;
        if (BoundPhysical(upstream.relation_name)) continue;
        throw Error(Diagnostic{"SLU-DEPLOY-022",
                               "model '" + model.name() + "' reads '" + upstream.name() + "' of pipeline '" +
                                   upstream.pipeline + "', which has no published deployment",
                               model.defined_at,
                               "add pipeline:" + upstream.pipeline + " to --select",
                               {}});
      }
    }
  }

  void BuildPhysicalDefinitions() {
    Definitions::Parts parts;
    parts.project = definitions_.project();
    for (const Asset& asset : definitions_.assets()) {
      Asset copy = asset;
      if (rebuilt_.count(asset.key) > 0) {
        copy.relation_name = PhysicalName(asset.relation_name, plan_.deployment_id);
      } else if (IsVirtualModel(definitions_, asset)) {
        if (std::optional<std::string> bound = BoundPhysical(asset.relation_name)) copy.relation_name = *bound;
      }
      parts.assets.push_back(std::move(copy));
    }
    for (const Pipeline& pipeline : definitions_.pipelines()) {
      Pipeline copy = pipeline;
      copy.virtual_mode = false;
      parts.pipelines.push_back(std::move(copy));
    }
    parts.audits = definitions_.audits();
    parts.tests = definitions_.tests();
    parts.macros = definitions_.macros();
    plan_.physical = std::make_shared<const Definitions>(std::move(parts));
  }

  void PlanSteps() {
    ScopedPlanOptions scoped;
    scoped.rendering = RunRendering{options_.warehouse, clock_.TodayUtc()};
    for (const Asset& asset : plan_.physical->assets()) {
      if (rebuilt_.count(asset.key) > 0 || SqlOf(asset) == nullptr) continue;
      auto views = actual_.materialized_views.find(Qualified(asset.key.name_space(), asset.relation_name));
      if (views != actual_.materialized_views.end()) scoped.upstream_feeds[asset.key] = views->second;
    }
    plan_.steps = PlanScope(*plan_.physical, rebuilt_order_, capabilities_, scoped);
    plan_.steps.selection = options_.selection;
    std::map<AssetKey, VirtualObject*> objects;
    for (VirtualObject& object : plan_.objects) objects[object.model] = &object;
    std::set<std::string> modes;
    if (plan_.adapter == "clickhouse") {
      for (PlanStep& step : plan_.steps.steps) {
        if (!step.replay) continue;
        VirtualRoot root = Root(*objects[step.replay->root], *step.replay);
        if (root.mode != "snapshot") modes.insert(root.mode);  // a snapshot is bounded by nothing: any mode agrees
        if (auto rows = actual_.table_rows.find(root.anchor); rows != actual_.table_rows.end() && rows->second == 0) {
          plan_.warnings.push_back("empty_replay_source: the anchor " + root.anchor + " of " + root.logical +
                                   " has no rows; the replay inserts nothing");
        }
        plan_.roots.push_back(std::move(root));
      }
    } else {
      for (const AssetKey& key : rebuilt_order_) {
        const Asset& model = *definitions_.Find(key);
        const AssetDependency* driving = DrivingInput(model);
        if (SqlOf(model)->kind != ModelKind::kTable || driving == nullptr || rebuilt_.count(driving->upstream) > 0) {
          continue;
        }
        VirtualRoot root;
        root.root = key;
        root.logical = model.relation_name;
        const Asset& anchor = *plan_.physical->Find(driving->upstream);
        root.anchor = UpstreamRelation(anchor, true);
        root.mode = "snapshot";
        root.reason = "DuckDB replays each rebuilt table in full from its upstreams";
        root.affected = definitions_.DownstreamClosure({key});
        std::erase_if(root.affected, [&](const AssetKey& k) { return rebuilt_.count(k) == 0; });
        plan_.roots.push_back(std::move(root));
      }
    }
    if (modes.size() > 1) {
      std::string list;
      for (const std::string& mode : modes) list += (list.empty() ? "" : ", ") + mode;
      throw Error(Diagnostic{"SLU-DEPLOY-024",
                             "the selected pipelines replay in different lineage modes (" + list + ")",
                             {},
                             "deploy pipelines of one lineage mode at a time with --select",
                             {}});
    }
    plan_.lineage_mode = !modes.empty()                        ? *modes.begin()
                         : plan_.adapter == "clickhouse" && !plan_.roots.empty() ? "snapshot"
                                                                                 : "offsets";
  }

  VirtualRoot Root(const VirtualObject& object, ReplaySpec& spec) {
    const Asset& model = *definitions_.Find(object.model);
    VirtualRoot root;
    root.root = object.model;
    root.logical = object.logical;
    root.anchor =
        spec.driving_table.empty() ? spec.driving.ToString() : Qualified(spec.driving_namespace, spec.driving_table);
    root.mode = spec.mode;
    root.affected = spec.subtree;
    const std::vector<std::string> lineage = LineageColumns(spec.mode);
    bool supported = object.active_physical.has_value() && !lineage.empty();
    if (supported) {
      auto active = relations_.find(*object.active_physical);
      supported = active != relations_.end();
      for (const std::string& column : lineage) {
        if (!supported) break;
        supported = std::any_of(active->second->columns.begin(), active->second->columns.end(),
                                [&](const ColumnInfo& c) { return c.name == column; }) &&
                    std::any_of(object.columns.begin(), object.columns.end(),
                                [&](const ColumnSpec& c) { return c.name == column; });
      }
    }
    root.history_preserving_bounded_supported = supported;

    std::optional<int64_t> lookback;
    bool seeded = false;
    bool bounded = false;
    if (spec.driving_table.empty()) {
      root.reason = "driven by a Postgres source: no history to replay";
    } else if (lineage.empty()) {
      root.reason = "its anchor has no lineage columns: full replay";
    } else if (!object.active_physical) {
      if (start_literal_) {
        bounded = true;
        root.lower_time = start_literal_;
        root.reason = "--start-time without an active table: unseeded from that time";
      } else {
        root.reason = "no active table: full replay";
      }
    } else if (options_.full_refresh && selected_.count(object.model) > 0) {
      root.reason = "--full-refresh";
    } else if (start_literal_ && selected_.count(object.model) > 0) {
      bounded = seeded = true;
      root.lower_time = start_literal_;
      root.reason = "--start-time: seeded from the active table before that time";
    } else {
      const ColumnDiff& diff = object.column_diff;
      const bool non_breaking = diff.impact == ChangeImpact::kNonBreaking;
      const Pipeline* pipeline = definitions_.FindPipeline(model.pipeline);
      std::optional<ReplayRule> rule;
      if (pipeline != nullptr && pipeline->replay_on_change) {
        rule = non_breaking ? pipeline->replay_on_change->non_breaking : pipeline->replay_on_change->breaking;
      }
      const std::string kind = non_breaking ? "non_breaking" : "breaking";
      if (!rule) {
        if (non_breaking && diff.seedability == Seedability::kSeedable) {
          bounded = seeded = true;
          root.lower_at_active_frontier = true;
          root.reason = "default for an add-only change: seeded from the active table up to its frontier";
        } else {
          root.reason = "default for a " + kind + " change: full replay";
        }
      } else if (!rule->bounded) {
        root.reason = "replay_on_change." + kind + " = full";
      } else {
        bounded = true;
        seeded = diff.seedability == Seedability::kSeedable;
        lookback = rule->lookback_seconds;
        root.reason = "replay_on_change." + kind + " = bounded: " + (seeded ? "seeded" : "unseeded") +
                      " from boundary time minus " + std::to_string(rule->lookback_seconds) + "s";
      }
    }
    if (bounded && seeded && !supported) {
      const Pipeline* pipeline = definitions_.FindPipeline(model.pipeline);
      const bool without_history = pipeline != nullptr &&
                                   pipeline->bounded_replay_fallback == BoundedReplayFallback::kBoundedWithoutHistory &&
                                   !root.lower_at_active_frontier;
      root.resolved_bounded_replay_fallback = without_history ? "bounded_without_history" : "full";
      root.reason += "; the active table lacks the " + spec.mode +
                     " lineage columns, so bounded_replay_fallback = " + root.resolved_bounded_replay_fallback;
      if (without_history) {
        seeded = false;
      } else {
        bounded = false;
        root.requested_start_time = root.lower_time;
        root.lower_time.reset();
        root.lower_at_active_frontier = false;
        lookback.reset();
      }
    }
    root.execution = !bounded ? ReplayExecution::kFull
                     : seeded ? ReplayExecution::kSeededBounded
                              : ReplayExecution::kUnseededBounded;
    if (bounded) {
      BoundedReplay replay;
      replay.seeded = seeded;
      replay.at_active_frontier = root.lower_at_active_frontier;
      replay.lower_time = root.lower_time.value_or("");
      replay.lookback_seconds = lookback;
      if (object.active_physical) replay.active_table = Qualified(plan_.name_space, *object.active_physical);
      if (seeded) {
        if (object.column_diff.impact) {
          replay.seed_columns = object.column_diff.shared;
        } else {
          for (const ColumnSpec& column : object.columns) replay.seed_columns.push_back(column.name);
        }
      }
      spec.bounded = std::move(replay);
    }
    return root;
  }

  std::string Fingerprint() const {
    std::string text = VirtualPlanJson(plan_);
    for (size_t at = text.find(plan_.deployment_id); at != std::string::npos;
         at = text.find(plan_.deployment_id, at + 1)) {
      text.replace(at, plan_.deployment_id.size(), "<deployment>");
    }
    return Sha256Hex(text);
  }

  const Definitions& definitions_;
  const VirtualActualState& actual_;
  const Capabilities& capabilities_;
  const VirtualPlanOptions& options_;
  const Clock& clock_;
  VirtualPlan plan_;
  std::optional<std::string> start_literal_;
  std::set<AssetKey> selected_;
  std::vector<AssetKey> scope_;
  std::map<std::string, const TableInfo*> relations_;   // of the namespace, by name
  std::map<std::string, const LiveBinding*> bindings_;  // by logical name
  std::map<std::string, const ObjectRow*> recorded_;    // by physical name
  std::set<AssetKey> rebuilt_;
  std::vector<AssetKey> rebuilt_order_;
};

}  // namespace

bool IsVirtualModel(const Definitions& definitions, const Asset& asset) {
  if (SqlOf(asset) == nullptr) return false;
  const Pipeline* pipeline = definitions.FindPipeline(asset.pipeline);
  return pipeline != nullptr && pipeline->virtual_mode;
}

std::string ObjectActionName(ObjectAction action) {
  switch (action) {
    case ObjectAction::kCreate:
      return "create";
    case ObjectAction::kRebuild:
      return "rebuild";
    case ObjectAction::kNoOp:
      return "no_op";
  }
  return "create";
}

std::string ReplayExecutionName(ReplayExecution execution) {
  switch (execution) {
    case ReplayExecution::kFull:
      return "full_rebuild";
    case ReplayExecution::kSeededBounded:
      return "seeded_bounded_rebuild";
    case ReplayExecution::kUnseededBounded:
      return "unseeded_bounded_rebuild";
  }
  return "full_rebuild";
}

bool VirtualPlan::Empty() const {
  return std::all_of(objects.begin(), objects.end(),
                     [](const VirtualObject& object) { return object.action == ObjectAction::kNoOp; });
}

VirtualActualState ReadVirtualActualState(Warehouse& warehouse, const std::string& name_space) {
  VirtualActualState state;
  state.relations = warehouse.ListRelations();
  DeploymentMetadata metadata(warehouse);
  const std::vector<CatalogEntry> catalog = warehouse.CatalogOf(name_space);  // one read: views and materialized views
  state.bindings = BindingsIn(catalog, name_space);
  for (const CatalogEntry& entry : catalog) {
    if (entry.kind == RelationKind::kMaterializedView && entry.target) {
      state.materialized_views[entry.target->ToString()].push_back(entry.relation.ToString());
    }
  }
  if (std::optional<std::map<std::string, int64_t>> counts = warehouse.CatalogRowCounts(name_space)) {
    for (const TableInfo& relation : state.relations) {
      if (!relation.is_view && relation.relation.name_space == name_space) {
        state.table_rows[relation.relation.ToString()] = 0;  // a table the count lacks is empty
      }
    }
    for (const auto& [table, rows] : *counts) state.table_rows[Relation{name_space, table}.ToString()] = rows;
  }
  state.objects = metadata.Objects(name_space);
  state.deployments = metadata.Deployments(name_space);
  return state;
}

VirtualPlan PlanVirtual(const Definitions& definitions, const VirtualActualState& actual,
                        const Capabilities& capabilities, const VirtualPlanOptions& options, const Clock& clock) {
  return VirtualPlanner(definitions, actual, capabilities, options, clock).Plan();
}

std::string ColumnsRecord(const std::vector<ColumnSpec>& columns) { return ColumnsJson(columns).dump(); }

std::string ObjectFingerprint(const Definitions& definitions, const Asset& model) {
  return SpecFingerprint(*SqlOf(model), CanonicalSql(definitions, model));
}

namespace {

std::string SpecFingerprint(const SqlCompute& compute, const std::string& canonical_query) {
  json spec{{"kind", compute.kind == ModelKind::kView ? "view" : "table"},
            {"columns", ColumnsJson(DesiredColumns(compute))},
            {"query", canonical_query}};
  if (compute.kind == ModelKind::kTable) {
    spec["engine"] = compute.storage.engine;
    spec["order_by"] = compute.storage.order_by;
    spec["partition_by"] = compute.storage.partition_by ? json(*compute.storage.partition_by) : json();
    spec["ttl"] = compute.storage.ttl ? json(*compute.storage.ttl) : json();
    json settings = json::array();
    for (const auto& [name, value] : compute.storage.settings) settings.push_back({name, value});
    spec["settings"] = settings;
  }
  return Sha256Hex(spec.dump());
}

}  // namespace

std::vector<std::string> VirtualNamespaces(const Definitions& definitions) {
  std::set<std::string> namespaces;
  for (const Asset& asset : definitions.assets()) {
    if (IsVirtualModel(definitions, asset)) namespaces.insert(asset.key.name_space());
  }
  return {namespaces.begin(), namespaces.end()};
}

std::optional<std::string> VirtualNamespaceOf(const Definitions& definitions,
                                              const std::vector<std::string>& selection) {
  const std::vector<AssetKey> keys = selection.empty()
                                         ? definitions.TopologicalOrder()
                                         : definitions.DownstreamClosure(ResolveSelection(definitions, selection));
  for (const AssetKey& key : keys) {
    if (IsVirtualModel(definitions, *definitions.Find(key))) return key.name_space();
  }
  return std::nullopt;
}

std::string VirtualPlanJson(const VirtualPlan& plan) {
  json objects = json::array();
  for (const VirtualObject& object : plan.objects) {
    json item{{"model", object.model.name()},
              {"logical", object.logical},
              {"type", object.object_type},
              {"action", ObjectActionName(object.action)},
              {"reason", object.reason},
              {"active_physical", object.active_physical ? json(*object.active_physical) : json()},
              {"physical", object.physical},
              {"fingerprint", object.fingerprint}};
    const ColumnDiff& diff = object.column_diff;
    if (diff.impact) {
      json retyped = json::array();
      for (const TypeChange& change : diff.retyped)
        retyped.push_back({{"name", change.name}, {"from", change.from}, {"to", change.to}});
      item["column_diff"] = {{"added", diff.added},
                             {"removed", diff.removed},
                             {"retyped", retyped},
                             {"impact", ChangeImpactName(*diff.impact)},
                             {"seedability", SeedabilityName(*diff.seedability)}};
    } else {
      item["column_diff"] = nullptr;
    }
    objects.push_back(std::move(item));
  }
  json roots = json::array();
  for (const VirtualRoot& root : plan.roots) {
    json affected = json::array();
    for (const AssetKey& key : root.affected) affected.push_back(key.name());
    roots.push_back(
        {{"root", root.root.name()},
         {"logical", root.logical},
         {"anchor", root.anchor},
         {"mode", root.mode},
         {"execution", ReplayExecutionName(root.execution)},
         {"reason", root.reason},
         {"history_preserving_bounded_supported", root.history_preserving_bounded_supported},
         {"resolved_bounded_replay_fallback",
          root.resolved_bounded_replay_fallback.empty() ? json() : json(root.resolved_bounded_replay_fallback)},
         {"requested_start_time", root.requested_start_time ? json(*root.requested_start_time) : json()},
         {"lower_time", root.lower_time ? json(*root.lower_time) : json()},
         {"lower_at_active_frontier", root.lower_at_active_frontier},
         {"affected", affected}});
  }
  json steps = json::array();
  for (const PlanStep& step : plan.steps.steps) {
    steps.push_back(
        {{"name", step.name}, {"phase", DeployPhaseName(step.phase)}, {"statements", step.statements.size()}});
  }
  json out{{"mode", "virtual"},
           {"deployment_id", plan.deployment_id},
           {"adapter", plan.adapter},
           {"database", plan.name_space},
           {"selection", plan.selection},
           {"lineage_mode", plan.lineage_mode},
           {"objects", objects},
           {"roots", roots},
           {"steps", steps},
           {"warnings", plan.warnings}};
  // What a later `backfill` matches to use this plan's id (absent while the fingerprint itself is computed).
  if (!plan.fingerprint.empty()) out["fingerprint"] = plan.fingerprint;
  return out.dump(2) + "\n";
}

std::string VirtualPlanText(const VirtualPlan& plan) {
  size_t create = 0, rebuild = 0, no_op = 0;
  for (const VirtualObject& object : plan.objects) {
    (object.action == ObjectAction::kCreate ? create : object.action == ObjectAction::kRebuild ? rebuild : no_op)++;
  }
  std::string text = "virtual deployment " + plan.deployment_id + " of " + plan.name_space + ": " +
                     std::to_string(plan.objects.size()) + " object(s): " + std::to_string(create) + " create, " +
                     std::to_string(rebuild) + " rebuild, " + std::to_string(no_op) + " no_op\n";
  for (const VirtualObject& object : plan.objects) {
    std::string line = "  " + ObjectActionName(object.action);
    line.resize(11, ' ');
    line += object.logical;
    if (object.action == ObjectAction::kNoOp) {
      line += " (kept: " + object.physical + ")";
    } else {
      line += " -> " + object.physical + "  (" + object.reason;
      if (object.column_diff.impact) {
        const ColumnDiff& diff = object.column_diff;
        line += "; ";
        for (const std::string& c : diff.added) line += "+" + c + " ";
        for (const std::string& c : diff.removed) line += "-" + c + " ";
        for (const TypeChange& c : diff.retyped) line += "~" + c.name + " ";
        line += ChangeImpactName(*diff.impact) + ", " + SeedabilityName(*diff.seedability);
      }
      line += ")";
    }
    text += line + "\n";
  }
  if (!plan.roots.empty()) text += "replay roots:\n";
  for (const VirtualRoot& root : plan.roots) {
    text += "  " + root.logical + " from " + root.anchor + " (" + root.mode +
            "): " + ReplayExecutionName(root.execution) + " — " + root.reason + "\n";
  }
  for (const std::string& warning : plan.warnings) text += "warning: " + warning + "\n";
  if (plan.Empty()) text += "nothing to deploy: every object is unchanged\n";
  return text;
}

}  // namespace sluice
