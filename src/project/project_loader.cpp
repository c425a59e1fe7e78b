#include "project/project_loader.hpp"

#include <algorithm>
#include <exception>
#include <limits>
#include <memory>
#include <unordered_map>

#include "core/closest_name.hpp"
#include "core/file_system.hpp"
#include "core/parallel_for.hpp"
#include "core/phase_timer.hpp"
#include "project/checks/checks.hpp"
#include "project/header_grammar.hpp"
#include "project/macros/macro_engine.hpp"
#include "project/models/model_contract.hpp"
#include "project/models/model_file.hpp"
#include "project/models/model_graph.hpp"
#include "project/sources/source_loader.hpp"
#include "sql/source_columns.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

struct PipelineFiles {
  std::string name;
  std::string directory;                 // relative
  std::vector<std::string> model_files;  // relative, sorted
  std::optional<std::string> config_file;
};

// `pipelines/<name>/` folders in name order, each with its `**/*.sql` model files.
std::vector<PipelineFiles> DiscoverPipelines(const std::filesystem::path& root) {
  std::vector<PipelineFiles> pipelines;
  const std::filesystem::path base = root / "pipelines";
  if (!std::filesystem::is_directory(base)) return pipelines;
  for (const auto& item : std::filesystem::directory_iterator(base)) {
    if (!item.is_directory()) continue;
    PipelineFiles pipeline;
    pipeline.name = item.path().filename().string();
    pipeline.directory = "pipelines/" + pipeline.name;
    pipelines.push_back(std::move(pipeline));
  }
  std::sort(pipelines.begin(), pipelines.end(),
            [](const PipelineFiles& a, const PipelineFiles& b) { return a.name < b.name; });
  // Each folder holds many files: they are listed in parallel, a folder at a time.
  ParallelFor(
      pipelines.size(),
      [&](size_t p) {
        PipelineFiles& pipeline = pipelines[p];
        WalkFiles(root, pipeline.directory, [&](std::string&& path, bool regular) {
          // `.sql` alone is a hidden file, not a model.
          if (regular && path.ends_with(".sql") && path[path.size() - 5] != '/') {
            pipeline.model_files.push_back(std::move(path));
          }
        });
        std::sort(pipeline.model_files.begin(), pipeline.model_files.end());
        if (std::filesystem::is_regular_file(base / pipeline.name / "pipeline.toml")) {
          pipeline.config_file = pipeline.directory + "/pipeline.toml";
        }
      },
      /*min_items_per_thread=*/1);
  return pipelines;
}

// What a pipeline gives its models.
struct PipelineSettings {
  PipelineConfig config;
  std::string name_space;
  std::string table_prefix;
  std::string view_prefix;
  MacroContextValues macro_context;
  std::exception_ptr error;  // the pipeline's config or folder failure
};

// What the load keeps of a model besides its asset.
struct LoadedModel {
  size_t pipeline = 0;                // index in the pipelines
  std::string file;                   // relative path
  std::exception_ptr error;           // reading, parsing or the replay policy failed
  std::exception_ptr key_error;       // the model's asset key (SLU-CORE-001)
  std::exception_ptr contract_error;  // the SQL body contract or the partition column
  bool anchor_candidate = false;      // from the contract
  unsigned lineage_modes = 0;         // the lineage modes (LineageModeBit) whose columns the model outputs
  std::string text;                   // the file's text, kept only when the header declares audits
  std::optional<std::string> expanded_body;  // the body after macro expansion, when it calls a macro
  bool expansion_failed = false;             // `error` is the expansion's
  ModelAuditDeclarations audits;      // the header's audits
};

MacroContextValues MacroContextFor(const TargetSettings& target, const PipelineConfig& pipeline,
                                   const std::string& schema) {
  MacroContextValues context;
  context.adapter_name = target.adapter;
  context.dialect = target.adapter;
  context.target_name = target.name;
  context.database = target.database;
  context.schema = schema;
  context.virtual_environments = pipeline.mode == PipelineMode::kVirtual;
  context.variables = target.variables;
  context.withheld_variables = target.environment_variables;
  return context;
}

// One load of one project: each stage reads what the stages before it filled, in the order Run calls them.
class ProjectLoad {
 public:
  ProjectLoad(const std::filesystem::path& root, const LoadOptions& options) : options_(options) {
    project_.root = root;
  }

