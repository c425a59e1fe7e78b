// The PostgreSQL backend (user docs: docs/postgres.md).
//
// Talks to one database of a PostgreSQL 15+ server through libpq (core/postgres/pg_connection.hpp); namespaces are
// schemas of that database. Every write is one transaction (READ COMMITTED) on a connection of its own: first the
// relation's write lock (pg_advisory_xact_lock keyed on the relation, whatever the write, the first one that creates
// the table included), so that writers of one relation in any process run one after another and never both delete the
// old window and insert; then its data statements, PausePoint("after_write_before_commit"), the ledger row
// (`_sluice.ledger`) and COMMIT; ROLLBACK on any error, and a process killed before COMMIT leaves the old contents
// (the server rolls back a transaction whose client is gone).
//
// - ReplaceTable / LoadSeed / a full refresh: the views depending on the relation (recursively) are read from the
//   catalog, the relation is dropped with them, created anew, and the views are created again from their definitions,
//   all in the write's transaction: readers block on the lock and then see the new contents; a view that no longer
//   binds fails the write (SLU-WAREHOUSE-042) instead of vanishing.
// - ReplaceDateRange: the table is `PARTITION BY RANGE (date_column)` with one partition per day, created in the
//   write's transaction for the days the window's rows fall on. The SELECT is staged in a temporary table; the
//   window's rows are deleted and the staged in-window rows inserted (by column name), so readers (MVCC) see the old
//   or the new window, never a mix. Columns the SELECT adds are added; removed or retyped (not implicitly castable)
//   ones are SLU-WAREHOUSE-013. A table that is not partitioned (made by an unpartitioned model, or by hand) is
//   written the same way without partitions; one partitioned by something else is SLU-WAREHOUSE-014.
// - ReplaceView: CREATE OR REPLACE VIEW, and when PostgreSQL refuses it (the view's columns change) DROP + CREATE
//   with its dependent views recreated, in the same transaction.
// Thread-safety: as Warehouse. Each call takes a connection from a pool (opening one when none is idle), so calls on
// several threads run in parallel on the server; Interrupt cancels the statements of every connection in use.
#pragma once

#include <memory>
#include <string>

#include "warehouse/warehouse.hpp"

namespace sluice {

struct PostgresEndpoint {
  std::string conninfo;        // libpq's keyword=value string (password included: never shown)
  std::string display;         // "host:port/dbname as user", for messages
  std::string password;        // masked as *** should a server message quote it
  std::string default_schema;  // the search_path of the caller's SQL (Execute, Query); empty: the server's
  bool read_only = false;      // sessions with default_transaction_read_only
};

class PostgresWarehouse final : public Warehouse {
 public:
  // Connects once (to read the server's version). Throws SLU-WAREHOUSE-030 (the server refused the user), -031 (no
  // connection), -040 (the database does not exist), -008 (canceled before connecting).
  static std::unique_ptr<PostgresWarehouse> Open(PostgresEndpoint endpoint, const WaitPolicy& wait);
  ~PostgresWarehouse() override;

  const Capabilities& capabilities() const override { return capabilities_; }
  sql::Dialect dialect() const override { return sql::Dialect::kPostgres; }
  void Execute(const std::string& sql) override;
  Rows Query(const std::string& sql) override;
  std::optional<TableInfo> Describe(const Relation& relation) override;
  std::vector<TableInfo> ListRelations() override;
  // pg_catalog: kinds ('v' views, 'm' materialized views), and views' definitions as CatalogEntry says.
  std::vector<CatalogEntry> CatalogOf(const std::string& name_space) override;
  std::vector<CatalogEntry> CatalogOf(const std::vector<Relation>& relations) override;
  void EnsureSchema(const std::string& name) override;
  WriteResult ReplaceTable(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult ReplaceDateRange(const Relation& relation, const std::string& select_sql, const std::string& date_column,
                               DateWindow window, LedgerEntry ledger,
                               DateRangeMode mode = DateRangeMode::kWindow) override;
  WriteResult ReplaceView(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) override;
  std::vector<LedgerEntry> ReadLedger() override;
  void DropRelation(const Relation& relation) override;
  // Cancels the statement of every connection in use (PQcancel); later statements fail with SLU-WAREHOUSE-008.
  void Interrupt() override;
  void ObserveStatements(StatementObserver observer) override;

  struct Pool;  // the connections and what the writes share; defined in the .cpp

 private:
  PostgresWarehouse(std::unique_ptr<Pool> pool, std::string version);

  std::unique_ptr<Pool> pool_;
  Capabilities capabilities_;
};

// The name of the partition of `table` holding `day`: "<table>_p<YYYYMMDD>", or, when that exceeds PostgreSQL's 63
// bytes, the table name cut (at a UTF-8 boundary) and followed by 8 hex digits of its sha256, so distinct long
// tables get distinct partition names.
std::string PostgresPartitionName(const std::string& table, Date day);

}  // namespace sluice
