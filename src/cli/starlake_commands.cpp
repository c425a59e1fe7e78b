// starlake import and pipelines validate (service/project_files.hpp): what was written and the job graph, or with
// --json the graph as JSON.
#include <cstdio>

#include "cli/commands.hpp"
#include "service/project_files.hpp"

namespace sluice::cli {

namespace {

void Print(const std::string& text) { std::fwrite(text.data(), 1, text.size(), stdout); }

}  // namespace

int StarlakeImport(const StarlakeImportOptions& options) {
  const service::StarlakeImport imported =
      service::ImportStarlakeFile(options.file, options.output, options.force, options.json);
  if (options.json) {
    Print(orchestrate::JobGraphJson(imported.graph).dump(2) + "\n");
    return 0;
  }
  const orchestrate::SavedPipelineFile& saved = *imported.saved;
  switch (saved.outcome) {
    case orchestrate::PipelineSave::kCreated:
      Print("wrote " + saved.path.string() + "\n");
      break;
    case orchestrate::PipelineSave::kReplaced:
      Print("replaced " + saved.path.string() + "\n");
      break;
    case orchestrate::PipelineSave::kUnchanged:
      Print(saved.path.string() + " is up to date\n");
      break;
  }
  Print(orchestrate::DescribeJobGraph(imported.graph));
  return 0;
}

int PipelinesValidate(const PipelinesValidateOptions& options) {
  const service::PipelineValidation validation = service::ValidatePipelineFiles(options.dir);
  if (!options.json) {
    std::string text;
    for (const service::ValidPipelineFile& file : validation.valid) {
      text += file.path.string() + ": ok\n" + orchestrate::DescribeJobGraph(file.graph);
    }
    Print(validation.files == 0 ? "no pipeline files (*.yml, *.yaml) in " + options.dir + "\n" : text);
  }
  // The valid files' jobs are printed all the same; main renders the errors on stderr.
  if (!validation.errors.empty()) throw Error(validation.errors);
  if (options.json) Print(orchestrate::JobGraphJson(validation.jobs).dump(2) + "\n");
  return 0;
}

}  // namespace sluice::cli
