// BigQueryStatements: every GoogleSQL statement the BigQuery backend sends, rendered from structured input.
//
// Relations are written `project.dataset.table` (one quoted path); names and values go through sql/dialect.hpp. The
// caller's SELECT is embedded byte for byte as a subquery on lines of its own, and each statement records where it
// sits (BigQueryStatement::select_begin) so an error BigQuery places there maps back to the model.
// Thread-safety: immutable after construction.
#pragma once

#include <string>
#include <vector>

#include "sluice/date.hpp"
#include "warehouse/bigquery/bigquery_client.hpp"
#include "warehouse/seed_table.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

constexpr const char* kBigQuerySluiceDataset = "_sluice";
// GoogleSQL's limit on the length of a query's text; a seed rendered longer than this is refused.
constexpr size_t kMaxQueryBytes = 1024 * 1024;

class BigQueryStatements {
 public:
  BigQueryStatements(std::string project, std::string location);

  std::string Name(const Relation& relation) const;       // `project.dataset.table`
  std::string Dataset(const std::string& dataset) const;  // `project.dataset`

  // CREATE SCHEMA IF NOT EXISTS `p.d` OPTIONS(location = 'EU')
  std::string CreateSchema(const std::string& dataset) const;
  // SELECT * FROM (<select>): dry-run for the SELECT's columns without running it.
  static BigQueryStatement SelectAll(const std::string& select_sql);
  // CREATE OR REPLACE TABLE t AS SELECT * FROM (<select>); then SELECT COUNT(*) FROM t (the script's result).
  BigQueryStatement ReplaceTable(const Relation& relation, const std::string& select_sql) const;
  // The first write of a date-range table: empty, with the SELECT's columns, PARTITION BY the date column.
  BigQueryStatement CreatePartitioned(const Relation& relation, const std::string& select_sql,
                                      const std::string& date_column) const;
  // One script, one job: the SELECT into a temporary table; ONE MERGE … ON FALSE that deletes the table's rows in the
  // window and inserts the SELECT's rows in the window (`columns` named explicitly); then the counts of the SELECT's
  // rows in the window and in all (the script's result: in_window, selected).
  BigQueryStatement ReplaceWindow(const Relation& relation, const std::string& select_sql,
                                  const std::string& date_column, DateWindow window,
                                  const std::vector<std::string>& columns) const;
  // The same for a full refresh: CREATE OR REPLACE TABLE … PARTITION BY … AS the window's rows, then the counts.
  BigQueryStatement ReplaceWholeTable(const Relation& relation, const std::string& select_sql,
                                      const std::string& date_column, DateWindow window) const;
  std::string AddColumn(const Relation& relation, const std::string& column, const std::string& type) const;
  BigQueryStatement ReplaceView(const Relation& relation, const std::string& select_sql) const;
  std::string Drop(const Relation& relation, bool is_view) const;
  // CREATE OR REPLACE TABLE from literal rows (STRUCTs in an UNNEST), or with the columns only for an empty seed.
  std::string LoadSeed(const Relation& relation, const SeedTable& table) const;

  std::string CreateLedger() const;
  std::string InsertLedger(const Relation& relation, const LedgerEntry& entry, int64_t row_count,
                           const std::string& written_at) const;
  std::string SelectLedger() const;
  // Every column of every table and view of the location but those of `_sluice` and of scripts' temporary tables
  // (hidden `_script…` datasets), with the relation's kind, in one query over
  // `region-<location>`.INFORMATION_SCHEMA: table_schema, table_name, table_type, column_name, data_type.
  std::string ListColumns() const;

  static std::string InWindow(const std::string& qualifier, const std::string& date_column, DateWindow window);

 private:
  std::string project_;
  std::string location_;
};

// The GoogleSQL names of the types ReadSeedCsv infers (every column may hold NULL).
inline const SeedTypeNames kBigQuerySeedTypes{"INT64", "FLOAT64", "DATE", "STRING", "", ""};

}  // namespace sluice