  Project Run() {
    LoadSettings();
    LoadSources();
    MarkPhase("config and sources");
    LoadPipelines();
    MarkPhase("pipelines discovered");
    ParseModels();
    MarkPhase("models parsed");
    ReportFileErrors();
    NameModels();
    ResolveReferences();
    ResolveRoleColumns();
    CheckRelationNames(assets_);
    CheckPipelineBoundaries();
    InferPipelineSources();
    CheckPipelineNames();
    ApplyContracts();
    MarkPhase("graph checks and contracts");
    CompileChecks();
    MarkPhase("tests and audits");
    BuildDefinitions();
    MarkPhase("definitions");
    return std::move(project_);
  }

 private:
  // A model's file text for a diagnostic's caret line: the kept one, else read again (an error path).
  std::string TextOf(size_t m) const {
    if (!models_[m].text.empty()) return models_[m].text;
    try {
      return ReadFileInside(project_.root, models_[m].file);
    } catch (const Error&) {
      return {};  // the diagnostic goes without its caret line
    }
  }

  [[noreturn]] void FailAt(size_t m, const SourceLocation& at, std::string code, std::string message,
                           std::string hint) const {
    throw Error(MakeDiagnostic(std::move(code), std::move(message), at, std::move(hint), TextOf(m)));
  }

  Asset& ModelAsset(size_t m) { return assets_[sources_.size() + m]; }
  SqlCompute& ModelSql(size_t m) { return std::get<SqlCompute>(ModelAsset(m).compute); }

  // Config (streambuild_project.toml, streambuild_local.toml), the resolved target, and the macros.
  void LoadSettings() {
    static_cast<ProjectSettings&>(project_) = LoadProjectSettings(project_.root, options_);
    CheckTargetNames(project_.config, project_.target);
    dialect_ = sql::DialectForAdapter(project_.target.adapter);
    macros_ = MacroEngine::Load(project_.root);
  }

  // sources/*.yml, each source becoming an asset (the first assets_, in name order).
  void LoadSources() {
    const TargetSettings& target = project_.target;
    SourceLoadOptions options{.project_name = project_.config.name,
                              .target_name = target.name,
                              .database = target.database,
                              .default_kafka_broker_list = target.defaults.kafka_broker_list,
                              .default_managed_source_ttl = target.defaults.managed_source_ttl,
                              .default_freshness = std::nullopt,
                              .expand = target.templates.StringExpander(),
                              .derive_name = {}};
    if (const auto& naming_macro = target.defaults.kafka_naming_macro) {
      options.derive_name = [this, macro = *naming_macro](const std::string& topic, const SourceLocation& at) {
        return std::optional<std::string>(macros_->DeriveKafkaSourceName(macro, topic, at));
      };
    }
    if (const auto& freshness = project_.config.defaults.freshness) {
      options.default_freshness = FreshnessPolicy{freshness->warn_after, freshness->error_after};
    }
    try {
      sources_ = sluice::LoadSources(project_.root, options);
    } catch (const Error& error) {
      // Reported with the pipelines' and models' errors (ReportFileErrors); the load goes on without sources.
      file_errors_ = error.diagnostics();
    }
    for (const SourceDeclaration& source : sources_) {
      Asset asset{{}, source.name, "", source.description, std::nullopt, {}, {}, source.at};
      try {
        asset.key = AssetKey::Of(target.database, source.name);
      } catch (const Error&) {
        if (!source_key_error_) source_key_error_ = std::current_exception();
      }
      std::visit([&](const auto& compute) { asset.compute = compute; }, source.compute);
      if (const auto* table = std::get_if<ExternalTable>(&source.compute)) asset.relation_name = table->table_name;
      if (auto* kafka = std::get_if<KafkaSource>(&asset.compute)) {
        asset.relation_name = "raw__" + source.name;
        if (kafka->name_origin == "derived" && target.defaults.kafka_naming_macro) {
          kafka->naming_macro = target.defaults.kafka_naming_macro;
          kafka->naming_macro_fingerprint = macros_->MacroFingerprint(*kafka->naming_macro);
        }
      }
      assets_.push_back(std::move(asset));
    }
    // Code assets the models may read, as sources: the SDK puts each code asset in its stand-in's place. A key the
    // SDK's inspection rejects, or a name a declared source has, gets no stand-in.
    for (const std::vector<std::string>& parts : options_.code_asset_keys) {
      AssetKey key;
      try {
        key = AssetKey::FromParts(parts, target.database);
      } catch (const Error&) {
        continue;
      }
      const bool taken = std::any_of(sources_.begin(), sources_.end(),
                                     [&](const SourceDeclaration& source) { return source.name == key.name(); });
      if (taken) continue;
      ExternalTable stand_in{key.name(), "", {}, true};
      sources_.push_back(SourceDeclaration{key.name(), {}, "defined in code", std::nullopt, stand_in});
      assets_.push_back(Asset{key, key.name(), "", "defined in code", std::nullopt, {}, stand_in, {}});
    }
    for (size_t s = 0; s < sources_.size(); ++s) source_index_.emplace(sources_[s].name, s);
  }

