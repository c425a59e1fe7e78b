#include "service/workspace.hpp"

#include <cstdio>
#include <mutex>

#include "project/config/project_config.hpp"
#include "sdk/sdk_definitions.hpp"
#include "service/request_error.hpp"
#include "service/warehouse_settings.hpp"

namespace sluice::service {

namespace {

LoadOptions LoadOptionsFor(const WorkspaceOptions& global) {
  LoadOptions options;
  options.target = global.target;
  options.vars_json = global.vars_json;
  options.database = global.database;
  options.connection = ConnectionFlags{global.host, global.port, global.username, global.password};
  return options;
}

// A wait for another process holding the warehouse, announced on stderr.
void AnnounceWait(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
}

// The code program and what it has built so far; set once by UseCodeProgram, then read by one command.
struct CodeState {
  CodeProgram program;
  std::once_flag built;
  std::optional<dagster::Definitions> definitions;
  LazyWarehouseSettings settings{ProcessEnvironment()};
};
CodeState* code_state = nullptr;  // reachable, for leak checkers

// The SQL-model project a code program's definitions name, relative to the working directory.
std::optional<std::filesystem::path> CodeSqlProject() {
  const std::string& folder = CodeDefinitions().sql_project;
  if (folder.empty()) return std::nullopt;
  return std::filesystem::absolute(folder).lexically_normal();
}

}  // namespace

void UseCodeProgram(CodeProgram program) {
  code_state = new CodeState;
  code_state->program = std::move(program);
}

const CodeProgram* ActiveCodeProgram() { return code_state != nullptr ? &code_state->program : nullptr; }

const dagster::Definitions& CodeDefinitions() {
  std::call_once(code_state->built, [] { code_state->definitions = code_state->program.definitions(); });
  return *code_state->definitions;
}

std::string ProgramName() { return code_state != nullptr ? code_state->program.name : "sluice"; }

std::filesystem::path ProjectRootFor(const WorkspaceOptions& global) {
  if (code_state != nullptr) {
    if (global.project_dir) return std::filesystem::absolute(*global.project_dir).lexically_normal();
    return CodeSqlProject().value_or(std::filesystem::current_path());
  }
  return FindProjectRoot(global.project_dir);
}

ProjectSettings LoadSettingsFor(const WorkspaceOptions& global) {
  if (code_state == nullptr) return LoadProjectSettings(ProjectRootFor(global), LoadOptionsFor(global));
  if (std::optional<std::filesystem::path> sql = CodeSqlProject()) {
    return LoadProjectSettings(*sql, LoadOptionsFor(global));
  }
  const WarehouseSettings& warehouse = code_state->settings.Get();
  ProjectSettings settings;
  settings.root = ProjectRootFor(global);
  settings.config.name = code_state->program.name;
  settings.target.name = "sdk";
  settings.target.adapter = warehouse.engine;
  settings.target.database = warehouse.default_namespace;
  return settings;
}

InspectionReport InspectCodeProgram(const WorkspaceOptions& global, std::optional<Project>& models) {
  if (std::optional<std::filesystem::path> sql = CodeSqlProject()) {
    LoadOptions options = LoadOptionsFor(global);
    for (const dagster::AssetsDefinition& asset : CodeDefinitions().assets) {
      options.code_asset_keys.push_back(asset.spec.key.path);  // its models may read them
    }
    models = LoadProject(*sql, options);
  }
  return sdk::InspectCode(CodeDefinitions(), models ? &models->definitions : nullptr);
}

const Project& LoadProjectFor(const WorkspaceOptions& global) {
  static const Project* project = nullptr;  // reachable, for leak checkers
  if (code_state == nullptr) {
    project = new Project(LoadProject(ProjectRootFor(global), LoadOptionsFor(global)));
    return *project;
  }
  // Inspection first: definitions it rejects are refused before the environment is read.
  std::optional<Project> models;
  InspectionReport report = InspectCodeProgram(global, models);
  if (!report.ok()) {
    std::vector<Diagnostic> rejected;
    for (const InspectionFinding& finding : report.rejected) rejected.push_back(finding.diagnostic);
    throw Error(std::move(rejected));
  }
  ProjectSettings settings = LoadSettingsFor(global);
  Project* code_project = new Project{std::move(settings), Definitions(), {}};
  if (models) {
    code_project->warnings = std::move(models->warnings);
    code_project->definitions = sdk::ToDefinitions(CodeDefinitions(), models->target.database, &models->definitions);
  } else {
    code_project->definitions = sdk::ToDefinitions(CodeDefinitions(), code_project->target.database);
  }
  project = code_project;
  return *project;
}

WarehouseConfig WarehouseConfigFor(const ProjectSettings& project, AccessMode mode) {
  if (code_state != nullptr && !CodeSqlProject()) {
    WarehouseConfig config = code_state->settings.Get().config;
    config.mode = mode;
    config.wait.on_wait = AnnounceWait;
    return config;
  }
  WarehouseConfig config;
  config.adapter = project.target.adapter;
  config.connection = ExpandConnection(project.target);  // connection templates expand only when connecting
  // A server's current database is the target's; DuckDB names its namespaces in each relation instead.
  if (config.adapter != "duckdb") config.connection["database"] = project.target.database;
  config.project_dir = project.root;
  config.target = project.target.name;
  config.mode = mode;
  config.wait.on_wait = AnnounceWait;
  return config;
}

std::unique_ptr<StateStore> OpenStateStoreFor(const WorkspaceOptions& global) {
  if (code_state != nullptr && !CodeSqlProject()) return OpenStateStore(ProjectRootFor(global));
  return OpenStateStore(ProjectRootFor(global), [&]() -> std::optional<std::string> {
    std::optional<ProjectSettings> settings;
    try {
      settings = LoadSettingsFor(global);
    } catch (const Error& error) {
      // History commands work while the settings are broken; the project's [state] url can't be known then, so they
      // read the default store and say so. The settings error itself is reported by the command that needs them.
      std::fprintf(stderr, "%s",
                   FormatWarning("the project's settings cannot be read (" + error.diagnostics().front().code +
                                 "), so its [state] url is not known: reading .sluice/state.db; set " +
                                 kStateUrlVariable + " to read another state store")
                       .c_str());
      return std::nullopt;
    }
    return ExpandStateUrl(settings->config, settings->target);
  });
}

std::unique_ptr<StateStore> OpenStateStoreFor(const ProjectSettings& project) {
  return OpenStateStore(project.root, [&] { return ExpandStateUrl(project.config, project.target); });
}

void CheckVarsOverride(const std::string& vars_json) {
  CheckingArguments([&] { return ParseVarsOverride(vars_json); });
}

nlohmann::json DiagnosticJson(const Diagnostic& diagnostic) {
  return {
      {"code", diagnostic.code},          {"message", diagnostic.message},        {"file", diagnostic.location.file},
      {"line", diagnostic.location.line}, {"column", diagnostic.location.column}, {"hint", diagnostic.hint}};
}

}  // namespace sluice::service
