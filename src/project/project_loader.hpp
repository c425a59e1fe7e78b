// Loads a StreamBuild-layout project into Definitions (reference §2): streambuild_project.toml (+ optional
// streambuild_local.toml), sources/*.yml, pipelines/<name>/**/*.sql (+ optional pipeline.toml), macros/,
// tests/ and audits/.
//
// The load runs in stages, each in its own function of project_loader.cpp: settings (config, target,
// macros) → sources → pipelines → models (parsed in parallel) → file errors → names → references → graph
// checks → contracts → tests and audits → Definitions. Every rejection is located. Errors that belong to one file
// are reported together, one per file and sorted by file: each sources/*.yml file's first, each seed CSV file's,
// each pipeline's (pipeline.toml or folder) and each model file's first (reading, macros, header, references,
// body contract, partition column); the checks that span files (names, references, the graph, tests and audits)
// run only when there are none, and report their first error. What is reported never depends on thread timing.
//
// Resolution: each `__source("x")` names a source, each `__ref("x")` a model or a source; every table
// model's driving chain must reach a source, and all table models of a pipeline the same one.
// Errors: SLU-PROJECT-001 no project found, -002 pipeline without models, -003 duplicate model name,
// -004 name shared by a model and a source, -005 two relations with one physical name, -006 a pipeline
// without the naming prefix; SLU-CONFIG-007 a target database or naming prefix Sluice cannot use as a name
// (CheckTargetNames); SLU-GRAPH-002 unknown reference, -001 cycle, -003 two sources for one pipeline,
// -005 a model reading a view, -006 direct and virtual pipelines reading each other; plus the errors of
// config/, sources/, models/, checks/, macros/ and header_grammar.
// Thread-safety: pure function over files.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "project/config/project_config.hpp"

namespace sluice {

// What a project says about where it runs, without its models: enough to open its warehouse and state store.
struct ProjectSettings {
  std::filesystem::path root;
  ProjectConfig config;
  TargetSettings target;  // the resolved target: adapter, connection (unexpanded), naming, defaults
};

struct Project : ProjectSettings {
  Definitions definitions;     // everything compile and run need
  std::vector<Diagnostic> warnings;  // e.g. a test mock nothing reads (SLU-TEST-018); file order
};

// --target, --vars, --database, --host/--port/--username/--password and the environment lookup
// (ConfigInputs, project_config.hpp).
using LoadOptions = ConfigInputs;

// `project_dir` when given, else the nearest folder upward from the working directory holding
// streambuild_project.toml. Throws SLU-PROJECT-001.
std::filesystem::path FindProjectRoot(const std::optional<std::filesystem::path>& project_dir);

// streambuild_project.toml and streambuild_local.toml only: works while a model, source or macro file is broken.
ProjectSettings LoadProjectSettings(const std::filesystem::path& root, const LoadOptions& options);

Project LoadProject(const std::filesystem::path& root, const LoadOptions& options);

}  // namespace sluice
