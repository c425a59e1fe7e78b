#include "state/open_state_store.hpp"

#include "state/sqlite/sqlite_state_store.hpp"

namespace sluice {

std::unique_ptr<StateStore> OpenStateStore(const std::filesystem::path& project_dir) {
  return SqliteStateStore::Open(project_dir / ".sluice" / "state.db");
}

}  // namespace sluice
