// The state store factory: what commands open, so no command names a backend.
//
// Where a project keeps its state, first match wins:
//   1. the environment variable SLUICE_STATE_URL;
//   2. the URL the project configures (`[state] url` in streambuild_project.toml, expanded by the CLI, which passes it
//      in: this layer does not read project files);
//   3. SQLite at `<project>/.sluice/state.db`.
// A URL is `postgresql://user:password@host:port/database[?param=value…]` (or `postgres://…`: libpq's URL, so
// sslmode, connect_timeout, options=-csearch_path%3Dsluice … work) for the PostgreSQL store, or `sqlite:///abs/path.db`
// / `sqlite://relative/path.db` (relative to the project) for a SQLite file elsewhere.
// Thread-safety: the returned store is thread-safe (state_store.hpp); the functions are pure apart from opening.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "core/environment.hpp"
#include "state/state_store.hpp"

namespace sluice {

// The environment variable that selects the state store, winning over the project's setting.
inline constexpr const char* kStateUrlVariable = "SLUICE_STATE_URL";

struct StateLocation {
  enum class Kind { kSqlite, kPostgres };
  Kind kind = Kind::kSqlite;
  std::filesystem::path sqlite_file;  // kSqlite
  std::string postgres_url;           // kPostgres: the URL as given (it may hold a password: never print it)
  std::string origin;                 // what chose it: "SLUICE_STATE_URL", "[state] url" or "default"

  bool operator==(const StateLocation&) const = default;
};

// The project's expanded [state] url, nullopt when it sets none. Called only when SLUICE_STATE_URL is unset, so a
// project whose settings cannot be read (or whose URL names an unset ${ENV:…}) still works with the variable set.
using ConfiguredStateUrl = std::function<std::optional<std::string>()>;

// Applies the order above. Throws SLU-STATE-001 (naming where the URL came from, with the password redacted) for an
// empty, malformed or unsupported URL, and whatever `configured_url` throws.
StateLocation ResolveStateLocation(const std::filesystem::path& project_dir, const ConfiguredStateUrl& configured_url,
                                   const EnvironmentLookup& environment);

// Opens (creating and migrating when needed) the store at `location`; opening marks this host's runs of dead processes
// FAILURE. Throws SLU-STATE-001 when it cannot be opened.
std::unique_ptr<StateStore> OpenStateStore(const StateLocation& location);

// ResolveStateLocation with the process environment, then OpenStateStore. Without `configured_url` the project sets
// no URL.
std::unique_ptr<StateStore> OpenStateStore(const std::filesystem::path& project_dir,
                                           const ConfiguredStateUrl& configured_url = {});

}  // namespace sluice
