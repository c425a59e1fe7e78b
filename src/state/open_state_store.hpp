// The state store factory: what commands open, so no command names a backend. Today every project keeps its
// state in SQLite at `<project>/.sluice/state.db`.
// Thread-safety: the returned store is thread-safe (state_store.hpp).
#pragma once

#include <filesystem>
#include <memory>

#include "state/state_store.hpp"

namespace sluice {

// Opens (creating and migrating when needed) the state store of the project at `project_dir`; opening marks the
// runs of dead processes FAILURE. Throws SLU-STATE-001 when it cannot be opened.
std::unique_ptr<StateStore> OpenStateStore(const std::filesystem::path& project_dir);

}  // namespace sluice
