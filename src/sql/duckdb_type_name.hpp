// A DuckDB column type named by a user (a seed's `columns`), checked against a strict grammar before it reaches
// the warehouse, so that a value that is not a type is a located error at compile time and never SQL.
//
//   type      := name [ "(" integer [ "," integer ] ")" ] { "[" [ integer ] "]" }
//   name      := one of DuckDB 1.4's built-in scalar type names and aliases (duckdb_types()), any case, e.g.
//                BIGINT, INT8, VARCHAR, TEXT, DECIMAL, DATE, TIMESTAMP, TIMESTAMPTZ, UUID, BLOB, JSON, or a
//                multi-word one: DOUBLE PRECISION, CHARACTER VARYING, TIME[STAMP] WITH[OUT] TIME ZONE
//   arguments := DECIMAL / NUMERIC / DEC take (width) or (width, scale), 1 <= width <= 38, scale <= width;
//                the VARCHAR family (VARCHAR, CHAR, CHARACTER [VARYING], BPCHAR, NVARCHAR, STRING, TEXT) takes
//                (length), length >= 1; no other type takes arguments
//   arrays    := INTEGER[] (a list), INTEGER[3] (a fixed-size array), nested: INTEGER[][]
// Whitespace may separate the parts. Nested types (STRUCT, MAP, UNION, ENUM), NULL and VARIANT are refused: a
// CSV field cannot spell them.
// Thread-safety: pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::sql {

// Where a type text stops following the grammar, and what was expected there.
struct TypeNameProblem {
  size_t offset = 0;    // byte offset in the text
  std::string message;  // e.g. "unexpected `'` after `DECIMAL(12,2)`"
};

// nullopt when `text` is a DuckDB type by the grammar above.
std::optional<TypeNameProblem> CheckDuckDbTypeName(std::string_view text);

}  // namespace sluice::sql
