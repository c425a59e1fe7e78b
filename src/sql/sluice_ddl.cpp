#include "sql/sluice_ddl.hpp"

#include "sql/dialect.hpp"

namespace sluice::sql {

std::string CreateTextTable(Dialect dialect, std::string_view table, const std::vector<TextColumn>& columns,
                            const std::vector<std::string>& order_by) {
  const bool clickhouse = dialect == Dialect::kClickHouse;
  std::string list;
  for (const TextColumn& column : columns) {
    list += (list.empty() ? "" : ", ") + QuoteIdentifier(dialect, column.name) + " " +
            (clickhouse ? (column.nullable ? "Nullable(String)" : "String") : "VARCHAR");
  }
  std::string sql = "CREATE TABLE IF NOT EXISTS " + std::string(table) + " (" + list + ")";
  if (clickhouse) {
    std::string keys;
    for (const std::string& key : order_by) keys += (keys.empty() ? "" : ", ") + QuoteIdentifier(dialect, key);
    sql += " ENGINE = MergeTree() ORDER BY (" + keys + ")";
  }
  return sql;
}

std::string CreateTableAs(Dialect dialect, std::string_view table, std::string_view select) {
  return "CREATE TABLE " + std::string(table) + (dialect == Dialect::kClickHouse ? " ENGINE = TinyLog" : "") + " AS " +
         std::string(select);
}

std::string DropRelation(Dialect dialect, std::string_view relation, bool is_view, bool sync) {
  if (dialect == Dialect::kClickHouse) return "DROP TABLE IF EXISTS " + std::string(relation) + (sync ? " SYNC" : "");
  return std::string(is_view ? "DROP VIEW IF EXISTS " : "DROP TABLE IF EXISTS ") + std::string(relation);
}

}  // namespace sluice::sql
