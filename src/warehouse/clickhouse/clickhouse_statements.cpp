#include "warehouse/clickhouse/clickhouse_statements.hpp"

#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

namespace {

constexpr sql::Dialect kDialect = sql::Dialect::kClickHouse;

std::string Quote(std::string_view identifier) { return sql::QuoteIdentifier(kDialect, identifier); }

ClickHouseStatement Embedding(std::string before, const std::string& select_sql, std::string_view after = {}) {
  return sluice::Embedding(kDialect, std::move(before), select_sql, after);
}

}  // namespace

ClickHouseStatements ClickHouseStatements::ForOrdinaryDatabase() const {
  Capabilities capabilities = capabilities_;
  capabilities.exchange_tables = false;
  return ClickHouseStatements(capabilities);
}

std::string ClickHouseStatements::Name(const Relation& relation) {
  return sql::QualifiedName(kDialect, relation.name_space, relation.name);
}

std::string ClickHouseStatements::Literal(std::string_view text) { return sql::QuoteString(kDialect, text); }

std::string ClickHouseStatements::DateLiteral(Date date) { return sql::DateLiteral(sql::Dialect::kClickHouse, date); }

std::string ClickHouseStatements::CreateDatabase(std::string_view database) const {
  return "CREATE DATABASE IF NOT EXISTS " + Quote(database) + (capabilities_.atomic_databases ? " ENGINE = Atomic" : "");
}

std::string ClickHouseStatements::Drop(const Relation& relation) const {
  return "DROP TABLE IF EXISTS " + Name(relation) + (capabilities_.drop_sync ? " SYNC" : "");
}

ClickHouseStatement ClickHouseStatements::CreateStaging(const Relation& staging, const std::string& select_sql) {
  return Embedding("CREATE TABLE " + Name(staging) + " ENGINE = MergeTree() ORDER BY tuple() AS SELECT * FROM ",
                   select_sql);
}

std::string ClickHouseStatements::PartitionKey(const std::string& column, bool column_is_date) {
  return column_is_date ? Quote(column) : "toDate(" + Quote(column) + ")";
}

namespace {

std::string PartitionedFrom(const std::string& create, const Relation& source, const std::string& column,
                            bool column_is_date, const std::string& where) {
  return create + " ENGINE = MergeTree() PARTITION BY " + ClickHouseStatements::PartitionKey(column, column_is_date) +
         " ORDER BY " + Quote(column) + " AS SELECT * FROM " + ClickHouseStatements::Name(source) + " WHERE " + where;
}

}  // namespace

std::string ClickHouseStatements::CreatePartitionedFrom(const Relation& staging, const Relation& source,
                                                        const std::string& column, bool column_is_date,
                                                        const std::string& in_window) {
  return PartitionedFrom("CREATE TABLE " + Name(staging), source, column, column_is_date, in_window);
}

std::string ClickHouseStatements::CreatePartitionedIfMissing(const Relation& target, const Relation& source,
                                                             const std::string& column, bool column_is_date) {
  return PartitionedFrom("CREATE TABLE IF NOT EXISTS " + Name(target), source, column, column_is_date, "0");
}

std::string ClickHouseStatements::InWindow(const std::string& column, DateWindow window) {
  return Quote(column) + " >= " + DateLiteral(window.start) + " AND " + Quote(column) + " < " +
         DateLiteral(window.end);
}

std::vector<std::string> ClickHouseStatements::SwapIn(ExistingKind existing, const Relation& target,
                                                      const Relation& staging, const Relation& displaced) const {
  if (existing == ExistingKind::kAbsent) return {"RENAME TABLE " + Name(staging) + " TO " + Name(target)};
  if (existing == ExistingKind::kTable && capabilities_.exchange_tables) {
    return {"EXCHANGE TABLES " + Name(staging) + " AND " + Name(target), Drop(staging)};
  }
  return {"RENAME TABLE " + Name(target) + " TO " + Name(displaced) + ", " + Name(staging) + " TO " + Name(target),
          Drop(displaced)};
}

std::vector<ClickHouseStatement> ClickHouseStatements::ReplaceView(ExistingKind existing, const Relation& target,
                                                                   const Relation& staging, const Relation& displaced,
                                                                   const std::string& select_sql) const {
  if (capabilities_.create_or_replace_view && existing != ExistingKind::kTable) {
    return {Embedding("CREATE OR REPLACE VIEW " + Name(target) + " AS SELECT * FROM ", select_sql)};
  }
  std::vector<ClickHouseStatement> statements{
      Embedding("CREATE VIEW " + Name(staging) + " AS SELECT * FROM ", select_sql)};
  // EXCHANGE TABLES swaps tables; a view goes in by RENAME.
  ClickHouseStatements renames = ForOrdinaryDatabase();
  for (std::string& sql : renames.SwapIn(existing, target, staging, displaced)) {
    statements.push_back(ClickHouseStatement{std::move(sql)});
  }
  return statements;
}

std::string ClickHouseStatements::ReplacePartition(const Relation& target, Date day, const Relation& staging) {
  return "ALTER TABLE " + Name(target) + " REPLACE PARTITION " + Literal(day.ToString()) + " FROM " + Name(staging);
}

std::string ClickHouseStatements::DropPartition(const Relation& target, Date day) {
  return "ALTER TABLE " + Name(target) + " DROP PARTITION " + Literal(day.ToString());
}

std::string ClickHouseStatements::CreateLedger() {
  return "CREATE TABLE IF NOT EXISTS " + Name({std::string(kSluiceDatabase), "ledger"}) +
         " (asset String, window_start Nullable(Date), window_end Nullable(Date), run_id String, row_count Int64,"
         " sql_hash String, written_at String, relation_schema Nullable(String), relation_name Nullable(String))"
         " ENGINE = MergeTree() ORDER BY written_at";
}

std::string ClickHouseStatements::InsertLedger(const Relation& relation, const LedgerEntry& entry, int64_t row_count,
                                               const std::string& written_at) {
  return InsertLedger(std::vector<LedgerRow>{{relation, entry, row_count, written_at}});
}

std::string ClickHouseStatements::InsertLedger(const std::vector<LedgerRow>& rows) {
  auto date_or_null = [](std::optional<Date> date) { return date ? DateLiteral(*date) : std::string("NULL"); };
  std::string sql = "INSERT INTO " + Name({std::string(kSluiceDatabase), "ledger"}) +
                    " (asset, window_start, window_end, run_id, row_count, sql_hash, written_at, relation_schema,"
                    " relation_name) VALUES ";
  for (size_t i = 0; i < rows.size(); ++i) {
    const LedgerRow& row = rows[i];
    sql += i == 0 ? "(" : ", (";
    sql += Literal(row.entry.asset) + ", ";
    sql += date_or_null(row.entry.window ? std::optional<Date>(row.entry.window->start) : std::nullopt) + ", ";
    sql += date_or_null(row.entry.window ? std::optional<Date>(row.entry.window->end) : std::nullopt) + ", ";
    sql += Literal(row.entry.run_id) + ", " + std::to_string(row.row_count) + ", " + Literal(row.entry.sql_hash) + ", ";
    sql += Literal(row.written_at) + ", " + Literal(row.relation.name_space) + ", " + Literal(row.relation.name) + ")";
  }
  return sql;
}

std::string ClickHouseStatements::SelectLedger() {
  return "SELECT asset, toString(window_start), toString(window_end), run_id, toString(row_count), sql_hash,"
         " written_at, relation_schema, relation_name FROM " +
         Name({std::string(kSluiceDatabase), "ledger"}) + " ORDER BY written_at";
}

}  // namespace sluice
