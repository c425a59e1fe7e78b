// Warehouse: the interface every backend implements, and the plain data it speaks.
//
// Every write is atomic: a reader sees the old or the new contents of a relation, never an empty or
// partial one, and a failure (or a kill -9) before commit leaves the old contents. Each write also
// appends a row to the warehouse's own ledger (schema `_sluice`, table `ledger`) in the same transaction
// where the backend has transactions, so the record that a partition was materialized can never
// disagree with the data.
//
// Thread-safety: implementations are safe to call from several threads at once, as long as no two
// threads write the same relation concurrently (the engine guarantees that, across the concurrent runs of a backfill
// too: engine/relation_write_locks.hpp). DuckDB, for one, fails one of two concurrent first writes (or column
// additions) of one table with a catalog write-write conflict, even on disjoint date windows.
// Errors: driver errors are translated in one place per backend into sluice::Error with code
// SLU-WAREHOUSE-NNN naming the relation being worked on; a SqlError when the backend says where in the caller's
// SELECT the error is.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sluice/date.hpp"
#include "core/diagnostic.hpp"
#include "sql/token.hpp"

namespace sluice {

// Plain flags describing what a backend can do; read from the server at connect time where it varies (ClickHouse
// probes each once per open, warehouse/clickhouse/clickhouse_capabilities.hpp).
struct Capabilities {
  bool transactions = false;               // BEGIN/COMMIT across DDL and DML
  bool create_or_replace_view = false;     // CREATE OR REPLACE VIEW
  bool exchange_tables = false;            // EXCHANGE TABLES a AND b (an atomic swap of two tables)
  bool native_date_partitioning = false;   // physical partitions by a date column
  bool datetime64 = false;                 // the DateTime64 type (toDateTime64, now64)
  bool ttl = false;                        // TTL clauses on MergeTree tables
  bool double_colon_cast = false;          // expr::Type
  bool window_functions = false;           // f() OVER (…)
  bool is_not_distinct_from = false;       // the function isNotDistinctFrom(a, b)
  bool drop_sync = false;                  // DROP TABLE … SYNC
  bool atomic_databases = false;           // ClickHouse's Atomic database engine
  // Rows a materialized view writes into its TO table fire the materialized views reading that table. Seen absent on
  // ClickHouse 18.16 (there they fire only views defined FROM the writing view); taken as present from 19.1 on.
  bool materialized_view_cascade = false;
  // The Kafka engine's virtual columns (_topic, _partition, _offset, _timestamp, _headers) that a managed source's
  // landing view reads. Seen absent on ClickHouse 18.16; taken as present from 19.1 on.
  bool kafka_virtual_columns = false;
  // CREATE MATERIALIZED VIEW … TO table: views that write every insert of their source into a table, which the catalog
  // lists with their target (CatalogEntry::target). ClickHouse.
  bool materialized_views = false;
  // Tables carry an engine, a sorting key and a partition key of their own that the catalog reports
  // (CatalogEntry::engine, sorting_key, partition_key), so a live table can differ from its model by them. ClickHouse.
  bool table_engines = false;
  // CREATE OR REPLACE VIEW may change the view's columns in any way. PostgreSQL's refuses any change but appended
  // columns, so a view whose columns change is dropped and created there.
  bool replace_view_changes_columns = false;
  // Unquoted identifiers are folded to lower case (PostgreSQL), so a name with upper-case letters must be quoted to
  // name what was created quoted.
  bool folds_unquoted_identifiers = false;
  std::string server_version;              // as the server reports it, e.g. "18.16.1"; the library version embedded
};

struct Relation {
  std::string name_space;  // schema / database
  std::string name;
  std::string ToString() const { return name_space + "." + name; }
  auto operator<=>(const Relation&) const = default;
};

// "schema.name" lower-cased: the key under which relations compare, since warehouses resolve unquoted and quoted
// identifiers alike case-insensitively (DuckDB) and Sluice never creates two relations differing only in case.
std::string RelationKey(const Relation& relation);

struct ColumnInfo {
  std::string name;
  std::string type;  // as the warehouse spells it, e.g. "DATE", "BIGINT", "DECIMAL(18,2)"
  bool operator==(const ColumnInfo&) const = default;
};

struct TableInfo {
  Relation relation;
  bool is_view = false;
  std::vector<ColumnInfo> columns;  // in table order
};

enum class RelationKind { kTable, kView, kMaterializedView };

// What the catalog keeps about one relation besides its columns: what deploy/ compares a live object with. Fields a
// backend has no notion of stay empty.
struct CatalogEntry {
  Relation relation;
  RelationKind kind = RelationKind::kTable;
  // The table engine's name (ClickHouse: MergeTree, SummingMergeTree, Kafka, View, MaterializedView …) and the engine
  // with its arguments and clauses as the server spells it (ClickHouse: system.tables.engine_full). Capabilities::
  // table_engines says whether they are there.
  std::string engine;
  std::string engine_full;
  std::string sorting_key;    // as the server spells it, e.g. "event_date, id"
  std::string partition_key;  // as the server spells it, e.g. "toYYYYMMDD(event_date)"
  // A view's or materialized view's text as the server keeps it: ClickHouse its CREATE statement, DuckDB its CREATE
  // VIEW statement, PostgreSQL `SELECT * FROM ns.relation` when the view reads exactly one relation with exactly its
  // columns in order (PostgreSQL keeps only the parsed form, `*` expanded), else its definition. Empty for tables.
  std::string definition;
  // A materialized view's TO table (its namespace the view's own when the statement does not say).
  std::optional<Relation> target;
};

// A query result with every value rendered as text (NULL → nullopt). Small results only.
struct Rows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

// One ledger row: what a write materialized. `window` is empty for unpartitioned writes.
struct LedgerEntry {
  std::string asset;                 // AssetKey text, e.g. "gold.daily_revenue"
  std::optional<DateWindow> window;  // the half-open window a date-range write owned
  std::string run_id;
  int64_t row_count = 0;             // rows written (filled in by the backend when it writes)
  std::string sql_hash;              // sha256 of the SQL (or seed file) that produced the data
  std::string written_at;            // ISO-8601 UTC, filled in by the backend when it writes
  std::optional<Relation> relation;  // what the write replaced, filled in by the backend (absent in old ledgers)
};

// A ledger row as the backends select it, every value as text: asset, window start, window end (YYYY-MM-DD or NULL),
// run id, row count, sql hash, written at (ISO-8601 UTC), relation schema, relation name (NULL in old ledgers).
LedgerEntry LedgerEntryFromRow(const std::vector<std::optional<std::string>>& row);

struct WriteResult {
  int64_t rows_written = 0;
  int64_t rows_dropped = 0;  // rows the SELECT produced outside the window (date-range writes only)
  std::string written_at;    // the ledger row's time (ISO-8601 UTC), so the state store can match it exactly
};

// A write's SELECT failed (to bind, or while running) at a known place in it: `offset` is a byte offset into the
// `select_sql` the caller passed, so the caller can point at the model file.
class SqlError : public Error {
 public:
  SqlError(Diagnostic diagnostic, size_t offset) : Error(std::move(diagnostic)), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

// A CSV file to load as a table. `columns` (name → type) may be empty: the warehouse infers types.
struct SeedFile {
  std::string path;  // absolute
  std::vector<std::pair<std::string, std::string>> columns;
  std::string file;  // as errors name it (relative to the project root); empty: `path`
};

// How opening a warehouse waits for another process that holds it.
struct WaitPolicy {
  // Called once, with a line naming what is waited for, when opening has to wait.
  std::function<void(const std::string&)> on_wait;
  // How long to wait in all before giving up (SLU-WAREHOUSE-007); nullopt waits as long as it takes, zero gives
  // up at once, without calling on_wait.
  std::optional<std::chrono::milliseconds> timeout;
  // When set and it becomes true, waiting stops with SLU-WAREHOUSE-008.
  const std::atomic<bool>* cancel = nullptr;
  // The flag of the command that sets `timeout` (e.g. "--wait-timeout"), offered by the wait's messages. Empty: the
  // command has none, and no message offers one.
  std::string timeout_flag;
};

// Receives, after each write (committed or not), the statements the write sent in order, as the backend ran
// them: with fully qualified names, so they can be pasted into the engine's console.
using StatementObserver = std::function<void(const Relation& relation, const std::vector<std::string>& statements)>;

class Warehouse {
 public:
  virtual ~Warehouse() = default;

