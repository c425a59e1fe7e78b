// Seed CSV files read by Sluice, for backends that cannot read the seed dialect themselves (ClickHouse 18.16 infers no
// types and reads an empty field as a default; PostgreSQL's COPY is not exposed by the client): the file is read
// with the seed dialect (docs/project-format.md: header, `,`, `"` quoting with `""` for a quote, empty unquoted
// field = NULL, `""` = the empty string) and column types are inferred from every row, in the backend's type names.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "warehouse/warehouse.hpp"

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
  std::vector<size_t> lines;  // the file line each row starts on (1-based; the header is line 1)
};

// SLU-WAREHOUSE-025 for a value of `seed` that does not convert to its column's type: located at the value of
// `column` (compared ignoring ASCII case with the header's names) on line `line` of the file (1-based, the header
// being line 1), with that line for the caret when the file can be read; `problem` says what the warehouse
// made of it. `subject` is the relation loaded.
Error SeedValueError(const SeedFile& seed, const std::string& subject, size_t line, const std::string& column,
                     const std::string& problem);

// Reads `text` (the whole file). `listed` (name → the backend's type) sets the types of the columns it names; the
// others are an integer (up to 18 digits), a number, a date (YYYY-MM-DD) or text, in `names`. Throws
// SLU-WAREHOUSE-015 (naming `file` and the line) for a malformed file, SLU-WAREHOUSE-011 for a listed column the
// header lacks.
SeedTable ReadSeedCsv(const std::string& text, const std::string& file, const std::string& subject,
                      const std::vector<std::pair<std::string, std::string>>& listed, const SeedTypeNames& names);

}  // namespace sluice
