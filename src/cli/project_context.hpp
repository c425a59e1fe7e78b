// What every command that works on a project needs: the loaded project and where its state lives.
#pragma once

#include <filesystem>
#include <memory>

#include "cli/commands.hpp"
#include "project/project_loader.hpp"
#include "state/sqlite/sqlite_state_store.hpp"
#include "warehouse/registry.hpp"

namespace sluice::cli {

// Loads the project of --project-dir (or the nearest one upward); it stays alive, never freed, until the
// process exits.
Project& LoadProjectFor(const GlobalOptions& global);

// `<project>/.sluice/state.db`, opened (and migrated) — which marks runs of dead processes FAILURE.
std::unique_ptr<SqliteStateStore> OpenStateStore(const Project& project);

WarehouseConfig WarehouseConfigFor(const Project& project, AccessMode mode);

// Thousands separators: 1234567 → "1,234,567".
std::string FormatCount(int64_t value);

}  // namespace sluice::cli
