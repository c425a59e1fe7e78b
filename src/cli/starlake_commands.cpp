// starlake and pipelines: commands over what Starlake generates and the Sluice pipeline files made from it.
// `sluice starlake import FILE` reads a task_deps JSON or a generated Dagster DAG module
// (orchestrate/starlake_dag_file.hpp) and writes its Sluice pipeline file (orchestrate/pipeline_file.hpp), or with
// --json prints its job graph (orchestrate/starlake_job_graph.hpp) and writes nothing. `sluice pipelines validate`
// reads a folder of pipeline files and prints each one's jobs, or every file's located errors.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "core/diagnostic.hpp"
#include "orchestrate/pipeline_file.hpp"
#include "orchestrate/starlake_dag_file.hpp"
#include "orchestrate/starlake_job_graph.hpp"

namespace sluice::cli {

namespace {

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

int StarlakeImport(const StarlakeImportOptions& options) {
  const orchestrate::StarlakeDagFile file = orchestrate::ReadStarlakeDagFile(std::filesystem::path(options.file));
  const orchestrate::StarlakeJobGraph graph = orchestrate::BuildStarlakeJobGraph(file);
  if (options.json) {
    Print(orchestrate::JobGraphJson(graph).dump(2) + "\n");
    return 0;
  }
  const orchestrate::SavedPipelineFile saved =
      orchestrate::SavePipelineFile(file, std::filesystem::path(options.output), options.force);
  switch (saved.outcome) {
    case orchestrate::PipelineSave::kCreated: Print("wrote " + saved.path.string() + "\n"); break;
    case orchestrate::PipelineSave::kReplaced: Print("replaced " + saved.path.string() + "\n"); break;
    case orchestrate::PipelineSave::kUnchanged: Print(saved.path.string() + " is up to date\n"); break;
  }
  Print(orchestrate::DescribeJobGraph(graph));
  return 0;
}

int PipelinesValidate(const PipelinesValidateOptions& options) {
  std::vector<Diagnostic> errors;
  orchestrate::StarlakeJobGraph all;
  std::string text;
  const std::vector<orchestrate::PipelineFolderEntry> entries =
      orchestrate::ScanPipelineFolder(std::filesystem::path(options.dir));
  for (const orchestrate::PipelineFolderEntry& entry : entries) {
    errors.insert(errors.end(), entry.errors.begin(), entry.errors.end());
    if (!entry.pipeline || !entry.errors.empty()) continue;
    const orchestrate::StarlakeJobGraph graph = orchestrate::BuildStarlakeJobGraph(*entry.pipeline);
    all.jobs.insert(all.jobs.end(), graph.jobs.begin(), graph.jobs.end());
    text += entry.path.string() + ": ok\n" + orchestrate::DescribeJobGraph(graph);
  }
  if (!options.json) {
    Print(entries.empty() ? "no pipeline files (*.yml, *.yaml) in " + options.dir + "\n" : text);
  }
  if (!errors.empty()) {  // the valid files' jobs are printed all the same; main renders the errors on stderr
    SortByLocation(errors);
    throw Error(std::move(errors));
  }
  if (options.json) Print(orchestrate::JobGraphJson(all).dump(2) + "\n");
  return 0;
}

}  // namespace sluice::cli