  // The pipeline folders and each one's settings. A pipeline's failure is kept and reported by ReportFileErrors
  // with the other files' errors; its models are not parsed.
  void LoadPipelines() {
    pipeline_files_ = DiscoverPipelines(project_.root);
    const TargetSettings& target = project_.target;
    pipeline_settings_.resize(pipeline_files_.size());
    for (size_t p = 0; p < pipeline_files_.size(); ++p) {
      const PipelineFiles& files = pipeline_files_[p];
      PipelineSettings& settings = pipeline_settings_[p];
      try {
        settings.config = LoadPipelineConfig(project_.root, files.name, files.config_file, target);
        const std::string& prefix = target.naming.pipeline_prefix;
        if (project_.config.naming.pipeline_prefix && !prefix.empty() && files.name.rfind(prefix, 0) != 0) {
          throw Error(Diagnostic{"SLU-PROJECT-006",
                                 "pipeline '" + files.name + "' does not start with naming.pipeline_prefix \"" +
                                     prefix + "\"",
                                 {files.directory, 0, 0},
                                 "rename the folder to " + prefix + files.name + " or change naming.pipeline_prefix",
                                 {}});
        }
        if (files.model_files.empty()) {
          throw Error(Diagnostic{"SLU-PROJECT-002",
                                 "pipeline '" + files.name + "' has no .sql models",
                                 {files.directory, 0, 0},
                                 "add a model file or remove the folder",
                                 {}});
        }
        settings.name_space = settings.config.database.value_or(target.database);
        settings.table_prefix = settings.config.table_prefix.value_or(target.naming.table_prefix);
        settings.view_prefix = settings.config.view_prefix.value_or(target.naming.view_prefix);
        settings.macro_context = MacroContextFor(target, settings.config, settings.name_space);
      } catch (const Error&) {
        settings.error = std::current_exception();
      }
    }
  }

  // Every model file of the pipelines whose settings loaded: read, parsed, its replay policy, SQL body contract and
  // partition column checked and its asset filled, in parallel. In a project with macros the files are read first
  // and the bodies calling a macro expanded in file order on this thread (Python runs one call at a time, and
  // workers queuing for it are slower than one thread). A model's failure is kept with it and reported by
  // ReportFileErrors.
  void ParseModels() {
    for (size_t p = 0; p < pipeline_files_.size(); ++p) {
      if (pipeline_settings_[p].error) continue;
      for (const std::string& file : pipeline_files_[p].model_files) models_.push_back(LoadedModel{p, file});
    }
    // Each model's asset is filled by its parse; until then it holds a SeedCompute, which allocates nothing.
    assets_.resize(sources_.size() + models_.size(), Asset{{}, {}, {}, {}, std::nullopt, {}, SeedCompute{}, {}});
    const OpenFolder root(project_.root);
    const bool expand_first = !macros_->macros().empty();
    if (expand_first) {
      ParallelFor(models_.size(), [&](size_t m) { ReadModel(root, models_[m]); });
      for (LoadedModel& model : models_) ExpandMacroCalls(model);
    }
    ParallelFor(models_.size(), [&](size_t m) {
      if (!expand_first) ReadModel(root, models_[m]);
      ParseModel(m);
    });
  }

  static void ReadModel(const OpenFolder& root, LoadedModel& model) {
    try {
      model.text = root.ReadFile(model.file);
    } catch (const Error&) {
      model.error = std::current_exception();
    }
  }

