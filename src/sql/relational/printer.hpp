// Printing relational expressions: one printer per dialect (DuckDB, ClickHouse, PostgreSQL, BigQuery), from one
// lowering of the tree into SELECTs (consecutive filters and projections fused where legal, a subtree used more than
// once named once as a CTE).
//
// The output is deterministic (golden files compare it byte for byte); identifiers are quoted and literals escaped by
// the dialect (sql/dialect.hpp); dates print in a form each dialect accepts (ClickHouse 18.16 has no DATE '…').
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sluice/relational.hpp"
#include "sql/token.hpp"

namespace sluice::rel {

// The SELECT statement `table` compiles to in `dialect`, without a trailing semicolon.
std::string ToSql(const Table& table, sql::Dialect dialect);

// The expression tree as indented text, one node a line (what golden files show as the input).
std::string Describe(const Table& table);

// The Sluice type of a column as the warehouse reports it (DuckDB "BIGINT", "DECIMAL(18,2)"; ClickHouse
// "Nullable(Int64)", "Date"; PostgreSQL "bigint"; BigQuery "INT64"); nullopt for a type expressions cannot use.
std::optional<DataType> FromWarehouseType(sql::Dialect dialect, std::string_view type);

// The dialect's type name for a Sluice type (used by casts and memtables), e.g. DOUBLE, Float64, double precision.
std::string WarehouseTypeName(sql::Dialect dialect, const DataType& type);

}  // namespace sluice::rel
