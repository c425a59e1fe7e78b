#include "cli/project_context.hpp"

#include <cstdio>

namespace sluice::cli {

namespace {

LoadOptions LoadOptionsFor(const GlobalOptions& global) {
  LoadOptions options;
  options.target = global.target;
  options.vars_json = global.vars_json;
  options.database = global.database;
  options.connection = ConnectionFlags{global.host, global.port, global.username, global.password};
  return options;
}

}  // namespace

std::filesystem::path ProjectRootFor(const GlobalOptions& global) { return FindProjectRoot(global.project_dir); }

ProjectSettings LoadSettingsFor(const GlobalOptions& global) {
  return LoadProjectSettings(ProjectRootFor(global), LoadOptionsFor(global));
}

const Project& LoadProjectFor(const GlobalOptions& global) {
  static const Project* project = nullptr;  // reachable, for leak checkers
  project = new Project(LoadProject(ProjectRootFor(global), LoadOptionsFor(global)));
  return *project;
}

WarehouseConfig WarehouseConfigFor(const ProjectSettings& project, AccessMode mode) {
  WarehouseConfig config;
  config.adapter = project.target.adapter;
  config.connection = ExpandConnection(project.target);  // connection templates expand only when connecting
  // A server's current database is the target's; DuckDB names its namespaces in each relation instead.
  if (config.adapter != "duckdb") config.connection["database"] = project.target.database;
  config.project_dir = project.root;
  config.target = project.target.name;
  config.mode = mode;
  config.wait.on_wait = [](const std::string& message) {
    std::fprintf(stderr, "%s\n", message.c_str());
    std::fflush(stderr);
  };
  return config;
}

nlohmann::json DiagnosticJson(const Diagnostic& diagnostic) {
  return {{"code", diagnostic.code},
          {"message", diagnostic.message},
          {"file", diagnostic.location.file},
          {"line", diagnostic.location.line},
          {"column", diagnostic.location.column},
          {"hint", diagnostic.hint}};
}

std::string FormatCount(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

}  // namespace sluice::cli