  // The model's body with its macro calls expanded, when it has any ('@' starts each); a failure is the model's.
  void ExpandMacroCalls(LoadedModel& model) {
    if (model.error || model.text.find('@') == std::string::npos) return;
    try {
      const size_t body = ParseHeaderBlock(model.text, 0, "MODEL", model.file).end;
      model.expanded_body = macros_->Expand(model.file, model.text, body, model.text.size(),
                                            pipeline_settings_[model.pipeline].macro_context);
    } catch (const Error&) {
      model.error = std::current_exception();  // a header error comes first: the parse reports it (below)
      model.expansion_failed = true;
    }
  }

  void ParseModel(size_t m) {
    LoadedModel& model = models_[m];
    const PipelineSettings& settings = pipeline_settings_[model.pipeline];
    if (model.error && !model.expansion_failed) return;  // the file could not be read
    ParsedModel parsed;
    try {
      parsed = ParseModelFile(model.file, model.text, dialect_, [&](size_t begin, size_t end) {
        if (model.expansion_failed) std::rethrow_exception(model.error);
        if (model.expanded_body) return std::move(*model.expanded_body);
        // A project without macros: only the built-in calls may stand in the body (no Python runs).
        return macros_->Expand(model.file, model.text, begin, end, settings.macro_context);
      });
      if (settings.config.mode != PipelineMode::kVirtual) {
        for (const char* key : {"replay_on_change", "bounded_replay_fallback"}) {
          if (const HeaderEntry* entry = FindEntry(parsed.header, key)) {
            CheckModelReplayPolicy(settings.config, model.file, model.text, ModelReplayPolicy{key, entry->key_offset});
          }
        }
      }
    } catch (const Error&) {
      model.error = std::current_exception();
      return;
    }
    ModelColumns columns;
    bool aggregate = false;
    try {
      ModelContract contract = CheckModelContract(ContractInputOf(parsed, model.text, dialect_));
      CheckPartitionColumn(parsed, model.text, contract, dialect_);
      ApplyStorageDefaults(parsed, contract, dialect_);
      aggregate = contract.aggregate;
      model.anchor_candidate = contract.anchor_candidate;
      model.lineage_modes = LineageModesOf(contract, dialect_);
      columns = ModelColumnsOf(contract.columns);
    } catch (const Error&) {
      model.contract_error = std::current_exception();
    }
    model.audits = AuditDeclarationsFromHeader(parsed.header);
    std::string header = model.text.substr(0, std::min(parsed.body_offset, model.text.size()));
    if (!model.audits.audits && model.audits.columns.empty()) std::string().swap(model.text);

    Asset& asset = ModelAsset(m);
    try {
      asset.key = AssetKey::Of(settings.name_space, parsed.name);
    } catch (const Error&) {
      model.key_error = std::current_exception();
    }
    const std::string& prefix = parsed.kind == ModelKind::kView ? settings.view_prefix : settings.table_prefix;
    asset.relation_name = parsed.relation_name ? std::move(*parsed.relation_name) : prefix + parsed.name;
    asset.pipeline = pipeline_files_[model.pipeline].name;
    asset.description = std::move(parsed.description);
    asset.partitions = std::move(parsed.partitions);
    asset.backfill_policy = parsed.backfill_policy;
    asset.defined_at = SourceLocation{model.file, 1, 1};
    SqlCompute compute{parsed.kind, std::move(parsed.body), parsed.body_offset, {}, std::move(parsed.partition_bounds),
                       std::move(parsed.storage), std::move(columns), aggregate, false};
    compute.references.reserve(parsed.references.size());
    for (ModelReference& ref : parsed.references) {
      compute.references.push_back(ResolvedReference{std::move(ref.call), AssetKey(), ref.edge, std::move(ref.at)});
    }
    compute.header = std::move(header);
    asset.compute = std::move(compute);
  }

