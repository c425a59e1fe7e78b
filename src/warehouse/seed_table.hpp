// Seed CSV files read by Sluice, for backends that cannot read the seed dialect themselves (ClickHouse 18.16 infers no
// types and reads an empty field as a default; PostgreSQL's COPY is not exposed by the client): the file is read
// with the seed dialect (docs/project-format.md: header, `,`, `"` quoting with `""` for a quote, empty unquoted
// field = NULL, `""` = the empty string) and column types are inferred from every row, in the backend's type names.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sluice {

// A backend's names for the inferred types; a column holding a NULL gets prefix + type + suffix (ClickHouse's
// Nullable(…)), both empty where every column may hold NULL.
struct SeedTypeNames {
  std::string integer;
  std::string number;
  std::string date;
  std::string text;
  std::string nullable_prefix;
  std::string nullable_suffix;
};

struct SeedTable {
  std::vector<std::string> columns;
  std::vector<std::string> types;  // inferred, or as listed
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// Reads `text` (the whole file). `listed` (name → the backend's type) sets the types of the columns it names; the
// others are an integer (up to 18 digits), a number, a date (YYYY-MM-DD) or text, in `names`. Throws
// SLU-WAREHOUSE-015 (naming `file` and the line) for a malformed file, SLU-WAREHOUSE-011 for a listed column the
// header lacks.
SeedTable ReadSeedCsv(const std::string& text, const std::string& file, const std::string& subject,
                      const std::vector<std::pair<std::string, std::string>>& listed, const SeedTypeNames& names);

}  // namespace sluice
