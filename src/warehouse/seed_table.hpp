// Seed CSV files as every backend's LoadSeed reads them: the file's precondition (ReadSeedFile), and for backends
// that cannot read the seed dialect themselves (ClickHouse 18.16 infers no types and reads an empty field as a
// default; PostgreSQL's COPY is not exposed by the client; BigQuery gets the rows in its statement) the rows, read by
// the one seed CSV reader (core/seed_csv.hpp: the project loader's, with its located SLU-SEED-* errors), with column
// types inferred from every row in the backend's type names.
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

// How errors name the seed's file: `file` (relative to the project root), else `path`.
std::string SeedFileName(const SeedFile& seed);

// The contents of the seed file; SLU-WAREHOUSE-012 when it is not a file (a missing one).
std::string ReadSeedFile(const Relation& relation, const SeedFile& seed);

// Reads the seed file loaded into `relation` (ReadSeedFile). `seed.columns` (name → the backend's type) sets the
// types of the columns it names; the others are an integer (up to 18 digits), a number, a date (YYYY-MM-DD) or text,
// in `names`. Throws SLU-WAREHOUSE-012, the reader's SLU-SEED-001/-002/-003 (located in the file) for a file outside
// the dialect, SLU-WAREHOUSE-011 for a listed column the header lacks.
SeedTable ReadSeedTable(const Relation& relation, const SeedFile& seed, const SeedTypeNames& names);

}  // namespace sluice
