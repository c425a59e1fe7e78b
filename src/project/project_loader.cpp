#include "project/project_loader.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>

#include "core/file_system.hpp"
#include "core/heap_hint.hpp"
#include "core/name_index.hpp"
#include "core/parallel_for.hpp"
#include "core/phase_timer.hpp"
#include "project/header_grammar.hpp"
#include "project/model_contract.hpp"
#include "project/parse_cache.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

// Takes ownership of `values` in one type-erased object (see Project::load_scratch).
template <typename... T>
std::shared_ptr<void> Retain(T&&... values) {
  return std::make_shared<std::tuple<std::decay_t<T>...>>(std::forward<T>(values)...);
}

struct PipelineFiles {
  std::string name;
  std::string directory;                 // relative
  std::vector<std::string> model_files;  // relative, sorted
  std::optional<std::string> config_file;
};

std::vector<PipelineFiles> DiscoverPipelines(const std::filesystem::path& root) {
  std::vector<PipelineFiles> pipelines;
  std::filesystem::path base = root / "pipelines";
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
  // The folders are listed in parallel: each holds many files (a walk failure is rethrown, the first folder's).
  ParallelFor(
      pipelines.size(),
      [&](size_t p) {
        PipelineFiles& pipeline = pipelines[p];
        WalkFiles(root, pipeline.directory, [&](std::string&& path, bool regular) {
          if (regular && path.size() > 4 && path.compare(path.size() - 4, 4, ".sql") == 0 &&
              path[path.size() - 5] != '/') {  // `.sql` alone is a hidden file, not a model
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

struct PipelineLoad {
  PipelineConfig config;
  std::string name_space;
  std::string table_prefix;
  std::string view_prefix;
  MacroContextValues macro_context;
  std::exception_ptr error;  // the pipeline's config or folder failure
};

// What the load keeps of a model besides its asset, which the parallel parse fills (the parse's own products
// live only while the parse works on the model, so their memory serves the thread's next model).
struct LoadedModel {
  size_t pipeline_index = 0;
  const std::string* file = nullptr;  // relative path, owned by PipelineFiles
  std::exception_ptr error;           // reading or parsing failed
  std::exception_ptr key_error;       // the model's asset key failed (SLU-CORE-001)
  std::exception_ptr contract_error;  // the SQL body contract failed
  std::string name;                   // the file stem
  bool anchor_candidate = false;      // from the contract
  unsigned lineage_modes = 0;         // the lineage modes (LineageModeBit) whose columns the model outputs
  std::string text;               // file text, for located diagnostics; kept only when the header declares audits
  ModelAuditDeclarations audits;  // the header's audits, read once by the parallel parse
  // The model's parse-cache entry: the one this load encoded (the body was parsed and can be cached), or a view
  // of the one it reused (a cache hit). Both empty when the model cannot be cached.
  std::string new_cache_entry;
  std::string_view reused_cache_entry;
};

// An asset index that is none: an unknown reference's upstream, a model without a driving input.
constexpr size_t kNoAsset = SIZE_MAX;

// Where each asset goes in the assets array: key order (namespace, then name; ties in load order, the sources
// first), the order Definitions keeps, so that it neither sorts nor moves them. A model's key is its pipeline's
// namespace and its file stem, both known before its file is read.
struct AssetPlaces {
  static constexpr size_t kNoModel = SIZE_MAX;
  std::vector<size_t> source_place;  // by index in the sources
  std::vector<size_t> model_place;   // by index in the models
  std::vector<size_t> model_at;      // by place: the model there, or kNoModel for a source
};

AssetPlaces PlaceAssets(const std::vector<SourceDeclaration>& sources, const std::string& database,
                        const std::vector<LoadedModel>& models, const std::vector<PipelineLoad>& loads) {
  std::vector<AssetKeyParts> keys;
  keys.reserve(sources.size() + models.size());
  for (const SourceDeclaration& source : sources) keys.push_back(AssetKeyParts{database, source.name});
  for (const LoadedModel& model : models) {
    keys.push_back(AssetKeyParts{loads[model.pipeline_index].name_space, FileStem(*model.file)});
  }
  const std::vector<size_t> place_of = PlacesInKeyOrder(keys);
  AssetPlaces places;
  places.source_place.resize(sources.size());
  places.model_place.resize(models.size());
  places.model_at.assign(keys.size(), AssetPlaces::kNoModel);
  for (size_t s = 0; s < sources.size(); ++s) places.source_place[s] = place_of[s];
  for (size_t m = 0; m < models.size(); ++m) {
    places.model_place[m] = place_of[sources.size() + m];
    places.model_at[place_of[sources.size() + m]] = m;
  }
  return places;
}

// A physical relation: its namespace and its name, written as a generated-object prefix ("", "mv__" or
// "kafka__") and the rest, both viewed in the asset that claims it. Two keys are equal when their namespaces and
// whole names are: the table model `orders`' mv__orders and a model whose relation_name is mv__orders collide.
struct RelationKey {
  std::string_view name_space;
  std::string_view prefix;
  std::string_view name;

  bool operator==(const RelationKey& other) const {
    if (name_space != other.name_space || prefix.size() + name.size() != other.prefix.size() + other.name.size()) {
      return false;
    }
    auto at = [](const RelationKey& key, size_t i) {
      return i < key.prefix.size() ? key.prefix[i] : key.name[i - key.prefix.size()];
    };
    for (size_t i = 0; i < prefix.size() + name.size(); ++i) {
      if (at(*this, i) != at(other, i)) return false;
    }
    return true;
  }
};

// FNV-1a over the namespace, a separator and the whole name.
struct RelationKeyHash {
  size_t operator()(const RelationKey& key) const {
    uint64_t hash = 14695981039346656037ull;
    auto add = [&](std::string_view part) {
      for (char c : part) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    };
    add(key.name_space);
    add(std::string_view("\0", 1));
    add(key.prefix);
    add(key.name);
    return static_cast<size_t>(hash);
  }
};

// The heap estimate the heap policy is given (core/heap_hint.hpp), which maps that much heap ahead when it is
// large (cli/heap.cpp): what the analysis keeps per model in small allocations (~3.3 KiB for the benchmark's
// ~30-line models at 100,000 models; another ~1.1 KiB is in a few arrays of tens of MiB, mapped by
// PrefaultInParallel). 3 KiB rather than 4: 100,000 models' peak RSS 590 -> 503 MiB, no slower (0.99x against
// 1.02x the floor, 11 alternating rounds).
constexpr size_t kHeapBytesPerModel = 3 << 10;

MacroContextValues MacroContextFor(const Project& project, const PipelineConfig& pipeline, const std::string& schema) {
  MacroContextValues context;
  context.adapter_name = project.target.adapter;
  context.dialect = project.target.adapter;
  context.target_name = project.target.name;
  context.database = project.target.database;
  context.schema = schema;
  context.virtual_environments = pipeline.mode == PipelineMode::kVirtual;
  context.variables = project.target.variables;
  return context;
}

// StreamBuild §3.4/§3.7 on one model (ContractInputOf says which header keys it reads).
ModelContract CheckContract(ParsedModel& parsed, const std::string& text, sql::Dialect dialect) {
  return CheckModelContract(ContractInputOf(parsed, text, dialect));
}

// A model's file text for a diagnostic's caret line: kept only for models that declare audits (the audits
// compiler quotes it), read again from disk for the others — an error path, and 1.4 KB less per model.
std::string TextForDiagnostic(const std::filesystem::path& root, const std::string& file, const std::string& kept) {
  if (!kept.empty()) return kept;
  try {
    return ReadFile(root / file);
  } catch (const Error&) {
    return {};  // the diagnostic goes without its caret line
  }
}

[[noreturn]] void FailAt(const std::filesystem::path& root, const LoadedModel& model, const SourceLocation& at,
                         std::string code, std::string message, std::string hint) {
  throw Error(MakeDiagnostic(std::move(code), std::move(message), at, std::move(hint),
                             TextForDiagnostic(root, *model.file, model.text)));
}

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

Project LoadProject(const std::filesystem::path& root, const LoadOptions& options) {
  Project project;
  project.root = root;
  project.config = LoadProjectConfig(root);
  project.target = ResolveTarget(project.config, LoadLocalConfig(root), options);
  project.dialect = sql::DialectForAdapter(project.target.adapter);
  project.macros = MacroEngine::Load(root);
  SourceLoadOptions source_options{.project_name = project.config.name,
                                   .target_name = project.target.name,
                                   .database = project.target.database,
                                   .default_kafka_broker_list = project.target.defaults.kafka_broker_list,
                                   .default_managed_source_ttl = project.target.defaults.managed_source_ttl,
                                   .default_freshness = std::nullopt,
                                   .expand = project.target.templates.StringExpander(),
                                   .derive_name = {}};
  if (const auto& naming_macro = project.target.defaults.kafka_naming_macro) {
    source_options.derive_name = [&project, macro = *naming_macro](const std::string& topic, const SourceLocation& at) {
      return std::optional<std::string>(project.macros->DeriveKafkaSourceName(macro, topic, at));
    };
  }
  if (const auto& freshness = project.config.defaults.freshness) {
    source_options.default_freshness = FreshnessPolicy{freshness->warn_after, freshness->error_after};
  }
  project.sources = LoadSources(root, source_options);
  MarkPhase("config and sources");

  std::map<std::string, const SourceDeclaration*> sources;
  for (const SourceDeclaration& source : project.sources) sources.emplace(source.name, &source);

  // Pipelines: each one's config and folder checks, in name order. A failure is kept and rethrown when the
  // serial pass below reaches that pipeline, so the reported error does not depend on parallel timing.
  std::vector<PipelineFiles> pipeline_files = DiscoverPipelines(root);
  std::vector<PipelineLoad> loads(pipeline_files.size());
  for (size_t p = 0; p < pipeline_files.size(); ++p) {
    const PipelineFiles& files = pipeline_files[p];
    PipelineLoad& load = loads[p];
    try {
      load.config = LoadPipelineConfig(root, files.name, files.config_file, project.target);
      const std::string& prefix = project.target.naming.pipeline_prefix;
      if (project.config.naming.pipeline_prefix && !prefix.empty() && files.name.rfind(prefix, 0) != 0) {
        throw Error(
            Diagnostic{"SLU-PROJECT-006",
                       "pipeline '" + files.name + "' does not start with naming.pipeline_prefix \"" + prefix + "\"",
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
      load.name_space = load.config.database.value_or(project.target.database);
      load.table_prefix = load.config.table_prefix.value_or(project.target.naming.table_prefix);
      load.view_prefix = load.config.view_prefix.value_or(project.target.naming.view_prefix);
      load.macro_context = MacroContextFor(project, load.config, load.name_space);
    } catch (const Error&) {
      load.error = std::current_exception();
    }
  }

  MarkPhase("pipelines discovered");
  // Model files, in parallel: read, parse, check the replay policy and the SQL body contract. Each file's
  // failure is kept with it and rethrown in file order by the serial passes below (parse failures first,
  // contract failures where the contract check has always been reported: after the graph checks).
  std::vector<LoadedModel> models;
  const OpenDirectory root_folder(root);
  size_t model_count = 0;
  for (const PipelineFiles& files : pipeline_files) model_count += files.model_files.size();
  ExpectHeapBytes(model_count * kHeapBytesPerModel);
  models.reserve(model_count);
  PrefaultInParallel(models.data(), model_count * sizeof(LoadedModel));  // ~250 bytes a model
  for (size_t p = 0; p < pipeline_files.size(); ++p) {
    if (loads[p].error) break;  // the serial pass stops at this pipeline
    for (const std::string& file : pipeline_files[p].model_files) {
      LoadedModel& model = models.emplace_back();
      model.pipeline_index = p;
      model.file = &file;
    }
  }
  // Macro calls run in Python, one at a time: expanded inside the parallel parse they would make the workers
  // queue for the interpreter (slower than one thread). So when the project defines macros, the files are read
  // in parallel, the bodies that call a macro are expanded by this thread in file order, and the parallel parse
  // takes the expanded bodies (a failed expansion is rethrown where the parse asks for the body, as before).
  // The header of a file containing '@' is parsed twice (here to find its body, again by the parse): a few µs.
  struct PreparedBody {
    size_t begin = std::string::npos;  // npos: nothing to expand ahead
    std::optional<std::string> expanded;
    std::exception_ptr error;
  };
  std::vector<PreparedBody> prepared;
  if (!project.macros->macros().empty()) {
    prepared.resize(models.size());
    ParallelFor(models.size(), [&](size_t m) {
      LoadedModel& model = models[m];
      try {
        model.text = root_folder.ReadListedFile(*model.file);
        if (model.text.find('@') == std::string::npos) return;
        prepared[m].begin = ParseHeaderBlock(model.text, 0, "MODEL", *model.file).end;
      } catch (const Error&) {
        // the parse below reports it
      }
    });
    for (size_t m = 0; m < models.size(); ++m) {
      if (prepared[m].begin == std::string::npos) continue;
      const LoadedModel& model = models[m];
      try {
        prepared[m].expanded = project.macros->Expand(*model.file, model.text, prepared[m].begin, model.text.size(),
                                                      loads[model.pipeline_index].macro_context);
      } catch (const Error&) {
        prepared[m].error = std::current_exception();
      }
    }
  }
  // Every asset in its place (PlaceAssets): the parallel parse fills a model's asset
  // (assets[places.model_place[its index in `models`]]) from what it parsed. A model's asset holds a SeedCompute
  // until then: it allocates nothing (a default SqlCompute's storage keys would allocate twice per model, only to
  // be replaced).
  const AssetPlaces places = PlaceAssets(project.sources, project.target.database, models, loads);
  std::vector<Asset> assets;
  assets.reserve(project.sources.size() + models.size());
  PrefaultInParallel(assets.data(), assets.capacity() * sizeof(Asset));
  for (size_t place = 0; place < places.model_at.size(); ++place) {
    assets.push_back(Asset{{}, {}, {}, {}, std::nullopt, {}, SeedCompute{}, {}});
  }
  std::exception_ptr source_key_error;  // rethrown where the keys are checked, after the models' names
  for (size_t s = 0; s < project.sources.size(); ++s) {
    const SourceDeclaration& source = project.sources[s];
    Asset asset{{}, source.name, "", "", std::nullopt, {}, {}, source.at};
    try {
      asset.key = AssetKey::Of(project.target.database, source.name);
    } catch (const Error&) {
      if (!source_key_error) source_key_error = std::current_exception();
    }
    std::visit([&](const auto& compute) { asset.compute = compute; }, source.compute);
    if (const auto* table = std::get_if<ExternalTable>(&source.compute)) asset.relation_name = table->table_name;
    if (std::holds_alternative<KafkaSource>(source.compute)) asset.relation_name = "raw__" + source.name;
    assets[places.source_place[s]] = std::move(asset);
  }
  // A model whose file the parse cache knows unchanged gets its body's analysis from there (parse_cache.hpp):
  // only its name and header are parsed, and the checks that depend on the pipeline run as for any model.
  const ParseCache cache = ParseCache::Read(root, project.dialect);
  ParallelFor(models.size(), [&](size_t m) {
    LoadedModel& model = models[m];
    const PipelineLoad& load = loads[model.pipeline_index];
    const std::string& file = *model.file;
    ModelFileKey file_key;
    ParsedModel parsed;
    ColumnList columns;  // the contract's output columns, as the asset holds them
    bool aggregate = false;
    bool from_cache = false;
    try {
      if (prepared.empty() || model.text.empty()) model.text = root_folder.ReadListedFile(file);
      if (ParseCache::Enabled()) {
        file_key = ModelFileKey::Of(model.text);
        if (std::optional<CachedBodyAnalysis> cached = cache.Find(file, file_key, m)) {  // written in model order
          if (std::optional<ParsedModel> reparsed =
                  ParseModelFileWithReferences(file, model.text, std::move(cached->references))) {
            parsed = std::move(*reparsed);
            aggregate = cached->aggregate;
            model.anchor_candidate = cached->anchor_candidate;
            columns = std::move(cached->columns);
            model.lineage_modes = cached->lineage_modes;
            model.reused_cache_entry = cached->entry;
            from_cache = true;
          }
        }
      }
      if (!from_cache) {
        parsed = ParseModelFile(file, model.text, project.dialect, [&](size_t begin, size_t end) {
          if (!prepared.empty()) {
            PreparedBody& body = prepared[m];
            if (begin == body.begin && end == model.text.size()) {
              if (body.error) std::rethrow_exception(body.error);
              if (body.expanded) return std::move(*body.expanded);
            }
          }
          return project.macros->Expand(file, model.text, begin, end, load.macro_context);
        });
      }
      if (load.config.mode != PipelineMode::kVirtual) {
        for (const char* key : {"replay_on_change", "bounded_replay_fallback"}) {
          if (const HeaderEntry* entry = FindEntry(parsed.header, key)) {
            CheckModelReplayPolicy(load.config, file, model.text, ModelReplayPolicy{key, entry->key_offset});
          }
        }
      }
    } catch (const Error&) {
      model.error = std::current_exception();
      return;
    }
    if (!from_cache) {  // else the contract's products came from the cache
      try {
        ModelContract contract = CheckContract(parsed, model.text, project.dialect);
        // The output columns take the asset's form here, in parallel; which lineage modes the columns satisfy is
        // noted before they are freed (the pipeline's mode is known later).
        aggregate = contract.aggregate;
        model.anchor_candidate = contract.anchor_candidate;
        model.lineage_modes = LineageModesOf(contract, project.dialect);
        columns = ColumnListOf(contract.columns);
        if (ParseCache::Enabled() && parsed.expanded_text.empty()) {
          model.new_cache_entry = EncodeParseCacheEntry(file, file_key, parsed.references, columns, aggregate,
                                                        model.anchor_candidate, model.lineage_modes);
        }
      } catch (const Error&) {
        model.contract_error = std::current_exception();
      }
    }
    model.audits = AuditDeclarationsFromHeader(parsed.header);
    if (!model.audits.audits && model.audits.columns.empty()) std::string().swap(model.text);
    // The model's asset: what the pipeline gives it and what the parse found. Its references are resolved
    // once every model's name is known (below); until then their upstream keys are empty.
    Asset& asset = assets[places.model_place[m]];
    try {
      asset.key = AssetKey::Of(load.name_space, parsed.name);
    } catch (const Error&) {
      model.key_error = std::current_exception();
    }
    model.name = std::move(parsed.name);
    const std::string& prefix = parsed.kind == ModelKind::kView ? load.view_prefix : load.table_prefix;
    asset.relation_name = parsed.relation_name ? std::move(*parsed.relation_name) : prefix + model.name;
    asset.pipeline = pipeline_files[model.pipeline_index].name;
    asset.description = std::move(parsed.description);
    asset.partitions = std::move(parsed.partitions);
    asset.defined_at = SourceLocation{std::move(parsed.file), 1, 1};
    SqlCompute compute{parsed.kind, std::move(parsed.body), parsed.body_offset, {}, std::move(parsed.storage)};
    compute.references.reserve(parsed.references.size());
    for (ModelReference& ref : parsed.references) {
      compute.references.push_back(ResolvedReference{std::move(ref.call), AssetKey(), ref.edge, std::move(ref.at)});
    }
    compute.columns = std::move(columns);
    compute.aggregate = aggregate;
    asset.compute = std::move(compute);
  });

  MarkPhase("models parsed");
  // The serial pass: pipelines and their models in order, names checked across the project.
  NameIndex model_index(models.size());  // model name → index in `models`
  std::vector<Pipeline> pipelines;
  bool any_virtual_pipeline = false;
  std::map<std::string, PipelineMode> pipeline_modes;
  // Pipeline p's models follow one another in `models` from model_begin[p], in file order; where that is also the
  // order of pipeline.models (names_in_file_order[p]), passes over a pipeline's models need no name lookups.
  std::vector<size_t> model_begin(pipeline_files.size(), 0);
  std::vector<bool> names_in_file_order(pipeline_files.size(), true);
  size_t next_model = 0;
  for (size_t p = 0; p < pipeline_files.size(); ++p) {
    model_begin[p] = next_model;
    const PipelineFiles& files = pipeline_files[p];
    const PipelineLoad& load = loads[p];
    if (load.error) std::rethrow_exception(load.error);
    any_virtual_pipeline = any_virtual_pipeline || load.config.mode == PipelineMode::kVirtual;
    pipeline_modes.emplace(files.name, load.config.mode);
    Pipeline pipeline{files.name, files.directory, load.name_space, {}, {}};
    pipeline.models.reserve(files.model_files.size());
    for (size_t f = 0; f < files.model_files.size(); ++f, ++next_model) {
      LoadedModel& model = models[next_model];
      const std::string& file = *model.file;
      if (model.error) std::rethrow_exception(model.error);
      const std::string& name = model.name;
      if (auto [first, added] = model_index.Insert(name, next_model); !added) {
        throw Error(Diagnostic{"SLU-PROJECT-003",
                               "model '" + name + "' is defined twice: " + *models[first].file + " and " + file,
                               {file, 1, 1},
                               "model names (file stems) are unique across the project",
                               {}});
      }
      if (sources.count(name)) {
        throw Error(Diagnostic{"SLU-PROJECT-004",
                               "'" + name + "' names both a model and a source",
                               {file, 1, 1},
                               "rename the model file or the source",
                               {}});
      }
      pipeline.models.push_back(name);
    }
    // Usually in order already: the files are sorted, and their stems mostly sort the same way.
    if (!std::is_sorted(pipeline.models.begin(), pipeline.models.end())) {
      std::sort(pipeline.models.begin(), pipeline.models.end());
      names_in_file_order[p] = false;
    }
    pipelines.push_back(std::move(pipeline));
  }
  CheckProjectReplayPolicy(project.config, project.target, any_virtual_pipeline);

  MarkPhase("models checked");
  if (source_key_error) std::rethrow_exception(source_key_error);
  for (const LoadedModel& model : models) {
    if (model.key_error) std::rethrow_exception(model.key_error);
  }
  // Resolve each model's references against the keys (a model's asset is assets[places.model_place[its index in
  // `models`]], which model_index gives by name; a source's is assets[places.source_place[its index in
  // project.sources]]). The graph checks below read the upstream asset each reference resolved to
  // (reference_upstream, a model's run starting at reference_begin) and each model's driving input
  // (driving_upstream) by index, not by name; Definitions takes each dependency's (dep_upstream, the same runs).
  // The first model (in order) with an unknown reference is the one reported.
  auto source_asset = [&](const std::string& name) {
    auto it = sources.find(name);
    return it == sources.end() ? kNoAsset
                               : places.source_place[static_cast<size_t>(it->second - project.sources.data())];
  };
  auto references_of = [&](size_t m) -> std::vector<ResolvedReference>& {
    return std::get<SqlCompute>(assets[places.model_place[m]].compute).references;
  };
  std::vector<size_t> reference_begin(models.size() + 1, 0);
  for (size_t m = 0; m < models.size(); ++m) reference_begin[m + 1] = reference_begin[m] + references_of(m).size();
  std::vector<size_t> reference_upstream(reference_begin.back(), kNoAsset);
  std::vector<size_t> dep_upstream(reference_begin.back(), kNoAsset);
  std::vector<size_t> driving_upstream(models.size(), kNoAsset);
  ParallelFor(models.size(), [&](size_t m) {
    Asset& asset = assets[places.model_place[m]];
    std::vector<ResolvedReference>& references = references_of(m);
    asset.deps.reserve(references.size());
    for (size_t r = 0; r < references.size(); ++r) {
      ResolvedReference& ref = references[r];
      const std::string& name = ref.call.name;
      size_t upstream = kNoAsset;
      if (ref.call.kind == sql::ReferenceKind::kSource) {
        upstream = source_asset(name);
      } else if (size_t m_upstream = model_index.Find(name); m_upstream != NameIndex::kNone) {
        upstream = places.model_place[m_upstream];
      } else {
        upstream = source_asset(name);
      }
      if (upstream == kNoAsset) {
        std::string what = ref.call.kind == sql::ReferenceKind::kSource ? "source" : "model or source";
        FailAt(root, models[m], ref.at, "SLU-GRAPH-002", "unknown " + what + " '" + name + "'",
               ref.call.kind == sql::ReferenceKind::kSource
                   ? "declare it in sources/*.yml"
                   : "add pipelines/<pipeline>/" + name + ".sql or declare a source");
      }
      reference_upstream[reference_begin[m] + r] = upstream;
      const AssetKey& key = assets[upstream].key;  // set by the parse, never written by this loop
      ref.upstream = key;
      auto existing = std::find_if(asset.deps.begin(), asset.deps.end(),
                                   [&](const AssetDependency& dep) { return dep.upstream == key; });
      if (existing == asset.deps.end()) {
        dep_upstream[reference_begin[m] + asset.deps.size()] = upstream;
        asset.deps.push_back(AssetDependency{key, ref.edge});
        if (ref.edge == EdgeType::kDrivingInput) driving_upstream[m] = upstream;
      }
    }
  });

  // Physical relation names — the assets' own and the generated kafka__/raw__/mv__ objects — are unique per
  // namespace. Several sources may adopt one table (with identical boundaries, checked by the sources loader).
  // Every claim in load order (the sources', then the models') — an asset's relation_name, then its generated
  // objects — then the first claim whose key an earlier one holds fails. A claim is its asset's index and the prefix of
  // its name; the table holds claim indexes by key hash and confirms a key by rebuilding it from the asset.
  struct Claim {
    uint32_t asset;
    uint8_t prefix;  // into kClaimPrefixes; 0 names the relation_name, the others prefix the asset's name
  };
  static constexpr std::string_view kClaimPrefixes[] = {"", "mv__", "kafka__"};
  auto key_of = [&](const Claim& claim) {
    const Asset& asset = assets[claim.asset];
    return RelationKey{asset.key.name_space(), kClaimPrefixes[claim.prefix],
                       claim.prefix == 0 ? std::string_view(asset.relation_name) : std::string_view(asset.name())};
  };
  std::vector<Claim> claims;
  claims.reserve(assets.size() * 2);
  for (size_t loaded = 0; loaded < assets.size(); ++loaded) {
    const size_t place = loaded < project.sources.size() ? places.source_place[loaded]
                                                         : places.model_place[loaded - project.sources.size()];
    const Asset& asset = assets[place];
    const auto at = static_cast<uint32_t>(place);
    claims.push_back(Claim{at, 0});
    if (const auto* sql = std::get_if<SqlCompute>(&asset.compute); sql && sql->kind == ModelKind::kTable) {
      claims.push_back(Claim{at, 1});
    }
    if (std::holds_alternative<KafkaSource>(asset.compute)) {
      claims.push_back(Claim{at, 2});
      claims.push_back(Claim{at, 1});
    }
  }
  HashedIndex relations(claims.size());
  for (size_t c = 0; c < claims.size(); ++c) {
    const RelationKey key = key_of(claims[c]);
    auto [holder, inserted] =
        relations.Insert(RelationKeyHash()(key), c, [&](size_t other) { return key_of(claims[other]) == key; });
    if (inserted) continue;
    const Asset& asset = assets[claims[c].asset];
    const Asset& other = assets[claims[holder].asset];
    bool both_adopted =
        std::holds_alternative<ExternalTable>(asset.compute) && std::holds_alternative<ExternalTable>(other.compute);
    if (!both_adopted) {
      throw Error(Diagnostic{"SLU-PROJECT-005",
                             "relation " + asset.key.name_space() + "." + std::string(key.prefix) +
                                 std::string(key.name) + " is used by both " + other.key.ToString() + " and " +
                                 asset.key.ToString(),
                             asset.defined_at,
                             "set relation_name on one of them",
                             {}});
    }
  }

  // Views are terminal, and direct and virtual pipelines do not read each other's models.
  for (size_t m = 0; m < models.size(); ++m) {
    const LoadedModel& model = models[m];
    const auto& references = std::get<SqlCompute>(assets[places.model_place[m]].compute).references;
    for (size_t r = 0; r < references.size(); ++r) {
      size_t upstream_index = reference_upstream[reference_begin[m] + r];
      const size_t upstream_model = places.model_at[upstream_index];
      if (upstream_model == AssetPlaces::kNoModel) continue;  // a source
      const Asset& upstream = assets[upstream_index];
      const ResolvedReference& ref = references[r];
      if (std::get<SqlCompute>(upstream.compute).kind == ModelKind::kView) {
        FailAt(root, model, ref.at, "SLU-GRAPH-005",
               "'" + model.name + "' reads the view '" + upstream.name() + "'; views are terminal",
               "make " + upstream.name() + " a table (kind table), or read what the view reads");
      }
      PipelineMode mode = loads[model.pipeline_index].config.mode;
      PipelineMode upstream_mode = loads[models[upstream_model].pipeline_index].config.mode;
      if (mode != upstream_mode) {
        FailAt(root, model, ref.at, "SLU-GRAPH-006",
               "'" + model.name + "' (" + PipelineModeName(mode) + " pipeline " +
                   pipeline_files[model.pipeline_index].name + ") reads '" + upstream.name() + "' of the " +
                   PipelineModeName(upstream_mode) + " pipeline " + upstream.pipeline,
               "direct and virtual pipelines cannot depend on each other; give both pipelines the same mode");
      }
    }
  }

  // Pipeline source inference: follow each table model's driving input until a source. Every asset walked
  // remembers the answer (the source's asset index, or kNoAsset), so all walks together stay linear in the
  // assets (a 100,000-model chain is walked once, not once per model). A walk is bounded by the number of
  // assets, so a driving cycle stops it (the Definitions constructor reports the cycle).
  constexpr size_t kNotWalked = kNoAsset - 1;
  std::vector<size_t> driving_sources(assets.size(), kNotWalked);
  std::vector<size_t> walked;
  auto driving_source = [&](size_t start) {
    walked.clear();
    size_t source = kNoAsset;
    size_t at = start;
    for (size_t steps = 0; steps <= assets.size(); ++steps) {
      if (driving_sources[at] != kNotWalked) {
        source = driving_sources[at];
        break;
      }
      walked.push_back(at);
      if (assets[at].is_source()) {
        source = at;
        break;
      }
      at = driving_upstream[places.model_at[at]];
      if (at == kNoAsset) break;
    }
    for (size_t asset : walked) driving_sources[asset] = source;
    return source;
  };
  for (size_t p = 0; p < pipelines.size(); ++p) {
    Pipeline& pipeline = pipelines[p];
    const Asset* first_model = nullptr;
    for (size_t k = 0; k < pipeline.models.size(); ++k) {
      const std::string& name = pipeline.models[k];
      const size_t m = names_in_file_order[p] ? model_begin[p] + k : model_index.Find(name);
      const Asset& asset = assets[places.model_place[m]];
      if (std::get<SqlCompute>(asset.compute).kind == ModelKind::kView) continue;
      size_t source_index = driving_source(places.model_place[m]);
      if (source_index == kNoAsset) continue;
      const std::string& source = assets[source_index].name();
      if (!pipeline.source) {
        pipeline.source = source;
        first_model = &asset;
      } else if (*pipeline.source != source) {
        SourceLocation at = asset.defined_at;
        for (const auto& ref : std::get<SqlCompute>(asset.compute).references) {
          if (ref.edge == EdgeType::kDrivingInput) at = ref.at;
        }
        FailAt(root, models[m], at, "SLU-GRAPH-003",
               "pipeline '" + pipeline.name + "' reads two sources: " + *pipeline.source + " (through " +
                   first_model->name() + ") and " + source + " (through " + name + ")",
               "every pipeline resolves to exactly one source; move " + name + " to a pipeline of its own");
      }
    }
  }
  // naming.pipeline_naming_macro confirms each pipeline's name; it never renames.
  if (const auto& naming_macro = project.target.naming.pipeline_naming_macro) {
    for (const Pipeline& pipeline : pipelines) {
      PipelineNamingContextValues context{pipeline.name, pipeline.source, pipeline.models, pipeline.directory,
                                          PipelineModeName(pipeline_modes.at(pipeline.name))};
      project.macros->CheckPipelineName(*naming_macro, context, SourceLocation{pipeline.directory, 0, 0});
    }
  }

  // The SQL body contract, now that each pipeline's replay lineage mode is known.
  std::vector<LineageMode> lineage;  // by pipeline index, as `pipelines` is
  lineage.reserve(pipelines.size());
  for (const Pipeline& pipeline : pipelines) {
    LineageMode mode = LineageMode::kOffsets;
    if (pipeline.source) {
      std::visit(
          [&](const auto& compute) {
            using T = std::decay_t<decltype(compute)>;
            if constexpr (std::is_same_v<T, KafkaSource> || std::is_same_v<T, ExternalTable>) {
              mode = LineageModeNamed(compute.replay_mode).value_or(LineageMode::kOffsets);
            }
          },
          sources.at(*pipeline.source)->compute);
    }
    lineage.push_back(mode);
  }
  for (size_t m = 0; m < models.size(); ++m) {
    LoadedModel& model = models[m];
    if (model.contract_error) std::rethrow_exception(model.contract_error);
    auto& compute = std::get<SqlCompute>(assets[places.model_place[m]].compute);
    compute.anchor_eligible =
        model.anchor_candidate && (model.lineage_modes & LineageModeBit(lineage[model.pipeline_index])) != 0;
  }

  MarkPhase("graph checks and contracts");
  // SQL tests and audits.
  ChecksInput checks{root, project.dialect, {}, {}, project.config.defaults.audits, {}, {}};
  for (const SourceDeclaration& source : project.sources) checks.sources.push_back(source.name);
  // The model texts and references move into the checks input (nothing below reads them from `models`; the
  // graph's error path below finds the texts there); bodies and columns are viewed in the assets, which stay
  // put until Definitions takes them, after the checks are compiled.
  // Filled in parallel: each entry reads its model's asset, which is far from the last one's in memory.
  checks.models.reserve(models.size());
  PrefaultInParallel(checks.models.data(), models.size() * sizeof(ModelCheckInput));
  checks.models.resize(models.size());
  ParallelFor(models.size(), [&](size_t m) {
    LoadedModel& model = models[m];
    const Asset& asset = assets[places.model_place[m]];
    const auto& compute = std::get<SqlCompute>(asset.compute);
    checks.models[m] = ModelCheckInput{
        asset.name(), asset.pipeline, asset.defined_at.file, compute.kind, asset.relation_name, asset.key.name_space(),
        std::move(model.text), compute.body, &compute.references, &compute.columns, std::move(model.audits)};
  });
  for (size_t p = 0; p < pipeline_files.size(); ++p) {
    checks.pipeline_audit_defaults.try_emplace(pipeline_files[p].name, loads[p].config.audit_defaults);
  }
  MacroContextValues check_context = MacroContextFor(project, PipelineConfig{}, project.target.database);
  checks.expand_macros = [&](const std::string& file, const std::string& text, size_t begin, size_t end) {
    return project.macros->Expand(file, text, begin, end, check_context);
  };
  project.checks = CompileTestsAndAudits(checks);
  for (ModelCheckInput& model : checks.models) {  // the views of the assets end here
    model.name = model.pipeline = model.file = model.relation_name = model.name_space = model.body = {};
    model.references = nullptr;
    model.columns = nullptr;
  }

  MarkPhase("tests and audits");
  // The assets are in key order (PlaceAssets) and their dependencies resolved: Definitions takes each
  // dependency's upstream place, place by place (sources depend on nothing).
  std::vector<size_t> resolved_upstreams;
  resolved_upstreams.reserve(dep_upstream.size());
  for (size_t place = 0; place < assets.size(); ++place) {
    const size_t m = places.model_at[place];
    if (m == AssetPlaces::kNoModel) continue;
    const auto run = dep_upstream.begin() + static_cast<std::ptrdiff_t>(reference_begin[m]);
    resolved_upstreams.insert(resolved_upstreams.end(), run,
                              run + static_cast<std::ptrdiff_t>(assets[place].deps.size()));
  }
  try {
    project.definitions = Definitions(std::move(assets), std::move(pipelines), std::move(resolved_upstreams));
    MarkPhase("definitions");
  } catch (const Error& error) {
    // Graph errors are located in model files; add the offending line for the caret snippet.
    std::vector<Diagnostic> diagnostics = error.diagnostics();
    for (Diagnostic& diagnostic : diagnostics) {
      const std::string& file = diagnostic.location.file;
      if (size_t m = model_index.Find(std::filesystem::path(file).stem().string());
          m != NameIndex::kNone && *models[m].file == file) {
        diagnostic = MakeDiagnostic(diagnostic.code, diagnostic.message, diagnostic.location, diagnostic.hint,
                                    TextForDiagnostic(root, file, checks.models[m].text));
      }
    }
    throw Error(std::move(diagnostics));
  }
  // The parse cache is brought up to date only after a successful load (a failing project keeps the previous
  // cache): the entries of the models this load parsed are appended, or every entry is written anew
  // (ParseCache::UpdateFor decides).
  if (ParseCache::Enabled()) {
    std::vector<std::string_view> entries;  // every model's, for a rewrite
    std::vector<std::string_view> fresh;    // the ones this load encoded, for an append
    entries.reserve(models.size());
    size_t fresh_bytes = 0;
    for (const LoadedModel& model : models) {
      if (!model.new_cache_entry.empty()) {
        entries.push_back(model.new_cache_entry);
        fresh.push_back(model.new_cache_entry);
        fresh_bytes += model.new_cache_entry.size();
      } else if (!model.reused_cache_entry.empty()) {
        entries.push_back(model.reused_cache_entry);
        ++project.models_from_parse_cache;
      }
    }
    switch (cache.UpdateFor(project.models_from_parse_cache, fresh.size(), fresh_bytes)) {
      case ParseCacheUpdate::kNone:
        break;
      case ParseCacheUpdate::kAppend:
        if (AppendParseCache(root, project.dialect, fresh)) {
          MarkPhase("parse cache appended");
          break;
        }
        [[fallthrough]];
      case ParseCacheUpdate::kRewrite:
        WriteParseCache(root, project.dialect, entries);
        MarkPhase("parse cache written");
        break;
    }
  }
  project.load_scratch = Retain(std::move(models), std::move(checks), std::move(relations), std::move(model_index));
  return project;
}

}  // namespace sluice
