// Dialect rendering of names and values for engine-generated SQL, and how a dialect compares column names.
//
// Identifiers are always quoted (so reserved words and mixed case are safe); values are rendered as
// literals with the dialect's escaping. In the backslash dialects (ClickHouse, BigQuery) control bytes are
// written as \n, \r, \t or \xHH so a literal never spans lines; other bytes (UTF-8 included) pass unchanged.
// Errors: an empty identifier, or a NUL byte in a DuckDB/PostgreSQL identifier or string (those engines
// cannot represent it), throws sluice::Error SLU-SQL-020 (no location: the input is engine-generated).
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "sluice/date.hpp"
#include "sql/token.hpp"

namespace sluice::sql {

// "name" for DuckDB/PostgreSQL (embedded " doubled), `name` for ClickHouse/BigQuery (embedded ` and \ escaped).
std::string QuoteIdentifier(Dialect dialect, std::string_view name);

// QuoteIdentifier(schema) + "." + QuoteIdentifier(name).
std::string QualifiedName(Dialect dialect, std::string_view schema, std::string_view name);

// 'text' with ' doubled (DuckDB, PostgreSQL) or backslash-escaped (ClickHouse, BigQuery).
std::string QuoteString(Dialect dialect, std::string_view text);

// DATE '2026-01-31'; on ClickHouse toDate('2026-01-31'), which every server version reads.
std::string DateLiteral(Dialect dialect, Date date);

// Whether two column names name one column in `dialect`: exactly equal in ClickHouse, equal ignoring ASCII case
// in the others.
bool SameColumnName(Dialect dialect, std::string_view a, std::string_view b);

}  // namespace sluice::sql