  // The errors found so far each belong to one file, whatever the other files hold: a sources/*.yml file's first
  // error, a seed CSV file's, a pipeline's (its pipeline.toml or folder), and a model file's first (reading, macro
  // expansion, header and references, body contract, partition column). All of them are thrown together, sorted
  // by file, before the checks that span files (names, references, the graph) would report errors caused by them.
  void ReportFileErrors() {
    std::vector<Diagnostic> errors = std::move(file_errors_);
    auto add = [&errors](const std::exception_ptr& failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const Error& error) {
        errors.insert(errors.end(), error.diagnostics().begin(), error.diagnostics().end());
      }
    };
    for (const PipelineSettings& settings : pipeline_settings_) {
      if (settings.error) add(settings.error);
    }
    for (const LoadedModel& model : models_) {
      if (model.error) {
        add(model.error);
      } else if (model.contract_error) {
        add(model.contract_error);
      }
    }
    if (errors.empty()) return;
    SortByLocation(errors);
    throw Error(std::move(errors));
  }

  // Pipelines and their models in order; model names are unique across the project and never a source's.
  void NameModels() {
    bool any_virtual_pipeline = false;
    model_index_.reserve(models_.size());
    size_t m = 0;
    for (size_t p = 0; p < pipeline_files_.size(); ++p) {
      const PipelineFiles& files = pipeline_files_[p];
      const PipelineSettings& settings = pipeline_settings_[p];
      any_virtual_pipeline = any_virtual_pipeline || settings.config.mode == PipelineMode::kVirtual;
      Pipeline pipeline{files.name, files.directory, settings.name_space, {}, {}};
      pipeline.virtual_mode = settings.config.mode == PipelineMode::kVirtual;
      if (settings.config.protection) {
        pipeline.confirmation = settings.config.protection->confirmation;
        pipeline.protection_warning = settings.config.protection->warning;
      }
      pipeline.replay_settings.assign(settings.config.replay_settings.begin(), settings.config.replay_settings.end());
      if (pipeline.virtual_mode) {
        const ProjectDefaults& defaults = project_.config.defaults;
        pipeline.replay_on_change = settings.config.replay_on_change;
        if (!pipeline.replay_on_change && defaults.replay_on_change) pipeline.replay_on_change = defaults.replay_on_change->value;
        if (settings.config.bounded_replay_fallback) {
          pipeline.bounded_replay_fallback = *settings.config.bounded_replay_fallback;
        } else if (defaults.bounded_replay_fallback) {
          pipeline.bounded_replay_fallback = defaults.bounded_replay_fallback->value;
        }
      }
      std::vector<size_t>& by_name = pipeline_models_.emplace_back();
      for (; m < models_.size() && models_[m].pipeline == p; ++m) {
        const LoadedModel& model = models_[m];
        const std::string& name = ModelAsset(m).name();
        auto [first, added] = model_index_.emplace(name, m);
        if (!added) {
          throw Error(Diagnostic{"SLU-PROJECT-003",
                                 "model '" + name + "' is defined twice: " + models_[first->second].file + " and " +
                                     model.file,
                                 {model.file, 1, 1},
                                 "model names (file stems) are unique across the project",
                                 {}});
        }
        if (source_index_.count(name)) {
          throw Error(Diagnostic{"SLU-PROJECT-004",
                                 "'" + name + "' names both a model and a source",
                                 {model.file, 1, 1},
                                 "rename the model file or the source",
                                 {}});
        }
        by_name.push_back(m);
      }
      std::sort(by_name.begin(), by_name.end(),
                [&](size_t a, size_t b) { return ModelAsset(a).name() < ModelAsset(b).name(); });
      pipeline.models.reserve(by_name.size());
      for (size_t model : by_name) pipeline.models.push_back(ModelAsset(model).name());
      pipelines_.push_back(std::move(pipeline));
    }
    CheckProjectReplayPolicy(project_.config, project_.target, any_virtual_pipeline);
    if (source_key_error_) std::rethrow_exception(source_key_error_);
    for (const LoadedModel& model : models_) {
      if (model.key_error) std::rethrow_exception(model.key_error);
    }
  }

  // What a reference may name, sorted: the sources, and for a `__ref` the models too.
  std::vector<std::string> KnownNames(bool sources_only) const {
    std::vector<std::string> names;
    for (const auto& [name, index] : source_index_) names.push_back(name);
    if (!sources_only) {
      for (const auto& [name, index] : model_index_) names.emplace_back(name);
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  // Each reference to the asset it names: a `__source` to a source, a `__ref` to a model, else a source. The
  // first model (in order) with an unknown reference is the one reported.
  void ResolveReferences() {
    auto source_asset = [&](const std::string& name) {
      auto found = source_index_.find(name);
      return found == source_index_.end() ? kNoAsset : found->second;
    };
    references_.resize(models_.size());
    ParallelFor(models_.size(), [&](size_t m) {
      Asset& asset = ModelAsset(m);
      std::vector<ResolvedReference>& references = ModelSql(m).references;
      std::vector<size_t>& upstreams = references_[m];
      for (ResolvedReference& ref : references) {
        const std::string& name = ref.call.name;
        size_t upstream = kNoAsset;
        if (ref.call.kind == sql::ReferenceKind::kSource) {
          upstream = source_asset(name);
        } else if (auto model = model_index_.find(name); model != model_index_.end()) {
          upstream = sources_.size() + model->second;
        } else {
          upstream = source_asset(name);
        }
        if (upstream == kNoAsset) {
          const bool source = ref.call.kind == sql::ReferenceKind::kSource;
          std::string hint =
              source ? "declare it in sources/*.yml" : "add pipelines/<pipeline>/" + name + ".sql or declare a source";
          if (std::optional<std::string> close = ClosestName(name, KnownNames(source))) {
            hint = "did you mean `" + *close + "`?";
          }
          FailAt(m, ref.at, "SLU-GRAPH-002",
                 "unknown " + std::string(source ? "source" : "model or source") + " '" + name + "'", hint);
        }
        upstreams.push_back(upstream);
        ref.upstream = assets_[upstream].key;
        auto known = std::find_if(asset.deps.begin(), asset.deps.end(),
                                  [&](const AssetDependency& dep) { return dep.upstream == ref.upstream; });
        if (known == asset.deps.end()) asset.deps.push_back(AssetDependency{ref.upstream, ref.edge});
      }
    });
  }

  // Where a model reads an adopted table that keeps replay roles in columns of other names, the physical names it
  // reads when it runs (SqlCompute::role_column_reads).
  void ResolveRoleColumns() {
    ParallelFor(models_.size(), [&](size_t m) {
      SqlCompute& model = ModelSql(m);
      for (size_t r = 0; r < model.references.size(); ++r) {
        const auto* table = std::get_if<ExternalTable>(&assets_[references_[m][r]].compute);
        if (table == nullptr) continue;
        for (sql::SpanReplacement& read : sql::RenameSourceColumns(model.body, dialect_, model.references[r].call.begin,
                                                                   table->replay_columns, models_[m].file)) {
          const bool known = std::any_of(model.role_column_reads.begin(), model.role_column_reads.end(),
                                         [&](const sql::SpanReplacement& other) {
                                           return other.begin == read.begin && other.end == read.end;
                                         });
          if (!known) model.role_column_reads.push_back(std::move(read));
        }
      }
      std::sort(model.role_column_reads.begin(), model.role_column_reads.end(),
                [](const sql::SpanReplacement& a, const sql::SpanReplacement& b) { return a.begin < b.begin; });
    });
  }

  // Views are terminal, and direct and virtual pipelines do not read each other's models.
  void CheckPipelineBoundaries() {
    for (size_t m = 0; m < models_.size(); ++m) {
      const std::vector<ResolvedReference>& references = ModelSql(m).references;
      for (size_t r = 0; r < references.size(); ++r) {
        const size_t upstream_index = references_[m][r];
        if (upstream_index < sources_.size()) continue;
        const size_t upstream_model = upstream_index - sources_.size();
        const Asset& upstream = assets_[upstream_index];
        const std::string& name = ModelAsset(m).name();
        if (std::get<SqlCompute>(upstream.compute).kind == ModelKind::kView) {
          FailAt(m, references[r].at, "SLU-GRAPH-005",
                 "'" + name + "' reads the view '" + upstream.name() + "'; views are terminal",
                 "make " + upstream.name() + " a table (kind table), or read what the view reads");
        }
        const PipelineMode mode = pipeline_settings_[models_[m].pipeline].config.mode;
        const PipelineMode upstream_mode = pipeline_settings_[models_[upstream_model].pipeline].config.mode;
        if (mode != upstream_mode) {
          FailAt(m, references[r].at, "SLU-GRAPH-006",
                 "'" + name + "' (" + PipelineModeName(mode) + " pipeline " +
                     pipeline_files_[models_[m].pipeline].name + ") reads '" + upstream.name() + "' of the " +
                     PipelineModeName(upstream_mode) + " pipeline " + upstream.pipeline,
                 "direct and virtual pipelines cannot depend on each other; give both pipelines the same mode");
        }
      }
    }
  }

  // Each pipeline's source: the one its table models' driving chains reach (SLU-GRAPH-003 for two).
  void InferPipelineSources() {
    std::vector<size_t> driving_upstream(assets_.size(), kNoAsset);
    for (size_t m = 0; m < models_.size(); ++m) {
      const std::vector<ResolvedReference>& references = ModelSql(m).references;
      for (size_t r = 0; r < references.size(); ++r) {
        if (references[r].edge == EdgeType::kDrivingInput) driving_upstream[sources_.size() + m] = references_[m][r];
      }
    }
    const std::vector<size_t> sources = DrivingSources(assets_, driving_upstream);
    for (size_t p = 0; p < pipelines_.size(); ++p) {
      Pipeline& pipeline = pipelines_[p];
      const Asset* first_model = nullptr;  // the first model (by name) reaching the pipeline's source
      for (const size_t m : pipeline_models_[p]) {
        const std::string& name = ModelAsset(m).name();
        const Asset& asset = ModelAsset(m);
        if (std::get<SqlCompute>(asset.compute).kind == ModelKind::kView) continue;
        const size_t source = sources[sources_.size() + m];
        if (source == kNoAsset) continue;
        const std::string& source_name = assets_[source].name();
        if (!pipeline.source) {
          pipeline.source = source_name;
          first_model = &asset;
        } else if (*pipeline.source != source_name) {
          SourceLocation at = asset.defined_at;
          for (const ResolvedReference& ref : std::get<SqlCompute>(asset.compute).references) {
            if (ref.edge == EdgeType::kDrivingInput) at = ref.at;
          }
          FailAt(m, at, "SLU-GRAPH-003",
                 "pipeline '" + pipeline.name + "' reads two sources: " + *pipeline.source + " (through " +
                     first_model->name() + ") and " + source_name + " (through " + name + ")",
                 "every pipeline resolves to exactly one source; move " + name + " to a pipeline of its own");
        }
      }
    }
  }

  // naming.pipeline_naming_macro confirms each pipeline's name; it never renames.
  void CheckPipelineNames() {
    const auto& naming_macro = project_.target.naming.pipeline_naming_macro;
    if (!naming_macro) return;
    for (size_t p = 0; p < pipelines_.size(); ++p) {
      const Pipeline& pipeline = pipelines_[p];
      PipelineNamingContextValues context{pipeline.name, pipeline.source, pipeline.models, pipeline.directory,
                                          PipelineModeName(pipeline_settings_[p].config.mode)};
      macros_->CheckPipelineName(*naming_macro, context, SourceLocation{pipeline.directory, 0, 0});
    }
  }

  // Each table model's anchor eligibility now that its pipeline's replay lineage mode (its source's) is known.
  void ApplyContracts() {
    std::vector<LineageMode> lineage;  // by pipeline
    for (const Pipeline& pipeline : pipelines_) {
      LineageMode mode = LineageMode::kOffsets;
      if (pipeline.source) {
        std::visit(
            [&](const auto& compute) {
              using T = std::decay_t<decltype(compute)>;
              if constexpr (std::is_same_v<T, KafkaSource> || std::is_same_v<T, ExternalTable>) {
                mode = LineageModeNamed(compute.replay_mode).value_or(LineageMode::kOffsets);
              }
            },
            assets_[source_index_.at(*pipeline.source)].compute);
      }
      lineage.push_back(mode);
    }
    for (size_t m = 0; m < models_.size(); ++m) {
      const LoadedModel& model = models_[m];
      ModelSql(m).anchor_eligible =
          model.anchor_candidate && (model.lineage_modes & LineageModeBit(lineage[model.pipeline])) != 0;
    }
  }

  // SQL tests and audits, compiled against the models' bodies, references and columns.
  void CompileChecks() {
    ChecksInput input{project_.root, dialect_, {}, {}, project_.config.defaults.audits, {}, {}};
    for (const SourceDeclaration& source : sources_) input.sources.push_back(source.name);
    input.models.resize(models_.size());
    ParallelFor(models_.size(), [&](size_t m) {
      const Asset& asset = ModelAsset(m);
      const SqlCompute& compute = ModelSql(m);
      input.models[m] = ModelCheckInput{asset.name(),          asset.pipeline,          asset.defined_at.file,
                                        compute.kind,          asset.relation_name,     asset.key.name_space(),
                                        &compute,              &models_[m].audits,      models_[m].text,
                                        asset.partitions ? &*asset.partitions : nullptr};
    });
    for (size_t p = 0; p < pipeline_files_.size(); ++p) {
      input.pipeline_audit_defaults.try_emplace(pipeline_files_[p].name, pipeline_settings_[p].config.audit_defaults);
    }
    const MacroContextValues context = MacroContextFor(project_.target, PipelineConfig{}, project_.target.database);
    input.expand_macros = [&](const std::string& file, const std::string& text, size_t begin, size_t end) {
      return macros_->Expand(file, text, begin, end, context);
    };
    checks_ = CompileTestsAndAudits(input);
  }

  // The Definitions value; its graph errors (a cycle) are located in model files, which get their caret line.
  void BuildDefinitions() {
    Definitions::Parts parts;
    parts.project = ProjectInfo{project_.config.name, project_.target.name, project_.target.adapter};
    parts.assets = std::move(assets_);
    parts.pipelines = std::move(pipelines_);
    parts.tests = std::move(checks_.tests);
    parts.audits = std::move(checks_.audits);
    for (const MacroDefinition& macro : macros_->macros()) {
      parts.macros.push_back(MacroSource{macro.name, macro.file, macro.source});
    }
    project_.warnings = std::move(checks_.warnings);
    try {
      project_.definitions = Definitions(std::move(parts));
    } catch (const Error& error) {
      std::vector<Diagnostic> diagnostics = error.diagnostics();
      for (Diagnostic& diagnostic : diagnostics) {
        const std::string& file = diagnostic.location.file;
        for (size_t m = 0; m < models_.size(); ++m) {  // an error path: the names' index viewed the moved assets
          if (models_[m].file != file) continue;
          diagnostic =
              MakeDiagnostic(diagnostic.code, diagnostic.message, diagnostic.location, diagnostic.hint, TextOf(m));
          break;
        }
      }
      throw Error(std::move(diagnostics));
    }
  }

  const LoadOptions& options_;
  Project project_;
  sql::Dialect dialect_ = sql::Dialect::kClickHouse;
  std::unique_ptr<MacroEngine> macros_;  // never null once LoadSettings ran
  std::vector<SourceDeclaration> sources_;
  std::vector<Diagnostic> file_errors_;        // the sources' and seeds', until ReportFileErrors
  std::exception_ptr source_key_error_;        // rethrown after the models' names are checked
  std::unordered_map<std::string, size_t> source_index_;  // name → index in sources_ (== its asset's)
  std::vector<PipelineFiles> pipeline_files_;             // by pipeline index, in name order
  std::vector<PipelineSettings> pipeline_settings_;       // by pipeline index
  std::vector<LoadedModel> models_;                       // pipeline by pipeline, in file order
  std::unordered_map<std::string_view, size_t> model_index_;  // name (viewed in its asset) → index in models_
  std::vector<Asset> assets_;                             // the sources', then model m's at sources_.size() + m
  std::vector<std::vector<size_t>> references_;           // by model: each reference's upstream asset index
  std::vector<Pipeline> pipelines_;                       // by pipeline index
  std::vector<std::vector<size_t>> pipeline_models_;      // by pipeline index: its models' indexes, by name
  CompiledChecks checks_;
};

}  // namespace

