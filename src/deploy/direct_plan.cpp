#include "deploy/direct_plan.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "deploy/desired_objects.hpp"
#include "engine/run_plan.hpp"
#include "engine/run_sql.hpp"
#include "engine/selection.hpp"
#include "sql/clickhouse_ddl.hpp"
#include "sql/dialect.hpp"

namespace sluice {

namespace {

std::string ChName(std::string_view name) { return sql::QuoteIdentifier(sql::Dialect::kClickHouse, name); }
std::string ChQualified(std::string_view db, std::string_view name) {
  return sql::QualifiedName(sql::Dialect::kClickHouse, db, name);
}

PlanStatement Same(std::string sql) { return {sql, sql}; }

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The lineage mode of what a model is ultimately driven by: its source's replay mode (snapshot for a seed).
std::string LineageMode(const Definitions& definitions, const Asset& upstream) {
  const Asset* at = &upstream;
  for (int guard = 0; guard < 100000 && at != nullptr; ++guard) {
    if (const auto* kafka = std::get_if<KafkaSource>(&at->compute)) return kafka->replay_mode;
    if (const auto* table = std::get_if<ExternalTable>(&at->compute)) return table->replay_mode;
    if (std::holds_alternative<SeedCompute>(at->compute)) return "snapshot";
    if (at->is_source()) return "offsets";
    const AssetDependency* driving = DrivingInput(*at);
    at = driving ? definitions.Find(driving->upstream) : nullptr;
  }
  return "offsets";
}

// How a replay from `driving` is bounded: its source's lineage mode when `driving` holds that mode's columns (a source
// does; a model when it outputs them), else snapshot.
std::string ReplayMode(const Definitions& definitions, const Asset& driving) {
  const std::string mode = LineageMode(definitions, driving);
  const auto* model = std::get_if<SqlCompute>(&driving.compute);
  if (model == nullptr) return mode;
  for (const std::string& column : LineageColumns(mode)) {
    if (std::none_of(model->columns.begin(), model->columns.end(),
                     [&](const ModelColumn& output) { return output.name == column; })) {
      return "snapshot";
    }
  }
  return mode;
}

// Where a build's realization check creates its objects: Sluice's own database, never a user's.
constexpr const char* kCheckNamespace = "_sluice";

class DirectPlanner {
 public:
  DirectPlanner(const Definitions& definitions, const Capabilities& capabilities, const RunRendering& rendering,
                const ScopedPlanOptions* scoped = nullptr)
      : definitions_(definitions), capabilities_(capabilities), rendering_(rendering), scoped_(scoped) {}

  DirectPlan PlanKeys(const std::vector<AssetKey>& scope) {
    plan_.adapter = definitions_.project().adapter;
    in_scope_.insert(scope.begin(), scope.end());
    CollectScope();
    if (plan_.adapter == "clickhouse") {
      PlanClickHouse();
    } else {
      PlanDuckDb();
    }
    return std::move(plan_);
  }

  DirectPlan Plan(const std::vector<std::string>& selection) {
    plan_.adapter = definitions_.project().adapter;
    plan_.selection = selection;
    if (plan_.adapter != "clickhouse" && plan_.adapter != "duckdb" && plan_.adapter != "postgres") {
      throw Error(Diagnostic{"SLU-DEPLOY-002", "`build` has no direct mode for the adapter '" + plan_.adapter + "'",
                             {}, "direct builds run on clickhouse, duckdb and postgres targets", {}});
    }
    ResolveScope(selection);
    if (plan_.adapter == "clickhouse") {
      PlanClickHouse();
    } else {
      PlanDuckDb();
    }
    PlanAudits();
    return std::move(plan_);
  }

 private:
  void ResolveScope(const std::vector<std::string>& selection) {
    std::vector<AssetKey> selected = ResolveSelection(definitions_, selection);
    for (const AssetKey& key : definitions_.DownstreamClosure(selected)) {
      const Asset* asset = definitions_.Find(key);
      if (asset == nullptr || asset->is_source()) continue;
      const Pipeline* pipeline = definitions_.FindPipeline(asset->pipeline);
      if (pipeline != nullptr && pipeline->virtual_mode) {
        if (selection.empty()) continue;  // everything: the direct pipelines' part of it
        throw Error(Diagnostic{"SLU-DEPLOY-001",
                               "model '" + asset->name() + "' belongs to the virtual pipeline '" + pipeline->name +
                                   "', which is deployed in stages, not by a direct build",
                               asset->defined_at,
                               "deploy it with `sluice backfill` then `sluice publish`, or set mode = \"direct\" in its "
                               "pipeline.toml",
                               {}});
      }
      in_scope_.insert(key);
    }
    CollectScope();
  }

