// starlake: commands over what Starlake generates. `sluice starlake import FILE` reads a task_deps JSON or a
// generated Dagster DAG module (orchestrate/starlake_dag_file.hpp) and prints its job graph
// (orchestrate/starlake_job_graph.hpp); it writes nothing.
#include <cstdio>
#include <filesystem>
#include <string>

#include "cli/commands.hpp"
#include "orchestrate/starlake_dag_file.hpp"
#include "orchestrate/starlake_job_graph.hpp"

namespace sluice::cli {

int StarlakeImport(const StarlakeImportOptions& options) {
  const orchestrate::StarlakeJobGraph graph =
      orchestrate::BuildStarlakeJobGraph(orchestrate::ReadStarlakeDagFile(std::filesystem::path(options.file)));
  const std::string text =
      options.json ? orchestrate::JobGraphJson(graph).dump(2) + "\n" : orchestrate::DescribeJobGraph(graph);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

}  // namespace sluice::cli
