// The BigQuery backend, over the REST API (bigquery_client.hpp) with Application Default Credentials
// (google_credentials.hpp). User docs: docs/bigquery.md.
//
// Namespaces are datasets of one project, created in the configured location (an existing dataset in another
// location is an error, SLU-WAREHOUSE-055, never recreated). Every write is one query job whose single mutating
// statement is atomic, BigQuery having no transactions across DDL:
//   ReplaceTable   CREATE OR REPLACE TABLE … AS SELECT (then the new table's count, in the same script);
//   ReplaceDateRange  the SELECT is dry-run for its columns (its date column must be a DATE); on first write the
//                  table is created empty with PARTITION BY <date column>; an existing table must be partitioned by
//                  day on that column (SLU-WAREHOUSE-014); added columns are added (ALTER TABLE … ADD COLUMN), removed
//                  or retyped ones refused (SLU-WAREHOUSE-013); then ONE script: the SELECT into a temporary table,
//                  ONE MERGE … ON FALSE that deletes the window's rows and inserts the SELECT's rows of the window,
//                  and the counts (rows outside the window are dropped and counted). kWholeTable: CREATE OR REPLACE
//                  TABLE … PARTITION BY … AS the window's rows;
//   ReplaceView    CREATE OR REPLACE VIEW;
//   LoadSeed       CREATE OR REPLACE TABLE … AS SELECT over the CSV's rows as literals (seeds up to 1 MB of SQL).
// A relation that changes kind (a table becoming a view, or a table whose partitioning changes) is dropped first:
// the one case a reader can see it missing. The ledger row (`_sluice`.`ledger`) is inserted right after the write.
// The mutating jobs of one table are capped at `max_concurrent_jobs_per_table` in flight from this object.
// Thread-safety: as Warehouse.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "warehouse/bigquery/bigquery_client.hpp"
#include "warehouse/bigquery/google_credentials.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct BigQueryOptions {
  BigQueryEndpoint endpoint;
  CredentialSearch credentials;
  RetryPolicy retry;
  int max_concurrent_jobs_per_table = 2;
};

class BigQueryWarehouse final : public Warehouse {
 public:
  // Finds the credentials (SLU-WAREHOUSE-050 when a named file is unusable); sends nothing yet.
  static std::unique_ptr<BigQueryWarehouse> Open(BigQueryOptions options);
  ~BigQueryWarehouse() override;

  const Capabilities& capabilities() const override;
  sql::Dialect dialect() const override { return sql::Dialect::kBigQuery; }
  // `project.dataset.table`
  std::string QualifiedName(const Relation& relation) const override;
  void Execute(const std::string& sql) override;
  Rows Query(const std::string& sql) override;
  std::optional<TableInfo> Describe(const Relation& relation) override;
  std::vector<TableInfo> ListRelations() override;
  void EnsureSchema(const std::string& name) override;
  WriteResult ReplaceTable(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult ReplaceDateRange(const Relation& relation, const std::string& select_sql, const std::string& date_column,
                               DateWindow window, LedgerEntry ledger,
                               DateRangeMode mode = DateRangeMode::kWindow) override;
  WriteResult ReplaceView(const Relation& relation, const std::string& select_sql, LedgerEntry ledger) override;
  WriteResult LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) override;
  std::vector<LedgerEntry> ReadLedger() override;
  void DropRelation(const Relation& relation) override;
  // jobs.cancel for the jobs in flight; later calls fail with SLU-WAREHOUSE-008 before anything is sent.
  void Interrupt() override;
  void ObserveStatements(StatementObserver observer) override;

  struct Impl;  // the .cpp's

 private:
  explicit BigQueryWarehouse(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