  void CollectScope() {
    std::set<AssetKey> sources;
    std::map<std::string, PipelineScope> pipelines;
    for (const AssetKey& key : definitions_.TopologicalOrder()) {
      if (!InScope(key)) continue;
      plan_.scope.push_back(key);
      const Asset& asset = *definitions_.Find(key);
      for (const AssetDependency& dep : asset.deps) {
        if (definitions_.Find(dep.upstream)->is_source()) sources.insert(dep.upstream);
      }
      PipelineScope& scope = pipelines[asset.pipeline];
      scope.name = asset.pipeline;
      scope.models.push_back(asset.name());
    }
    plan_.sources.assign(sources.begin(), sources.end());
    for (auto& [name, scope] : pipelines) {
      std::sort(scope.models.begin(), scope.models.end());
      if (const Pipeline* pipeline = definitions_.FindPipeline(name)) {
        scope.confirmation = pipeline->confirmation;
        scope.protection_warning = pipeline->protection_warning;
      }
      plan_.pipelines.push_back(std::move(scope));
    }
  }

  bool InScope(const AssetKey& key) const { return in_scope_.count(key) > 0; }

  const SqlCompute& Model(const AssetKey& key) const { return std::get<SqlCompute>(definitions_.Find(key)->compute); }

  PlanStep& Add(DeployPhase phase, std::string name, std::optional<AssetKey> asset,
               std::vector<PlanStatement> statements) {
    PlanStep step;
    step.phase = phase;
    step.name = std::move(name);
    step.asset = std::move(asset);
    step.statements = std::move(statements);
    plan_.steps.push_back(std::move(step));
    return plan_.steps.back();
  }

  std::string Drop(const std::string& db, const std::string& name) const {
    return "DROP TABLE IF EXISTS " + ChQualified(db, name) + (capabilities_.drop_sync ? " SYNC" : "");
  }

  // A replay root: a table in scope whose driving input is not in scope (a source or a preserved model).
  std::optional<AssetKey> DrivingOutsideScope(const Asset& model) const {
    if (Model(model.key).kind != ModelKind::kTable) return std::nullopt;
    const AssetDependency* driving = DrivingInput(model);
    if (driving == nullptr || InScope(driving->upstream)) return std::nullopt;
    return driving->upstream;
  }

