// The DDL Sluice sends for relations of its own (the deployment metadata in `_sluice`, the publish lock) and for
// dropping relations, which each dialect spells its own way. Pure rendering from structured input: names arrive
// already qualified (Warehouse::QualifiedName or sql::QualifiedName), column names are quoted here.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sql/token.hpp"

namespace sluice::sql {

// A text column of a metadata table.
struct TextColumn {
  std::string name;
  bool nullable = true;  // ClickHouse: Nullable(String) or String; the other dialects' VARCHAR always admits NULL
};

// CREATE TABLE IF NOT EXISTS `table` (columns, every one text): VARCHAR columns, or on ClickHouse String columns in a
// MergeTree() ordered by `order_by` (which ClickHouse needs; the other dialects ignore it).
std::string CreateTextTable(Dialect dialect, std::string_view table, const std::vector<TextColumn>& columns,
                            const std::vector<std::string>& order_by);

// CREATE TABLE `table` AS `select`: on ClickHouse, which needs an engine, a TinyLog table (small, unordered).
std::string CreateTableAs(Dialect dialect, std::string_view table, std::string_view select);

// DROP … IF EXISTS `relation`: DROP VIEW for a view (`is_view`), DROP TABLE for a table; ClickHouse drops views and
// materialized views with DROP TABLE too, and with `sync` adds SYNC (the name and data are gone when it returns).
std::string DropRelation(Dialect dialect, std::string_view relation, bool is_view, bool sync);

}  // namespace sluice::sql
