// The one reader of seed CSV files: the project loader checks each seed with it, and the backends that load seeds
// row by row (warehouse/seed_table.hpp) read them with it, so both accept and refuse exactly the same files, with
// the same located errors (the DuckDB warehouse reads seeds itself, with the same dialect set explicitly,
// duckdb_warehouse.cpp). docs/project-format.md documents the dialect for users:
//
//   - UTF-8 text without NUL bytes; a leading UTF-8 byte-order mark is skipped.
//   - The first row is the header: the column names, each non-empty, without surrounding whitespace, and unique
//     ignoring ASCII case (DuckDB compares column names that way). A file with only a header has no rows.
//   - Fields are separated by `,`. A row ends with LF or CR LF, one of them throughout the file (the header's);
//     the last row may end at the end of the file.
//   - A field holding `,`, `"`, CR or LF is quoted with `"`, and a `"` inside it is written `""`. A `"` inside an
//     unquoted field is refused, and only `,` or the row's end may follow a closing quote.
//   - Every row has as many fields as the header. An empty line is a row of one empty field: a NULL in a
//     one-column file, too few fields otherwise.
//   - An empty unquoted field is NULL; `""` is the empty string. Types come from the seed's `columns`, else
//     DuckDB infers them from the whole file.
//
// Errors (one Diagnostic located in the CSV file at the first offending byte, with the line for the caret):
//   SLU-SEED-001  not in the dialect: not UTF-8, a NUL byte, a quoted field never closed (located at its
//                 opening quote), a `"` inside an unquoted field, text after a closing quote, a CR without LF, a
//                 line ending unlike the header's
//   SLU-SEED-002  a row with more or fewer fields than the header (located at the first extra separator, or at
//                 the end of the short row)
//   Text after a closing quote, or a `"` in an unquoted field, in a row one of whose quoted fields ran past the end of
//   its line is SLU-SEED-001 at that field's opening quote: a quote left open, closed by a later `"` of the file
//   (which then misplaces the quotes after it), breaks the row far from the mistake.
//   SLU-SEED-003  no header row, or a header name that is empty, has surrounding whitespace or repeats another
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

struct SeedCsvRow {
  size_t line = 0;                                 // the file line the row starts on (1-based; the header is line 1)
  std::vector<std::optional<std::string>> values;  // decoded; nullopt for an empty unquoted field (NULL)
  std::vector<size_t> offsets;                     // where each field starts in the text
};

struct SeedCsv {
  std::vector<std::string> columns;  // the header's names, in file order
  std::vector<SeedCsvRow> rows;      // the data rows, the header not counted
};

// Reads and checks the whole of `text`, the contents of the seed file `file` (as diagnostics name it, e.g. relative
// to the project root), and returns its header and rows. Throws sluice::Error (codes above).
SeedCsv ReadSeedCsv(const std::string& file, std::string_view text);

}  // namespace sluice