std::filesystem::path FindProjectRoot(const std::optional<std::filesystem::path>& project_dir) {
  if (project_dir) {
    std::filesystem::path dir = std::filesystem::absolute(*project_dir).lexically_normal();
    if (!std::filesystem::is_regular_file(dir / "streambuild_project.toml")) {
      throw Error(Diagnostic{"SLU-PROJECT-001",
                             "no streambuild_project.toml in " + dir.string(),
                             {},
                             "pass the folder that holds streambuild_project.toml to --project-dir",
                             {}});
    }
    return dir;
  }
  std::filesystem::path dir = std::filesystem::current_path();
  while (true) {
    if (std::filesystem::is_regular_file(dir / "streambuild_project.toml")) return dir;
    if (dir == dir.root_path() || dir.empty()) break;
    dir = dir.parent_path();
  }
  throw Error(Diagnostic{"SLU-PROJECT-001",
                         "no streambuild_project.toml here or in any parent folder",
                         {},
                         "run inside a project or pass --project-dir",
                         {}});
}

ProjectSettings LoadProjectSettings(const std::filesystem::path& root, const LoadOptions& options) {
  ProjectSettings settings{root, LoadProjectConfig(root), {}};
  settings.target = ResolveTarget(settings.config, LoadLocalConfig(root), options);
  return settings;
}

Project LoadProject(const std::filesystem::path& root, const LoadOptions& options) {
  return ProjectLoad(root, options).Run();
}

}  // namespace sluice
