// The opening sequence every operation starts with: the project loaded (its Definitions and settings), its
// warehouse's configuration and its state store. Faces (the CLI, SDK programs, the web UI) pass the user's choices
// as a WorkspaceOptions value; nothing here reads flags or prints, except a wait for another writer and an unreadable
// settings file, announced on stderr.
//
// A program built from C++ definitions (sluice_add_pipeline) is a "code program": its main registers its definitions
// with UseCodeProgram before the commands run, and the functions below then give the commands a project made of those
// definitions — the state store in the working directory's .sluice/ (or --project-dir's), the warehouse and the
// default namespace of one-part keys from SEGMENTSTREAM_WAREHOUSE_* (sdk/warehouse_settings.hpp), read only when a
// command first needs the project or its warehouse. When the definitions name a SQL-model project (sql_project), its
// models join the code assets, and its target's warehouse and database are used instead.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/diagnostic.hpp"
#include "definitions/deployment_inspection.hpp"
#include "project/project_loader.hpp"
#include "sluice/dagster.hpp"
#include "state/open_state_store.hpp"
#include "warehouse/registry.hpp"

namespace sluice::service {

// Which project, target and connection an operation works on: the global choices of every face.
struct WorkspaceOptions {
  std::optional<std::filesystem::path> project_dir;  // unset: the nearest project upward of the working directory
  std::optional<std::string> target;
  std::optional<std::string> vars_json;  // --vars
  std::optional<std::string> database;   // --database
  std::optional<std::string> host;       // --host / --port / --username / --password
  std::optional<int> port;
  std::optional<std::string> username;
  std::optional<std::string> password;
};

struct CodeProgram {
  std::string name;                                   // the program's name, e.g. sdk_orders
  std::function<dagster::Definitions()> definitions;  // called once, when first needed
};

// Makes this process a code program. Call once, before Main.
void UseCodeProgram(CodeProgram program);
// The code program, or nullptr for the sluice binary.
const CodeProgram* ActiveCodeProgram();
// The code program's definitions, built on first use (never reads the environment).
const dagster::Definitions& CodeDefinitions();

// Deployment inspection of the code program's definitions, with the SQL-model project they name (loaded into
// `models`) when they name one. Reads files only: never the environment, never a warehouse.
InspectionReport InspectCodeProgram(const WorkspaceOptions& global, std::optional<Project>& models);

// The name commands print in hints: "sluice", or the code program's.
std::string ProgramName();

// The project folder of --project-dir (or the nearest one upward). Throws SLU-PROJECT-001.
std::filesystem::path ProjectRootFor(const WorkspaceOptions& global);

// The project's settings files only (streambuild_project.toml, streambuild_local.toml): what opening its warehouse
// needs, loadable while a model file is broken.
ProjectSettings LoadSettingsFor(const WorkspaceOptions& global);

// Loads the project of --project-dir (or the nearest one upward). The project lives until the process exits and
// is never freed: a command ends the process right after, and freeing a large project's values one by one would
// only delay that.
const Project& LoadProjectFor(const WorkspaceOptions& global);

// How to open the project's warehouse: its target's adapter and connection (templates expanded now), waits for
// another writer announced on stderr.
WarehouseConfig WarehouseConfigFor(const ProjectSettings& project, AccessMode mode);

// The project's state store (state/open_state_store.hpp): SLUICE_STATE_URL, else the project's [state] url (its
// settings read, and the URL expanded, only then), else SQLite in its .sluice/ folder. A code program without a
// SQL-model project has no [state]: SLUICE_STATE_URL or SQLite.
std::unique_ptr<StateStore> OpenStateStoreFor(const WorkspaceOptions& global);
// The same for a project already loaded.
std::unique_ptr<StateStore> OpenStateStoreFor(const ProjectSettings& project);

// Checks a --vars value: one JSON object. Throws RequestError SLU-CONFIG-008 otherwise.
void CheckVarsOverride(const std::string& vars_json);

// A text as JSON documents show it: the text, or null when unset.
template <typename Json = nlohmann::json>
Json OrNull(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// A diagnostic as JSON outputs show it: code, message, file, line, column and hint.
nlohmann::json DiagnosticJson(const Diagnostic& diagnostic);

}  // namespace sluice::service
