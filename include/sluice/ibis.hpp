// sluice::ibis — relational expressions for compute functions (the role Ibis plays in seed 000): memtables, tables,
// column values and the operations over them. The builder checks columns and types as it goes, so a mistake fails
// when the definitions are built, before anything connects. See docs/expressions.md.
#pragma once

#include "sluice/relational.hpp"

namespace sluice::ibis {

using rel::Coalesce;
using rel::CountRows;
using rel::IfElse;
using rel::JoinKind;
using rel::NamedValue;
using rel::Row;
using rel::Schema;
using rel::SortKey;
using rel::Table;
using rel::Value;

// ibis.memtable(rows, schema=…).
inline Table memtable(std::vector<Row> rows, Schema schema) { return rel::Memtable(std::move(rows), std::move(schema)); }
// ibis.date("2026-01-01").
inline Value date(std::string_view yyyy_mm_dd) { return rel::DateLiteral(yyyy_mm_dd); }
// ibis.literal(value, type).
inline Value literal(rel::Literal value, std::string_view type) { return rel::TypedLiteral(std::move(value), type); }

}  // namespace sluice::ibis
