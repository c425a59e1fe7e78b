// Seed CSV files for ClickHouse, which (18.16) infers no types and reads an empty CSV field as a default rather than
// NULL: the file is read here with the seed dialect (docs/project-format.md: header, `,`, `"` quoting with `""` for a
// quote, empty unquoted field = NULL, `""` = the empty string), column types are inferred from every row, and the
// rows are sent as TabSeparated, where NULL (\N) and the empty string differ.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sluice {

struct SeedTable {
  std::vector<std::string> columns;
  std::vector<std::string> types;  // ClickHouse types, inferred or as listed
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// Reads `text` (the whole file). `listed` (name → ClickHouse type) sets the types of the columns it names; the others
// are Int64, Float64, Date or String, Nullable when a value is NULL. Throws SLU-WAREHOUSE-015 (naming `file` and the
// line) for a malformed file, SLU-WAREHOUSE-011 for a listed column the header lacks.
SeedTable ReadSeedCsv(const std::string& text, const std::string& file, const std::string& subject,
                      const std::vector<std::pair<std::string, std::string>>& listed);

// The rows as a TabSeparated body.
std::string SeedRowsAsTabSeparated(const SeedTable& table);

}  // namespace sluice
