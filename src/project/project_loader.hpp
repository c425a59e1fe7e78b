// Loads a StreamBuild-layout project into Definitions (reference §2): streambuild_project.toml (+ optional
// streambuild_local.toml), sources/*.yml, pipelines/<name>/**/*.sql (+ optional pipeline.toml).
//
// Resolution: each `__source("x")` names a source, each `__ref("x")` a model or a source; every table
// model's driving chain must reach a source, and all table models of a pipeline the same one.
// Errors: SLU-PROJECT-001 no project found, -002 pipeline without models, -003 duplicate model name,
// -004 name shared by a model and a source, -005 two relations with one physical name;
// SLU-GRAPH-002 unknown reference, -001 cycle, -003 two sources for one pipeline; plus the errors of
// project_config, source_loader, model_loader and header_grammar. Each is one located diagnostic.
// Thread-safety: pure function over files.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "definitions/definitions.hpp"
#include "project/macros/macro_engine.hpp"
#include "project/model_loader.hpp"
#include "project/project_config.hpp"
#include "project/source_loader.hpp"
#include "project/tests_audits.hpp"
#include "sql/token.hpp"

namespace sluice {

struct Project {
  std::filesystem::path root;
  ProjectConfig config;
  TargetSettings target;
  sql::Dialect dialect = sql::Dialect::kClickHouse;
  std::vector<SourceDeclaration> sources;  // sorted by name
  Definitions definitions;
  std::shared_ptr<const MacroEngine> macros;  // never null; starts Python only when macros/ has files
  CompiledChecks checks;                      // SQL tests and audits, compiled
  size_t models_from_parse_cache = 0;         // models whose body analysis the parse cache gave (parse_cache.hpp)
  // What analysis built on the way and nothing reads afterwards (parsed models, texts, lookup tables), freed
  // with the project rather than as the loader returns: a command-line process that never frees its project
  // (cli/project_context.cpp) then never pays for freeing them either.
  std::shared_ptr<void> load_scratch;
};

// --target, --vars, --database, --host/--port/--username/--password and the environment lookup
// (ConfigInputs, project_config.hpp).
using LoadOptions = ConfigInputs;

// `project_dir` when given, else the nearest folder upward from the working directory holding
// streambuild_project.toml. Throws SLU-PROJECT-001.
std::filesystem::path FindProjectRoot(const std::optional<std::filesystem::path>& project_dir);

Project LoadProject(const std::filesystem::path& root, const LoadOptions& options);

}  // namespace sluice