  void PlanClickHouse() {
    std::set<std::string> databases;
    for (const AssetKey& key : plan_.scope) databases.insert(key.name_space());
    for (const AssetKey& key : plan_.sources) databases.insert(key.name_space());
    for (const std::string& db : databases) {
      Add(DeployPhase::kPrepare, "create_database_" + db, std::nullopt,
          {Same("CREATE DATABASE IF NOT EXISTS " + ChName(db))})
          .name_space = db;
    }
    for (const AssetKey& key : plan_.sources) {
      const Asset& source = *definitions_.Find(key);
      if (std::holds_alternative<SeedCompute>(source.compute)) {
        Add(DeployPhase::kPrepare, "load_seed_" + source.name(), key, {}).seed = key;
        continue;
      }
      std::vector<CompiledResource> kept =
          SourceResources(definitions_, source, sql::SecretHandling::kKeep, sql::CreateMode::kCreateIfNotExists);
      std::vector<CompiledResource> shown =
          SourceResources(definitions_, source, sql::SecretHandling::kRedact, sql::CreateMode::kCreateIfNotExists);
      for (size_t i = 0; i < kept.size(); ++i) {
        PlanStatement statement{Trimmed(kept[i].sql), Trimmed(shown[i].sql)};
        Add(DeployPhase::kPrepare, "create_source_" + kept[i].name, key, {statement});
      }
    }
    // A build on a server (not a compile's workflow, not a deployment's shadow objects) proves first that the server
    // takes every object it is about to create.
    if (scoped_ == nullptr && rendering_.warehouse != nullptr && !plan_.scope.empty()) PlanRealizationCheck();
    PlanViews();
    for (auto it = plan_.scope.rbegin(); it != plan_.scope.rend(); ++it) {
      const Asset& model = *definitions_.Find(*it);
      std::vector<PlanStatement> drops;
      for (const ModelView& view : views_[*it]) drops.push_back(Same(Drop(it->name_space(), view.name)));
      drops.push_back(Same(Drop(it->name_space(), model.relation_name)));
      Add(DeployPhase::kTeardown, "drop_" + model.relation_name, *it, std::move(drops));
    }
    std::vector<AssetKey> roots;
    for (const AssetKey& key : plan_.scope) {
      const Asset& model = *definitions_.Find(key);
      std::vector<CompiledResource> kept = ModelResources(definitions_, model, sql::SecretHandling::kKeep);
      std::vector<CompiledResource> shown = ModelResources(definitions_, model, sql::SecretHandling::kRedact);
      const bool root = DrivingOutsideScope(model).has_value();
      if (root) roots.push_back(key);
      std::vector<PlanStatement> statements;
      for (size_t i = 0; i < kept.size(); ++i) {
        if (kept[i].kind == "materialized_view") continue;  // below, or by the replay step for a root
        statements.push_back({Trimmed(kept[i].sql), Trimmed(shown[i].sql)});
      }
      // Where views do not cascade, the views below a root read its view, created by its replay step: theirs are too.
      if (!root && capabilities_.materialized_view_cascade) {
        for (const ModelView& view : views_[key]) statements.push_back(Same(view.sql));
      }
      Add(DeployPhase::kRealization,
          std::string(Model(key).kind == ModelKind::kView ? "create_view_" : "create_table_") + model.relation_name,
          key, std::move(statements));
    }
    for (const AssetKey& key : roots) PlanReplay(*definitions_.Find(key));
  }

  // The scope's tables, views and materialized views created first under other names in `_sluice` (ClickHouse checks
  // a view's query and a table's keys when it creates them) and dropped again: what a build cannot create is found
  // before its teardown drops anything, located at the model (the executor places an unlocated error there). A step
  // per object of the check, with its model; leftovers of an interrupted check are dropped first; the last step
  // (`always`) drops the check's objects even after a failure.
  void PlanRealizationCheck() {
    std::map<AssetKey, AssetKey> renamed;  // model → its check object's key
    for (const AssetKey& key : plan_.scope) {
      renamed.emplace(key, AssetKey::Of(kCheckNamespace, "check__" + key.name_space() + "__" + key.name()));
    }
    Definitions::Parts parts;
    parts.project = definitions_.project();
    parts.pipelines = definitions_.pipelines();
    for (const Asset& asset : definitions_.assets()) {
      Asset copy = asset;
      if (auto check = renamed.find(asset.key); check != renamed.end()) {
        copy.key = check->second;
        copy.relation_name = "check__" + asset.key.name_space() + "__" + asset.relation_name;
      }
      for (AssetDependency& dep : copy.deps) {
        if (auto check = renamed.find(dep.upstream); check != renamed.end()) dep.upstream = check->second;
      }
      if (auto* sql = std::get_if<SqlCompute>(&copy.compute)) {
        for (ResolvedReference& reference : sql->references) {
          if (auto check = renamed.find(reference.upstream); check != renamed.end()) reference.upstream = check->second;
        }
      }
      parts.assets.push_back(std::move(copy));
    }
    const Definitions checked(std::move(parts));
    std::vector<AssetKey> scope;
    std::map<AssetKey, AssetKey> original;
    for (const auto& [key, check] : renamed) {
      original.emplace(check, key);
      scope.push_back(check);
    }
    const DirectPlan check = PlanScope(checked, scope, capabilities_, ScopedPlanOptions{});
    std::vector<PlanStatement> drops{Same("CREATE DATABASE IF NOT EXISTS " + ChName(kCheckNamespace))};
    for (const PlanStep& step : check.steps) {
      if (step.phase == DeployPhase::kTeardown) drops.insert(drops.end(), step.statements.begin(), step.statements.end());
    }
    Add(DeployPhase::kPrepare, "check_prepare", std::nullopt, drops);
    for (const PlanStep& step : check.steps) {
      if (step.phase != DeployPhase::kRealization && step.phase != DeployPhase::kReplay) continue;
      std::vector<PlanStatement> creates;
      for (const PlanStatement& statement : step.statements) {
        if (statement.sql.find(kReplayBoundaryPlaceholder) == std::string::npos) creates.push_back(statement);
      }
      if (creates.empty()) continue;
      const AssetKey& model = original.at(*step.asset);
      Add(DeployPhase::kPrepare,
          std::string(step.phase == DeployPhase::kReplay ? "check_views_" : "check_create_") +
              definitions_.Find(model)->relation_name,
          model, std::move(creates));
    }
    drops.erase(drops.begin());
    Add(DeployPhase::kPrepare, "check_cleanup", std::nullopt, std::move(drops)).always = true;
  }

