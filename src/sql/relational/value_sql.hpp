// Rendering values (column expressions and literals) as SQL of one dialect (private to src/sql/relational/).
//
// Each dialect's differences are spelled here once: literal forms (ClickHouse 18.16 has no DATE '…' and no
// TRUE), casts, division (always float, NULL on a zero divisor), date and string functions, and aggregates
// typed as the builder typed them (DuckDB's SUM of BIGINT is HUGEINT, PostgreSQL's is numeric: both are cast
// back; ClickHouse's sum of no rows is 0, so it is made NULL as in the others).
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>

#include "sql/relational/expr_nodes.hpp"
#include "sql/token.hpp"

namespace sluice::rel::detail {

// How a column reference is spelled where the value is rendered (e.g. "amount", "t0"."amount", or the expression a
// fused projection gave the name).
using ColumnResolver = std::function<std::string(const ColumnRef&)>;

// `value` as SQL; binary operations are parenthesized unless `top` (the whole item, predicate or key).
std::string RenderValue(sql::Dialect dialect, const ValueNode& value, const ColumnResolver& resolve, bool top = true);

// A literal of `type` as SQL. `exact`: typed so the engine reads exactly `type` (DuckDB and PostgreSQL read 1.5
// as a decimal, so a float64 is cast); otherwise the bare literal a later cast types (memtable rows).
std::string RenderLiteral(sql::Dialect dialect, const rel::Literal& value, const DataType& type, bool exact);

// CAST(`sql` AS <dialect's type>), with ClickHouse's Nullable(…) when `type` is nullable.
std::string RenderCast(sql::Dialect dialect, const std::string& sql, const DataType& type);

}  // namespace sluice::rel::detail
