#include "compile/artifacts.hpp"

#include <memory>
#include <set>

#include "compile/manifest.hpp"
#include "core/parallel_for.hpp"
#include "core/phase_timer.hpp"
#include "deploy/desired_objects.hpp"
#include "deploy/direct_plan.hpp"
#include "deploy/plan_explainer.hpp"

namespace sluice {

namespace {

// What one model compiles to (rendered on a worker thread). Once the files are collected, its resources keep only
// their kind, name and path, for the manifest.
struct ModelArtifacts {
  std::vector<CompiledResource> resources;
  std::string canonical_sql;
  // Each file's position among the published files when it is published exactly as rendered (its contents are
  // then dropped), else ArtifactPublication::kNotPublished: resources' in order, then the canonical SQL's.
  std::vector<size_t> published;
};

// Everything compile writes: the manifest as a stream, the files a publication already holds as rendered by
// their position only, the rest whole.
struct RenderedArtifacts {
  ArtifactFiles files;
  StreamedArtifacts streamed;
  std::vector<uint8_t> kept;  // by published position: the files published as rendered (empty: none)
};

// `compiled/workflows/<pipeline>/…`: the steps of the whole project's direct plan (every direct pipeline selected,
// rendered for a current ClickHouse, or for DuckDB) that belong to each pipeline, numbered in plan order, with the
// prepare steps each needs.
std::vector<std::pair<std::string, std::string>> WorkflowArtifacts(const Definitions& definitions) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::string& adapter = definitions.project().adapter;
  if (adapter != "clickhouse" && adapter != "duckdb") return out;
  std::vector<std::string> selection;
  for (const Pipeline& pipeline : definitions.pipelines()) {
    if (!pipeline.virtual_mode) selection.push_back("pipeline:" + pipeline.name);
  }
  if (selection.empty()) return out;
  const DirectPlan plan =
      PlanDirect(definitions, selection, adapter == "clickhouse" ? ModernClickHouseCapabilities() : Capabilities{});
  for (const PipelineScope& scope : plan.pipelines) {
    DirectPlan part;
    part.adapter = plan.adapter;
    part.pipelines = {scope};
    part.selection = {"pipeline:" + scope.name};
    for (const std::string& model : scope.models) part.scope.push_back(definitions.FindByName(model)->key);
    std::set<std::string> databases;
    std::vector<PlanStep> steps;
    for (const PlanStep& step : plan.steps) {
      const Asset* asset = step.asset ? definitions.Find(*step.asset) : nullptr;
      if (asset != nullptr && !asset->is_source() && asset->pipeline == scope.name) {
        steps.push_back(step);
        databases.insert(asset->key.name_space());
      }
    }
    std::vector<PlanStep> prepare;
    for (const PlanStep& step : plan.steps) {
      if (step.phase != DeployPhase::kPrepare) continue;
      const Asset* source = step.asset ? definitions.Find(*step.asset) : nullptr;
      const bool needed = source != nullptr ? definitions.FindPipeline(scope.name)->source == source->name()
                                            : step.name_space && databases.count(*step.name_space) > 0;
      if (needed) prepare.push_back(step);
    }
    steps.insert(steps.begin(), prepare.begin(), prepare.end());
    part.steps = std::move(steps);
    for (auto& [path, text] : WorkflowFiles(part)) {
      out.emplace_back("compiled/workflows/" + scope.name + "/" + path, std::move(text));
    }
  }
  return out;
}

// With an incremental publication, a model's file it already holds as rendered is fingerprinted and dropped on
// the rendering thread, so an unchanged project never holds all its files' contents at once.
RenderedArtifacts RenderArtifacts(const Definitions& definitions, const ArtifactPublication* publication) {
  if (publication != nullptr && !publication->incremental()) publication = nullptr;
  auto manifest = std::make_shared<ManifestInputs>();
  manifest->models = ModelsByName(definitions);
  const std::vector<const Asset*>& models = manifest->models;
  std::vector<ModelArtifacts> rendered(models.size());
  ParallelFor(models.size(), [&](size_t m) {
    ModelArtifacts& out = rendered[m];
    out.resources = ModelResources(definitions, *models[m]);
    out.canonical_sql = CanonicalSql(definitions, *models[m]);
    out.published.assign(out.resources.size() + 1, ArtifactPublication::kNotPublished);
    if (publication == nullptr) return;
    auto drop_if_published = [&](const std::string& path, std::string& contents, size_t& published) {
      published = publication->PublishedPosition(path, FingerprintOf(contents));
      if (published != ArtifactPublication::kNotPublished) std::string().swap(contents);
    };
    for (size_t r = 0; r < out.resources.size(); ++r) {
      drop_if_published(out.resources[r].path, out.resources[r].sql, out.published[r]);
    }
    drop_if_published(ModelQueryPath(*models[m]), out.canonical_sql, out.published.back());
  });
  MarkPhase("models rendered");

  RenderedArtifacts result;
  ArtifactFiles& files = result.files;
  if (publication != nullptr) result.kept.assign(publication->published_count(), 0);
  for (const Asset& asset : definitions.assets()) {
    if (!asset.is_source()) continue;
    for (CompiledResource& resource : SourceResources(definitions, asset)) files[resource.path] = std::move(resource.sql);
  }
  // A file published as rendered is marked by its position; the others are kept whole.
  auto collect = [&](std::string path, std::string& contents, size_t published) {
    if (published != ArtifactPublication::kNotPublished) {
      result.kept[published] = 1;
    } else {
      files[std::move(path)] = std::move(contents);
    }
    std::string().swap(contents);
  };
  manifest->resources.reserve(models.size());
  for (size_t m = 0; m < models.size(); ++m) {
    ModelArtifacts& model = rendered[m];
    for (size_t r = 0; r < model.resources.size(); ++r) {
      collect(model.resources[r].path, model.resources[r].sql, model.published[r]);
    }
    collect(ModelQueryPath(*models[m]), model.canonical_sql, model.published.back());
    manifest->resources.push_back(std::move(model.resources));
  }
  for (const AuditSpec& audit : definitions.audits()) files[audit.path] = audit.sql;
  for (const TestSpec& test : definitions.tests()) files[test.path] = test.sql;
  // The direct build's workflow per pipeline, from the plan `build` executes (Sluice's addition).
  for (auto& [path, text] : WorkflowArtifacts(definitions)) files[std::move(path)] = std::move(text);
  // Every compiled path, in order: the map's and the publication's are sorted, so one merge lists them.
  std::vector<std::string_view>& compiled = manifest->compiled_paths;
  compiled.reserve(files.size() + result.kept.size());
  auto file = files.begin();
  for (size_t p = 0; p < result.kept.size(); ++p) {
    if (!result.kept[p]) continue;
    const std::string& path = publication->published_path(p);
    for (; file != files.end() && file->first < path; ++file) compiled.push_back(file->first);
    compiled.push_back(path);
  }
  for (; file != files.end(); ++file) compiled.push_back(file->first);

  DagFile dag = RenderDag(definitions, DagOf(definitions));
  manifest->dag_identity = std::move(dag.identity);
  files["streambuild_dag.json"] = std::move(dag.text);
  result.streamed["manifest.json"] = [&definitions, manifest](const std::function<void(std::string_view)>& sink) {
    StreamManifest(definitions, *manifest, sink);
  };
  return result;
}

}  // namespace

ArtifactFiles BuildArtifacts(const Definitions& definitions) {
  RenderedArtifacts rendered = RenderArtifacts(definitions, nullptr);
  for (const auto& [path, stream] : rendered.streamed) rendered.files[path] = Materialize(stream);
  return std::move(rendered.files);
}

ArtifactSummary WriteArtifacts(const Definitions& definitions, const std::filesystem::path& target_dir) {
  ArtifactPublication publication(target_dir);  // locks the folder and reads its index
  RenderedArtifacts rendered = RenderArtifacts(definitions, &publication);
  MarkPhase("artifacts rendered");  // all but the manifest, which is rendered as it is fingerprinted and written
  const PublishSummary published = publication.Publish(rendered.files, rendered.streamed, rendered.kept);
  MarkPhase("artifacts published");
  ArtifactSummary summary{target_dir.string(), definitions.pipelines().size(), 0, 0, published};
  for (const Asset& asset : definitions.assets()) (asset.is_source() ? summary.sources : summary.models) += 1;
  return summary;
}

}  // namespace sluice