  // The materialized views that fill each table in scope. Where views cascade (a view's writes into its table fire
  // the views reading that table), one per model: `mv__<model>` reading its driving relation. Where they do not
  // (ClickHouse 18.16), rows reach a table either by a direct INSERT (a root's replay) or through one of its views,
  // and only the views defined FROM that path fire: a model then gets one view per way rows reach its driving
  // model (the root's table and each of the driving model's views), `mv__<model>`, `mv__<model>__2`, …, and a root
  // driven by a Kafka source reads the source's landing view. Each row still fires exactly one view per model.
  void PlanViews() {
    for (const AssetKey& key : plan_.scope) {
      const Asset& model = *definitions_.Find(key);
      if (Model(key).kind != ModelKind::kTable) continue;
      const AssetDependency* driving = DrivingInput(model);
      std::vector<std::string> feeds;  // what the views read rows from, qualified
      if (driving != nullptr && !capabilities_.materialized_view_cascade) {
        const Asset& upstream = *definitions_.Find(driving->upstream);
        if (InScope(driving->upstream)) {
          if (DrivingOutsideScope(upstream)) feeds.push_back(ChQualified(upstream.key.name_space(), upstream.relation_name));
          for (const ModelView& view : views_[driving->upstream]) {
            feeds.push_back(ChQualified(upstream.key.name_space(), view.name));
          }
        } else if (std::holds_alternative<KafkaSource>(upstream.compute)) {
          feeds.push_back(ChQualified(upstream.key.name_space(), MaterializedViewName(upstream)));
        } else if (scoped_ != nullptr) {
          if (auto known = scoped_->upstream_feeds.find(driving->upstream); known != scoped_->upstream_feeds.end()) {
            feeds = known->second;
          }
        }
      }
      std::vector<ModelView>& views = views_[key];
      if (feeds.empty()) {
        for (const CompiledResource& resource : ModelResources(definitions_, model, sql::SecretHandling::kKeep)) {
          if (resource.kind == "materialized_view") views.push_back({resource.name, Trimmed(resource.sql)});
        }
        continue;
      }
      for (size_t i = 0; i < feeds.size(); ++i) {
        const std::string name = MaterializedViewName(model) + (i == 0 ? "" : "__" + std::to_string(i + 1));
        const std::string query = ResolvedModelQuery(definitions_, model, [&](const ResolvedReference& reference) {
          return reference.edge == EdgeType::kDrivingInput ? std::optional<std::string>(feeds[i]) : std::nullopt;
        });
        views.push_back({name, sql::RenderMaterializedView(key.name_space(), name, model.relation_name, query)});
      }
    }
  }

  // The root a model in scope is filled from: the first table up its chain of driving inputs whose own driving input
  // is outside the scope; nullopt for a view or a model not driven from the scope.
  std::optional<AssetKey> DrivingRoot(const AssetKey& key) {
    if (auto known = roots_.find(key); known != roots_.end()) return known->second;
    std::optional<AssetKey> root;
    const Asset& model = *definitions_.Find(key);
    if (Model(key).kind == ModelKind::kTable) {
      if (DrivingOutsideScope(model)) {
        root = key;
      } else if (const AssetDependency* driving = DrivingInput(model); driving != nullptr && InScope(driving->upstream)) {
        root = DrivingRoot(driving->upstream);  // upstream first in scope order, so already known: no deep recursion
      }
    }
    roots_[key] = root;
    return root;
  }

