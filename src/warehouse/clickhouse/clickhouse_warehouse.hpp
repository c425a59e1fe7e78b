// The ClickHouse backend, over the server's HTTP interface (clickhouse_http.hpp).
//
// Open probes the server once (clickhouse_capabilities.hpp): a wrong address is SLU-WAREHOUSE-031 naming host:port, a
// refused user SLU-WAREHOUSE-030; the password appears in no error, log line or statement record.
//
// ClickHouse has no transactions, so every write builds the new contents in a uniquely named staging table in the
// `_sluice` database (named after the relation, this host and process, and the run) and puts them in place in one
// step:
//   ReplaceTable / LoadSeed  CREATE TABLE stage … AS SELECT, then EXCHANGE TABLES (Atomic databases) or one
//                            RENAME TABLE target TO displaced, stage TO target, then the displaced table is dropped;
//                            what holds the target's name is read right before the swap;
//   ReplaceDateRange         the SELECT's rows go to a staging table, the window's rows to a second one with the
//                            target's structure (PARTITION BY the day of the date column), then per day of the window
//                            ALTER TABLE … REPLACE PARTITION day FROM stage (DROP PARTITION for a day with no rows):
//                            each day is replaced atomically, the window day by day; the first write creates the
//                            table empty (IF NOT EXISTS) first;
//   ReplaceView              CREATE OR REPLACE VIEW, or a staging view swapped in by RENAME.
// So two processes writing one relation at once need no lock: each swaps in its own staging, and the last swap of a
// day wins. A failure before the swap leaves the target untouched and drops the staging tables; a process killed there
// leaves them behind, and a later write of the same relation drops them once their writer is gone (a pid of this host
// that no longer runs; a day old for another host's). Pause points: "after_write_before_commit" (staging written,
// nothing swapped) and "after_swap_before_ledger". The ledger row (`_sluice`.`ledger`) is inserted right after the
// swap.
// Thread-safety: as Warehouse; every call sends its statements on its own HTTP connection.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "warehouse/clickhouse/clickhouse_http.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

class ClickHouseWarehouse final : public Warehouse {
 public:
  // `database` is the current database of the caller's own SQL (Execute, Query) once it exists. Throws
  // SLU-WAREHOUSE-030/-031/-032 when the server cannot be used.
  static std::unique_ptr<ClickHouseWarehouse> Open(ClickHouseEndpoint endpoint, std::string database);
  ~ClickHouseWarehouse() override;

  const Capabilities& capabilities() const override;
  sql::Dialect dialect() const override { return sql::Dialect::kClickHouse; }
  void Execute(const std::string& sql) override;
  Rows Query(const std::string& sql) override;
  std::optional<TableInfo> Describe(const Relation& relation) override;
  std::vector<TableInfo> ListRelations() override;
  // system.tables: engine, engine_full, sorting_key, partition_key, create_table_query (views' and materialized
  // views' definition, a materialized view's TO table).
  std::vector<CatalogEntry> CatalogOf(const std::string& name_space) override;
  std::vector<CatalogEntry> CatalogOf(const std::vector<Relation>& relations) override;
  // system.parts: the rows of the active parts; nullopt when a concurrent DROP fails the scan every time.
  std::optional<std::map<std::string, int64_t>> CatalogRowCounts(const std::string& name_space) override;
  // system.parts: "<highest block number>/<active parts>" of the table.
  std::string InsertWatermark(const Relation& relation) override;
  // system.processes: statements starting with INSERT that have run for `running_for` or longer.
  int64_t RunningInserts(std::chrono::duration<double> running_for) override;
  void EnsureSchema(const std::string& name) override;
  // The `::` cast, window functions (OVER) and the DateTime64 type, on a server without them (LackingFeatureIn).
  void CheckRunnable(const std::string& select_sql) const override;
  WriteResult ReplaceTable(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                               const std::string& date_column, DateWindow window, LedgerEntry ledger,
                               DateRangeMode mode = DateRangeMode::kWindow) override;
  WriteResult ReplaceView(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) override;
  std::vector<WriteResult> RecordMaterialized(
      const std::vector<std::pair<Relation, LedgerEntry>>& entries) override;
  std::vector<LedgerEntry> ReadLedger() override;
  void DropRelation(const Relation& relation) override;
  // KILL QUERY for the statements in flight; later statements fail with SLU-WAREHOUSE-008 before they are sent.
  void Interrupt() override;
  void ObserveStatements(StatementObserver observer) override;

  struct Impl;  // the .cpp's

 private:
  explicit ClickHouseWarehouse(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The staging tables of `relation` start with this name (in `_sluice`), whatever the run.
std::string StagingPrefix(const Relation& relation);
// What follows StagingPrefix in the names of the staging tables process `pid` of this host writes: "<host>_<pid>",
// <host> 8 hex digits of the host name's sha256.
std::string StagingOwner(pid_t pid);

}  // namespace sluice