  virtual const Capabilities& capabilities() const = 0;
  virtual sql::Dialect dialect() const = 0;

  // The relation's name as SQL run on this warehouse (and pasted into its console) must spell it: quoted, and
  // qualified as far as needed to be unambiguous.
  virtual std::string QualifiedName(const Relation& relation) const;

  virtual void Execute(const std::string& sql) = 0;
  virtual Rows Query(const std::string& sql) = 0;

  // The relation's kind and columns, or nullopt when it does not exist.
  virtual std::optional<TableInfo> Describe(const Relation& relation) = 0;
  // Every user relation (tables and views, Sluice's own `_sluice` schema excluded) with its columns,
  // in one catalog query whatever the number of relations. Sorted by relation.
  virtual std::vector<TableInfo> ListRelations() = 0;

  // The catalog entries of every relation of `name_space` (`_sluice` included), sorted by name, in one catalog
  // query. Throws SLU-WAREHOUSE-034 where the backend cannot read them (the default).
  virtual std::vector<CatalogEntry> CatalogOf(const std::string& name_space);
  // The catalog entries of those of `relations` that exist (in any namespace, `_sluice` included), sorted by relation,
  // in one catalog query. Throws SLU-WAREHOUSE-034 where the backend cannot read them (the default).
  virtual std::vector<CatalogEntry> CatalogOf(const std::vector<Relation>& relations);
  // The rows of each table of `name_space` that holds any, by name, as the catalog counts them without reading the
  // data (ClickHouse: the active parts); a table the map lacks is empty. nullopt when the backend keeps no such count
  // (the default) or the catalog could not be read (a concurrent DROP): callers use it for warnings only.
  virtual std::optional<std::map<std::string, int64_t>> CatalogRowCounts(const std::string& name_space);
  // A text that changes whenever rows are inserted into the table `relation`, whatever their number (ClickHouse: the
  // highest block number of its active parts and their count, "max/count"; "" when it has no parts). Throws
  // SLU-WAREHOUSE-034 where the backend has no such mark (the default).
  virtual std::string InsertWatermark(const Relation& relation);
  // How many INSERT statements have been running on the server for at least `running_for` (ClickHouse:
  // system.processes). Throws SLU-WAREHOUSE-034 where the backend cannot say (the default).
  virtual int64_t RunningInserts(std::chrono::duration<double> running_for);