  // The models a root fills through materialized views (those whose chain of driving inputs leads to it), the root
  // first, in scope order: what a replay retry rebuilds. Computed for every root in one pass over the scope.
  const std::vector<AssetKey>& Subtree(const AssetKey& root) {
    if (subtrees_.empty()) {
      for (const AssetKey& key : plan_.scope) {
        if (std::optional<AssetKey> owner = DrivingRoot(key)) subtrees_[*owner].push_back(key);
      }
    }
    return subtrees_[root];
  }

  void PlanReplay(const Asset& model) {
    const AssetKey driving_key = *DrivingOutsideScope(model);
    const Asset& driving = *definitions_.Find(driving_key);
    ReplaySpec spec;
    spec.root = model.key;
    spec.driving = driving_key;
    spec.mode = ReplayMode(definitions_, driving);
    spec.driving_namespace = driving.key.name_space();
    if (std::optional<std::string> table = UpstreamTable(driving)) {
      spec.driving_table = *table;
    } else {
      plan_.warnings.push_back("model '" + model.name() + "' is driven by the Postgres source '" + driving.name() +
                               "': it has no history to replay and fills on the source's refresh schedule");
    }
    if (std::holds_alternative<KafkaSource>(driving.compute)) spec.landing_view = MaterializedViewName(driving);
    spec.subtree = Subtree(model.key);
    std::vector<PlanStatement> statements;
    for (const ModelView& view : views_[model.key]) statements.push_back(Same(view.sql));
    if (!capabilities_.materialized_view_cascade) {
      for (const AssetKey& key : spec.subtree) {
        if (key == model.key) continue;
        for (const ModelView& view : views_[key]) statements.push_back(Same(view.sql));
      }
    }
    if (!spec.driving_table.empty()) {
      const std::string filtered =
          "(SELECT * FROM " + UpstreamRelation(driving, true) + " WHERE " + kReplayBoundaryPlaceholder + ")";
      std::string insert = "INSERT INTO " + ChQualified(model.key.name_space(), model.relation_name) + "\n" +
                           ResolvedModelQuery(definitions_, model, [&](const ResolvedReference& reference) {
                             return reference.edge == EdgeType::kDrivingInput ? std::optional<std::string>(filtered)
                                                                              : std::nullopt;
                           });
      const Pipeline* pipeline = definitions_.FindPipeline(model.pipeline);
      if (pipeline != nullptr && !pipeline->replay_settings.empty()) {
        std::string settings;
        for (const auto& [name, value] : pipeline->replay_settings) {
          settings += (settings.empty() ? "" : ", ") + name + " = " + value;
        }
        insert += "\nSETTINGS " + settings;
      }
      statements.push_back(Same(insert));
    }
    PlanStep step;
    step.phase = DeployPhase::kReplay;
    step.name = "replay_" + model.relation_name;
    step.asset = model.key;
    step.statements = std::move(statements);
    step.replay = std::move(spec);
    plan_.steps.push_back(std::move(step));
  }

  void PlanDuckDb() {
    std::set<std::string> namespaces;
    for (const AssetKey& key : plan_.scope) namespaces.insert(key.name_space());
    for (const std::string& ns : namespaces) {
      Add(DeployPhase::kPrepare, "create_schema_" + ns, std::nullopt,
          {Same("CREATE SCHEMA IF NOT EXISTS " + sql::QuoteIdentifier(sql::Dialect::kDuckDb, ns))})
          .name_space = ns;
    }
    for (const AssetKey& key : plan_.scope) {
      const Asset& model = *definitions_.Find(key);
      const bool view = Model(key).kind == ModelKind::kView;
      const Relation relation{key.name_space(), model.relation_name};
      std::string target = sql::QualifiedName(sql::Dialect::kDuckDb, key.name_space(), model.relation_name);
      std::string select;
      if (rendering_.warehouse != nullptr) {
        // The full refresh the executor runs (direct_executor.hpp): the same request, so the same window.
        RunRequest request;
        request.assets = std::vector<AssetKey>{key};
        request.full_refresh = true;
        const RunPlan run = PlanRun(definitions_, request, rendering_.today);
        target = rendering_.warehouse->QualifiedName(relation);
        select = RenderRunSql(definitions_, model, run.steps.front().window, *rendering_.warehouse).text;
      } else {
        select = ResolvedModelQuery(definitions_, model);
      }
      Add(DeployPhase::kRealization, std::string(view ? "replace_view_" : "replace_table_") + model.relation_name, key,
          {Same(std::string(view ? "CREATE OR REPLACE VIEW " : "CREATE OR REPLACE TABLE ") + target + " AS\n" +
                select)});
    }
  }

