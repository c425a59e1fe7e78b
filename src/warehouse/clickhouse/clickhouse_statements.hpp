// The SQL the ClickHouse backend sends, rendered from structured input and the server's Capabilities: a pure
// renderer, so both the modern statements (EXCHANGE TABLES, CREATE OR REPLACE VIEW, DROP … SYNC, Atomic databases)
// and the fallbacks an old server needs are unit-tested, and the fallbacks also run on the 18.16 test server.
// Identifiers are backquoted by sql::QuoteIdentifier, values are literals of sql::QuoteString; the caller's SELECT is
// embedded byte for byte as a subquery.
// Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sluice/date.hpp"
#include "warehouse/embedded_select.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// A statement, and where in it the caller's SELECT is embedded (when it is), so a syntax error the server places
// inside it can be reported at its offset in the SELECT.
using ClickHouseStatement = EmbeddedStatement;

// What exists under a relation's name before a write.
enum class ExistingKind { kAbsent, kTable, kView };

class ClickHouseStatements {
 public:
  explicit ClickHouseStatements(Capabilities capabilities) : capabilities_(std::move(capabilities)) {}

  // The same statements for writes into a database that is not Atomic (EXCHANGE TABLES needs Atomic databases).
  ClickHouseStatements ForOrdinaryDatabase() const;

  const Capabilities& capabilities() const { return capabilities_; }

  // `database`.`name`
  static std::string Name(const Relation& relation);
  static std::string Literal(std::string_view text);
  // toDate('2026-01-31'): 18.16 does not parse DATE '…'.
  static std::string DateLiteral(Date date);

  // CREATE DATABASE IF NOT EXISTS, with ENGINE = Atomic where the server has it.
  std::string CreateDatabase(std::string_view database) const;
  // DROP TABLE IF EXISTS (tables and views alike), with SYNC where the server has it, so a dropped table's name and
  // data are gone when the statement returns.
  std::string Drop(const Relation& relation) const;

  // CREATE TABLE staging ENGINE = MergeTree() ORDER BY tuple() AS SELECT * FROM (<select>).
  static ClickHouseStatement CreateStaging(const Relation& staging, const std::string& select_sql);
  // CREATE TABLE staging ENGINE = MergeTree() PARTITION BY <day of column> ORDER BY column AS SELECT * FROM source
  // WHERE <in window>: the window's rows of `source` as a date-partitioned table.
  static std::string CreatePartitionedFrom(const Relation& staging, const Relation& source, const std::string& column,
                                           bool column_is_date, const std::string& in_window);
  // CREATE TABLE IF NOT EXISTS target, as CreatePartitionedFrom but empty (source's columns, no rows): the first
  // window write of a table creates it so, and a concurrent first write finds it made.
  static std::string CreatePartitionedIfMissing(const Relation& target, const Relation& source,
                                                const std::string& column, bool column_is_date);
  // `column` >= toDate(start) AND `column` < toDate(end)
  static std::string InWindow(const std::string& column, DateWindow window);
  // PARTITION BY expression for a Date column (the column) or a DateTime one (toDate(column)).
  static std::string PartitionKey(const std::string& column, bool column_is_date);

  // Puts `staging` in the place of `target`. EXCHANGE TABLES where the server has it and `target` is a table (then
  // the old contents are in `staging`, to drop); else RENAME TABLE target TO displaced, staging TO target (one
  // statement: readers see either relation, but a statement starting between the two renames of an Ordinary
  // database may find no `target`), then the displaced relation is dropped. An absent target is a plain RENAME.
  std::vector<std::string> SwapIn(ExistingKind existing, const Relation& target, const Relation& staging,
                                  const Relation& displaced) const;

  // Creates or replaces the view: CREATE OR REPLACE VIEW where the server has it and no table is in the way; else
  // the view is created under `staging` and swapped in like a table.
  std::vector<ClickHouseStatement> ReplaceView(ExistingKind existing, const Relation& target, const Relation& staging,
                                               const Relation& displaced, const std::string& select_sql) const;

  static std::string ReplacePartition(const Relation& target, Date day, const Relation& staging);
  static std::string DropPartition(const Relation& target, Date day);

  // The ledger: `_sluice`.`ledger`, the DuckDB ledger's columns; written_at is ISO-8601 text (no DateTime64 on old
  // servers), which sorts as time.
  static std::string CreateLedger();
  struct LedgerRow {
    Relation relation;
    LedgerEntry entry;
    int64_t row_count = 0;
    std::string written_at;
  };
  // One INSERT of every row.
  static std::string InsertLedger(const std::vector<LedgerRow>& rows);
  static std::string InsertLedger(const Relation& relation, const LedgerEntry& entry, int64_t row_count,
                                  const std::string& written_at);
  static std::string SelectLedger();

 private:
  Capabilities capabilities_;
};

// The ledger's and the staging tables' database.
inline constexpr std::string_view kSluiceDatabase = "_sluice";

}  // namespace sluice