  virtual void EnsureSchema(const std::string& name) = 0;

  // Returns when this server can run `select_sql` (a SELECT the caller will write with the methods below); otherwise
  // throws a SqlError located at the first place in it that uses a feature Capabilities says the server lacks
  // (SLU-CLICKHOUSE-001 on ClickHouse), so that a run can refuse a model before anything is written. The default
  // accepts everything: a backend whose server runs all its dialect allows has nothing to check.
  virtual void CheckRunnable(const std::string& select_sql) const { (void)select_sql; }

  // Atomically replaces `relation` (created when missing) with the rows of `select_sql`.
  virtual WriteResult ReplaceTable(const Relation& relation, const std::string& select_sql,
                                   LedgerEntry ledger) = 0;

  // Atomically replaces exactly the rows of `relation` whose `date_column` falls in `window` with the rows
  // of `select_sql` in that window; rows of the SELECT outside the window are dropped and counted. Creates
  // the table (date-partitioned where the backend can) on first write. Rows of other dates are untouched.
  // The table's columns follow the SELECT's where they can without touching other dates: a column the SELECT adds
  // is added (NULL in other dates); a column it no longer selects, or selects with another type, is an error
  // (SLU-WAREHOUSE-013) that only a whole-table write resolves.
  // With kWholeTable the table is replaced by the window's rows (a full refresh), its columns those of the SELECT.
  enum class DateRangeMode { kWindow, kWholeTable };
  virtual WriteResult ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                                       const std::string& date_column, DateWindow window, LedgerEntry ledger,
                                       DateRangeMode mode = DateRangeMode::kWindow) = 0;

  // Atomically creates or replaces the view `relation` as `select_sql` (with its ledger row).
  virtual WriteResult ReplaceView(const Relation& relation, const std::string& select_sql, LedgerEntry ledger);

  // Atomically replaces `relation` with the contents of a CSV file.
  virtual WriteResult LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) = 0;

  // Appends the ledger rows of relations filled by statements of the caller's (materialized views' targets after
  // their replay), one result per entry in order: the row counts are read from the relations. Backends whose writes
  // all go through the methods above need not support it (SLU-WAREHOUSE-033).
  virtual std::vector<WriteResult> RecordMaterialized(const std::vector<std::pair<Relation, LedgerEntry>>& entries);

  // Every ledger row, oldest first. Empty when the ledger does not exist yet.
  virtual std::vector<LedgerEntry> ReadLedger() = 0;

  // Drops `relation`, a table or a view; nothing happens when it does not exist.
  virtual void DropRelation(const Relation& relation) = 0;

  // Stops the statements running now and makes every later statement fail with SLU-WAREHOUSE-008, so that the
  // writes in progress roll back. Callable from any thread (a signal handler's thread included); irreversible.
  virtual void Interrupt() {}

  // Set before writes start; the default backend records nothing.
  virtual void ObserveStatements(StatementObserver observer) { (void)observer; }
};

}  // namespace sluice