  void PlanAudits() {
    std::set<std::string> rebuilt;
    for (const AssetKey& key : plan_.scope) rebuilt.insert(definitions_.Find(key)->name());
    for (const AuditSpec& audit : definitions_.audits()) {
      if (audit.warmup_seconds > 0 || audit.referenced_models.empty()) continue;
      bool all = std::all_of(audit.referenced_models.begin(), audit.referenced_models.end(),
                             [&](const std::string& name) { return rebuilt.count(name) > 0; });
      if (!all) continue;
      PlanStep step;
      step.phase = DeployPhase::kAudit;
      step.name = "audit_" + audit.name;
      for (char& c : step.name) {
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) c = '_';
      }
      step.statements.push_back(Same(Trimmed(audit.failure_count_sql)));
      step.audit = audit.name;
      plan_.steps.push_back(std::move(step));
    }
  }

  struct ModelView {
    std::string name;
    std::string sql;
  };

  const Definitions& definitions_;
  const Capabilities& capabilities_;
  const RunRendering& rendering_;
  const ScopedPlanOptions* scoped_ = nullptr;
  DirectPlan plan_;
  std::map<AssetKey, std::vector<ModelView>> views_;  // the materialized views of each table in scope
  std::set<AssetKey> in_scope_;
  std::map<AssetKey, std::optional<AssetKey>> roots_;  // DrivingRoot's answers
  std::map<AssetKey, std::vector<AssetKey>> subtrees_;  // Subtree's, by root
};

}  // namespace

std::string DeployPhaseName(DeployPhase phase) {
  switch (phase) {
    case DeployPhase::kPrepare:
      return "prepare";
    case DeployPhase::kTeardown:
      return "teardown";
    case DeployPhase::kRealization:
      return "realization";
    case DeployPhase::kReplay:
      return "replay";
    case DeployPhase::kAudit:
      return "audit";
  }
  return "prepare";
}

std::vector<std::string> LineageColumns(const std::string& mode) {
  if (mode == "offsets") return {"_replay_partition", "_replay_offset"};
  if (mode == "snapshot") return {};
  if (mode == "cursor") return {"_replay_cursor"};
  if (mode == "landed_at") return {"_replay_landed_at"};
  return {"_replay_timestamp"};
}

DirectPlan PlanDirect(const Definitions& definitions, const std::vector<std::string>& selection,
                      const Capabilities& capabilities, const RunRendering& rendering) {
  return DirectPlanner(definitions, capabilities, rendering).Plan(selection);
}

DirectPlan PlanScope(const Definitions& definitions, const std::vector<AssetKey>& scope, const Capabilities& capabilities,
                     const ScopedPlanOptions& options) {
  return DirectPlanner(definitions, capabilities, options.rendering, &options).PlanKeys(scope);
}

Capabilities ModernClickHouseCapabilities() {
  Capabilities capabilities;
  capabilities.create_or_replace_view = true;
  capabilities.exchange_tables = true;
  capabilities.native_date_partitioning = true;
  capabilities.datetime64 = true;
  capabilities.ttl = true;
  capabilities.double_colon_cast = true;
  capabilities.window_functions = true;
  capabilities.is_not_distinct_from = true;
  capabilities.drop_sync = true;
  capabilities.atomic_databases = true;
  capabilities.materialized_view_cascade = true;
  capabilities.kafka_virtual_columns = true;
  capabilities.materialized_views = true;
  capabilities.table_engines = true;
  capabilities.replace_view_changes_columns = true;
  capabilities.server_version = "25.8";
  return capabilities;
}

}  // namespace sluice
