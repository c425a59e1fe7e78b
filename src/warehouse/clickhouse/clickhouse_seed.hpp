// Seed CSV files for ClickHouse: read by warehouse/seed_table.hpp with ClickHouse's type names, and sent as
// TabSeparated, where NULL (\N) and the empty string differ.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "warehouse/seed_table.hpp"

namespace sluice {

inline const SeedTypeNames kClickHouseSeedTypes{"Int64", "Float64", "Date", "String", "Nullable(", ")"};

// The rows as a TabSeparated body.
std::string SeedRowsAsTabSeparated(const SeedTable& table);

}  // namespace sluice
