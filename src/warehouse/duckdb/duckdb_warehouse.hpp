// The embedded DuckDB backend.
//
// Opens one database file (created when missing, parent folders too) with autoinstall/autoload of
// extensions disabled. Read-write opens take an exclusive advisory lock (flock) on `<file>.lock` for the
// life of the object: a second sluice writer waits. DuckDB itself lets one process at a time open a file (a
// read-only open included), so an open also waits while another process (a DuckDB shell, `sluice status`) has
// it open. Either wait follows the WaitPolicy: announced once with a line naming the file and the holder's pid,
// bounded by its timeout (SLU-WAREHOUSE-007), stopped by its cancel flag (SLU-WAREHOUSE-008). Read-only opens
// take no lock and fail with SLU-WAREHOUSE-003 when the file is missing.
//
// Writes run in one transaction each on their own connection: for ReplaceTable
// `CREATE OR REPLACE TABLE … AS <select>` + ledger row; for ReplaceDateRange a staging temp table, then
// DELETE of the window, INSERT BY NAME of the in-window rows ordered by the date column, ledger row; for
// ReplaceView `CREATE OR REPLACE VIEW` + ledger row. A table write drops a view of the same name (and a
// view write a table) in the same transaction, so a model may change kind. Before its ledger row and COMMIT
// each write calls PausePoint("after_write_before_commit").
// Thread-safety: as Warehouse.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "warehouse/warehouse.hpp"

namespace sluice {

class DuckDbWarehouse final : public Warehouse {
 public:
  // Throws SLU-WAREHOUSE-002 when the file cannot be opened.
  static std::unique_ptr<DuckDbWarehouse> Open(const std::filesystem::path& file, bool read_only,
                                               const WaitPolicy& wait);
  ~DuckDbWarehouse() override;

  const Capabilities& capabilities() const override { return capabilities_; }
  sql::Dialect dialect() const override { return sql::Dialect::kDuckDb; }
  // "catalog"."schema"."name": the catalog is the file's stem, as DuckDB names an opened file.
  std::string QualifiedName(const Relation& relation) const override;
  void Execute(const std::string& sql) override;
  Rows Query(const std::string& sql) override;
  std::optional<TableInfo> Describe(const Relation& relation) override;
  std::vector<TableInfo> ListRelations() override;
  // duckdb_tables() and duckdb_views(): kinds, and views' CREATE VIEW statements.
  std::vector<CatalogEntry> CatalogOf(const std::string& name_space) override;
  std::vector<CatalogEntry> CatalogOf(const std::vector<Relation>& relations) override;
  void EnsureSchema(const std::string& name) override;
  WriteResult ReplaceTable(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                               const std::string& date_column, DateWindow window, LedgerEntry ledger,
                               DateRangeMode mode = DateRangeMode::kWindow) override;
  WriteResult ReplaceView(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) override;
  std::vector<LedgerEntry> ReadLedger() override;
  void DropRelation(const Relation& relation) override;
  // duckdb_interrupt on every open connection; later statements fail before they start.
  void Interrupt() override;
  void ObserveStatements(StatementObserver observer) override;

  const std::filesystem::path& file() const { return file_; }

 private:
  struct Handles;
  DuckDbWarehouse(std::filesystem::path file, std::unique_ptr<Handles> handles, int lock_fd);

  std::filesystem::path file_;
  std::unique_ptr<Handles> handles_;
  int lock_fd_ = -1;
  Capabilities capabilities_;
};

}  // namespace sluice
