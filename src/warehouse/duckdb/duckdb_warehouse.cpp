#include "warehouse/duckdb/duckdb_warehouse.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"
#include "core/text.hpp"
#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"
#include "warehouse/duckdb/duckdb_library.hpp"
#include "warehouse/embedded_select.hpp"
#include "warehouse/ledgered_write.hpp"
#include "warehouse/warehouse_error.hpp"
#include "warehouse/seed_table.hpp"

namespace sluice {

namespace {

constexpr sql::Dialect kDialect = sql::Dialect::kDuckDb;
constexpr std::string_view kLedgerSchema = "_sluice";
constexpr std::string_view kLedgerTable = "ledger";
constexpr std::string_view kPauseBeforeCommit = "after_write_before_commit";

// What DuckDB says about a failed statement. Sessions run with `errors_as_json`, so a message is JSON carrying the
// error's type, its text and (for most parser, binder and conversion errors) the byte position in the statement.
struct DuckDbFailure {
  duckdb_error_type type = DUCKDB_ERROR_INVALID;
  std::string message;              // "<Type> Error: <text>", as DuckDB prints it without JSON
  std::optional<size_t> position;   // in the statement
};

DuckDbFailure ParseFailure(duckdb_error_type type, std::string_view raw) {
  DuckDbFailure failure{type, std::string(raw), std::nullopt};
  // A parser error arrives as "Parser Error: {...}"; others as the bare object.
  size_t brace = raw.find('{');
  if (brace == std::string_view::npos) return failure;
  nlohmann::json parsed = nlohmann::json::parse(raw.substr(brace), nullptr, false);
  if (!parsed.is_object() || !parsed.contains("exception_message")) return failure;
  std::string kind = parsed.value("exception_type", std::string());
  failure.message = (kind.empty() ? "" : kind + " Error: ") + parsed.value("exception_message", std::string());
  std::string position = parsed.value("position", std::string());
  if (!position.empty() && position.find_first_not_of("0123456789") == std::string::npos && position.size() < 19) {
    failure.position = static_cast<size_t>(std::stoull(position));
  }
  return failure;
}

// The one place DuckDB errors become sluice::Error. `subject` is the relation worked on (or the file
// for kOpen); it may be empty for free-form statements.
Error TranslateDuckDbError(Operation operation, const std::string& subject, const DuckDbFailure& failure) {
  const duckdb_error_type type = failure.type;
  const std::string what = FailedOperation(operation, "DuckDB", subject, "cannot open DuckDB file " + subject);
  if (operation == Operation::kOpen) {
    return WarehouseError("SLU-WAREHOUSE-002", what + ": " + failure.message,
                          "DuckDB lets one process open a file read-write; close the other process or check the path "
                          "and its permissions");
  }
  if (type == DUCKDB_ERROR_INTERRUPT) {
    return WarehouseError("SLU-WAREHOUSE-008",
                          what + ": interrupted (the run was canceled); its transaction is rolled back", "");
  }
  const FailureKind kind = type == DUCKDB_ERROR_CATALOG                                   ? FailureKind::kMissing
                           : type == DUCKDB_ERROR_PARSER || type == DUCKDB_ERROR_SYNTAX ? FailureKind::kSyntax
                           : type == DUCKDB_ERROR_BINDER                                  ? FailureKind::kBind
                           : type == DUCKDB_ERROR_CONVERSION                              ? FailureKind::kConversion
                           : type == DUCKDB_ERROR_TRANSACTION                             ? FailureKind::kConflict
                                                                                          : FailureKind::kOther;
  return ClassifiedError(kind, what + ": " + failure.message, "DuckDB SQL",
                         kind == FailureKind::kConversion
                             ? "a value does not convert to the type asked for; check the data, or use TRY_CAST to "
                               "get NULL instead"
                             : "");
}

// A seed load's error about one value, located in the seed file: DuckDB's CSV reader names the file's line
// ("CSV Error on Line: 3", the header being line 1) and the column ("Error when converting column \"amount\".
// Could not convert string \"abc\" to 'BIGINT'"). nullopt when the message says neither.
std::optional<Error> LocatedSeedError(const SeedFile& seed, const std::string& subject, const Error& error) {
  const std::string& message = error.diagnostics().front().message;
  const std::string line_marker = "CSV Error on Line: ";
  const std::string column_marker = "converting column \"";
  const size_t line_at = message.find(line_marker);
  const size_t column_at = message.find(column_marker);
  if (line_at == std::string::npos || column_at == std::string::npos) return std::nullopt;
  const size_t digits = line_at + line_marker.size();
  const size_t line = std::strtoull(message.c_str() + digits, nullptr, 10);
  const size_t name_begin = column_at + column_marker.size();
  const size_t name_end = message.find('"', name_begin);
  if (line == 0 || name_end == std::string::npos) return std::nullopt;
  std::string problem = "DuckDB could not convert it";
  if (size_t could = message.find("Could not convert", name_end); could != std::string::npos) {
    problem = "DuckDB: " + message.substr(could, message.find('\n', could) - could);
  }
  return SeedValueError(seed, subject, line, message.substr(name_begin, name_end - name_begin), problem);
}

using Statement = EmbeddedStatement;

Statement Embedding(std::string before, const std::string& select_sql, std::string_view after = {}) {
  return sluice::Embedding(kDialect, std::move(before), select_sql, after);
}

std::string Quote(std::string_view identifier) { return sql::QuoteIdentifier(kDialect, identifier); }
std::string Literal(std::string_view text) { return sql::QuoteString(kDialect, text); }
// Relations are named with their catalog (the attached database, named after the file's stem): a schema
// named like the catalog would otherwise make `schema.table` ambiguous to DuckDB's binder.
std::string Qualified(const std::string& catalog, const Relation& relation) {
  return Quote(catalog) + "." + sql::QualifiedName(kDialect, relation.name_space, relation.name);
}
std::string LedgerName(const std::string& catalog) {
  return Qualified(catalog, Relation{std::string(kLedgerSchema), std::string(kLedgerTable)});
}

// A materialized duckdb_result, destroyed with the object.
class QueryResult {
 public:
  QueryResult() = default;
  QueryResult(const QueryResult&) = delete;
  QueryResult& operator=(const QueryResult&) = delete;
  ~QueryResult() { DuckDb().destroy_result(&result_); }

  duckdb_result* get() { return &result_; }
  size_t column_count() { return static_cast<size_t>(DuckDb().column_count(&result_)); }
  size_t row_count() { return static_cast<size_t>(DuckDb().row_count(&result_)); }
  std::string ColumnName(size_t column) {
    const char* name = DuckDb().column_name(&result_, column);
    return name == nullptr ? std::string() : std::string(name);
  }
  // The value as text; nullopt for NULL (and for a value DuckDB cannot render as text).
  std::optional<std::string> Text(size_t column, size_t row) {
    if (DuckDb().value_is_null(&result_, column, row)) return std::nullopt;
    char* text = DuckDb().value_varchar(&result_, column, row);
    if (text == nullptr) return std::nullopt;
    std::string value(text);
    DuckDb().free(text);
    return value;
  }
  std::string TextOrEmpty(size_t column, size_t row) { return Text(column, row).value_or(std::string()); }
  std::vector<std::string> ColumnNames() {
    std::vector<std::string> names;
    for (size_t i = 0; i < column_count(); ++i) names.push_back(ColumnName(i));
    return names;
  }

 private:
  duckdb_result result_{};
};

// The connections of one database: those in use, so that Interrupt reaches the statements running on them, and
// idle ones, kept for the next call so that each call does not pay for a new connection's session settings.
struct OpenConnections {
  std::mutex mutex;
  std::set<duckdb_connection> open;   // guarded by mutex
  std::vector<duckdb_connection> idle;  // guarded by mutex
  std::atomic<bool> interrupted{false};

  void Interrupt() {
    interrupted = true;
    std::lock_guard<std::mutex> lock(mutex);
    for (duckdb_connection connection : open) DuckDb().interrupt(connection);
  }

  duckdb_connection Acquire(duckdb_database database) {
    duckdb_connection connection = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!idle.empty()) {
        connection = idle.back();
        idle.pop_back();
        open.insert(connection);
        return connection;
      }
    }
    if (DuckDb().connect(database, &connection) == DuckDBError) {
      throw TranslateDuckDbError(Operation::kStatement, "",
                                 DuckDbFailure{DUCKDB_ERROR_CONNECTION, "cannot connect to the database", {}});
    }
    // A session setting: errors as JSON carry the position of what failed (ParseFailure).
    duckdb_result result{};
    DuckDb().query(connection, "SET errors_as_json = true", &result);
    DuckDb().destroy_result(&result);
    std::lock_guard<std::mutex> lock(mutex);
    open.insert(connection);
    return connection;
  }

  // `reusable`: the connection holds no state of the caller's (no open transaction, no settings of its own).
  void Release(duckdb_connection connection, bool reusable) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      open.erase(connection);
      if (reusable) {
        idle.push_back(connection);
        return;
      }
    }
    DuckDb().disconnect(&connection);
  }

  void CloseIdle() {
    std::lock_guard<std::mutex> lock(mutex);
    for (duckdb_connection& connection : idle) DuckDb().disconnect(&connection);
    idle.clear();
  }
};

// One duckdb_connection for the span of one call: DuckDB connections must not be shared across threads,
// and a connection is where a transaction lives.
class Session {
 public:
  Session(duckdb_database database, OpenConnections& connections)
      : connections_(connections), connection_(connections.Acquire(database)) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { connections_.Release(connection_, reusable_); }

  // Caller's SQL may leave state on the connection (an open transaction, a setting): it is not reused.
  void NotReusable() { reusable_ = false; }

  // Sends `statements` (each ending in ';') in the same call as the next statement: each call costs DuckDB more
  // than a short statement in it.
  void Prefix(std::string statements) { prefix_ = std::move(statements); }

  // When set, every statement run is appended to it.
  void RecordInto(std::vector<std::string>* statements) { recorded_ = statements; }

  // Runs the statement; throws the translated error naming `subject` on failure (a SqlError when DuckDB places
  // it inside the embedded SELECT).
  std::unique_ptr<QueryResult> Run(Statement statement, Operation operation, const std::string& subject) {
    if (connections_.interrupted) {
      throw TranslateDuckDbError(operation, subject, DuckDbFailure{DUCKDB_ERROR_INTERRUPT, "interrupted", {}});
    }
    if (!prefix_.empty()) {  // DuckDB reports positions in the whole text, so the SELECT moves with it
      statement.sql = prefix_ + statement.sql;
      if (statement.select_begin != std::string::npos) statement.select_begin += prefix_.size();
      prefix_.clear();
    }
    if (recorded_ != nullptr) recorded_->push_back(statement.sql);
    auto result = std::make_unique<QueryResult>();
    if (DuckDb().query(connection_, statement.sql.c_str(), result->get()) == DuckDBError) {
      const char* message = DuckDb().result_error(result->get());
      DuckDbFailure failure =
          ParseFailure(DuckDb().result_error_type(result->get()), message == nullptr ? "unknown error" : message);
      Error error = TranslateDuckDbError(operation, subject, failure);
      if (failure.position && *failure.position >= statement.select_begin &&
          *failure.position < statement.select_begin + statement.select_size) {
        throw SqlError(error.diagnostics().front(), *failure.position - statement.select_begin);
      }
      throw error;
    }
    return result;
  }
  std::unique_ptr<QueryResult> Run(std::string sql, Operation operation, const std::string& subject) {
    return Run(Statement{std::move(sql)}, operation, subject);
  }

  // Whether `sql` prepares (parses and binds) without error. Does not run it.
  bool Prepares(const std::string& sql) {
    duckdb_prepared_statement statement = nullptr;
    bool ok = DuckDb().prepare(connection_, sql.c_str(), &statement) == DuckDBSuccess;
    DuckDb().destroy_prepare(&statement);
    return ok;
  }

  // Runs a statement whose failure is not reported: ROLLBACK on an error path (the original error is
  // the one worth reporting) and cleanup after a commit.
  void RunIgnoringFailure(const char* sql) {
    if (recorded_ != nullptr) recorded_->push_back(sql);
    duckdb_result result{};
    DuckDb().query(connection_, sql, &result);
    DuckDb().destroy_result(&result);
  }

  int64_t Count(const std::string& sql, Operation operation, const std::string& subject) {
    auto result = Run(sql, operation, subject);
    return std::stoll(result->TextOrEmpty(0, 0));
  }

 private:
  OpenConnections& connections_;
  duckdb_connection connection_ = nullptr;
  bool reusable_ = true;
  std::string prefix_;
  std::vector<std::string>* recorded_ = nullptr;
};

// BEGIN on construction; ROLLBACK on destruction unless Commit() succeeded.
class Transaction {
 public:
  // BEGIN goes with the transaction's first statement.
  Transaction(Session& session, std::string subject) : session_(session), subject_(std::move(subject)) {
    session_.Prefix("BEGIN TRANSACTION;\n");
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    session_.Prefix("");
    if (!finished_) session_.RunIgnoringFailure("ROLLBACK");
  }

  void Commit() { CommitAfter(""); }

  // Runs `last` (when not empty) and COMMIT in one call: each call costs DuckDB more than the statement in it.
  void CommitAfter(const std::string& last) {
    PausePoint(kPauseBeforeCommit);
    session_.Run(last.empty() ? std::string("COMMIT") : last + ";\nCOMMIT", Operation::kWrite, subject_);
    finished_ = true;
  }

 private:
  Session& session_;
  std::string subject_;
  bool finished_ = false;
};

std::string LedgerInsertSql(const std::string& catalog, const Relation& relation, const LedgerEntry& entry,
                            int64_t row_count, const std::string& written_at) {
  auto date_or_null = [](std::optional<Date> date) {
    return date ? sql::DateLiteral(kDialect, *date) : std::string("NULL");
  };
  // written_at arrives as ISO-8601 with a trailing Z; DuckDB's TIMESTAMP cast wants it without the zone.
  std::string timestamp = written_at;
  if (!timestamp.empty() && timestamp.back() == 'Z') timestamp.pop_back();
  std::string sql = "INSERT INTO " + LedgerName(catalog) +
                    " (asset, window_start, window_end, run_id, row_count, sql_hash, written_at, relation_schema, relation_name)"
                    " VALUES (";
  sql += Literal(entry.asset) + ", ";
  sql += date_or_null(entry.window ? std::optional<Date>(entry.window->start) : std::nullopt) + ", ";
  sql += date_or_null(entry.window ? std::optional<Date>(entry.window->end) : std::nullopt) + ", ";
  sql += Literal(entry.run_id) + ", ";
  sql += std::to_string(row_count) + ", ";
  sql += Literal(entry.sql_hash) + ", ";
  sql += "CAST(" + Literal(timestamp) + " AS TIMESTAMP), ";
  sql += Literal(relation.name_space) + ", " + Literal(relation.name) + ")";
  return sql;
}

// The catalog query behind Describe and ListRelations: every user relation of the open database with its
// columns (one row per column; a relation without columns yields one row with NULL column fields).
std::string CatalogSql(const Relation* only) {
  std::string sql =
      "SELECT t.table_schema, t.table_name, t.table_type, c.column_name, c.data_type\n"
      "FROM information_schema.tables AS t\n"
      "LEFT JOIN information_schema.columns AS c\n"
      "  ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema\n"
      "  AND c.table_name = t.table_name\n"
      "WHERE t.table_catalog = current_database()\n"
      "  AND t.table_schema NOT IN (" +
      Literal(kLedgerSchema) + ", " + Literal("information_schema") + ", " + Literal("pg_catalog") + ")\n";
  if (only != nullptr) {
    // DuckDB resolves identifiers case-insensitively, so lookups do too.
    sql += "  AND lower(t.table_schema) = lower(" + Literal(only->name_space) + ")\n";
    sql += "  AND lower(t.table_name) = lower(" + Literal(only->name) + ")\n";
  }
  sql += "ORDER BY t.table_schema, t.table_name, c.ordinal_position";
  return sql;
}

// The query behind CatalogOf: the tables and views of the open database that `filter` (a condition on schema_name
// and `name`) selects, with views' CREATE VIEW statements, sorted by relation.
std::string CatalogEntriesSql(const std::function<std::string(std::string_view name)>& filter) {
  return "SELECT schema_name, table_name, false, NULL FROM duckdb_tables() WHERE database_name = current_database() "
         "AND (" + filter("table_name") + ")\n"
         "UNION ALL SELECT schema_name, view_name, true, sql FROM duckdb_views() WHERE database_name = "
         "current_database() AND NOT internal AND (" + filter("view_name") + ")\n"
         "ORDER BY 1, 2";
}

std::vector<CatalogEntry> CatalogEntries(QueryResult& result) {
  std::vector<CatalogEntry> entries;
  for (size_t row = 0; row < result.row_count(); ++row) {
    CatalogEntry entry;
    entry.relation = Relation{result.TextOrEmpty(0, row), result.TextOrEmpty(1, row)};
    if (result.TextOrEmpty(2, row) == "true") {
      entry.kind = RelationKind::kView;
      entry.definition = result.TextOrEmpty(3, row);
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<TableInfo> CatalogRows(QueryResult& result) {
  std::vector<TableInfo> infos;
  for (size_t row = 0; row < result.row_count(); ++row) {
    Relation relation{result.TextOrEmpty(0, row), result.TextOrEmpty(1, row)};
    if (infos.empty() || infos.back().relation != relation) {
      infos.push_back(TableInfo{relation, result.TextOrEmpty(2, row) == "VIEW", {}});
    }
    std::optional<std::string> column = result.Text(3, row);
    if (column) infos.back().columns.push_back(ColumnInfo{*column, result.TextOrEmpty(4, row)});
  }
  std::sort(infos.begin(), infos.end(),
            [](const TableInfo& a, const TableInfo& b) { return a.relation < b.relation; });
  return infos;
}

// What the body of a write works with: its connection (inside the open transaction), the relation's
// name for messages, and cleanup to run once the transaction has committed.
struct WriteScope {
  Session& session;
  const std::string& catalog;
  std::string subject;
  std::vector<std::string> after_commit;
  std::optional<bool> existing_is_view;  // the relation before the write: nullopt when absent
  bool writes_view = false;              // what the write leaves: a view, or a table
};

// Drops the relation inside the write's transaction when it exists as the other kind (a view before a table
// write, a table before a view write): CREATE OR REPLACE refuses to replace an object of another kind. Returns
// whether the relation exists (now) as the kind the write makes.
bool DropIfOtherKind(WriteScope& scope, const Relation& relation, bool writing_view) {
  scope.writes_view = writing_view;
  if (!scope.existing_is_view) return false;
  if (*scope.existing_is_view == writing_view) return true;
  scope.session.Run(std::string(writing_view ? "DROP TABLE " : "DROP VIEW ") + Qualified(scope.catalog, relation),
                    Operation::kWrite, scope.subject);
  return false;
}

// The columns of a table (a temporary one included) as DESCRIBE names and types them.
std::vector<ColumnInfo> DescribeColumns(Session& session, const std::string& table, const std::string& subject) {
  auto result = session.Run("SELECT column_name, column_type FROM (DESCRIBE " + table + ")", Operation::kWrite,
                            subject);
  std::vector<ColumnInfo> columns;
  for (size_t row = 0; row < result->row_count(); ++row) {
    columns.push_back(ColumnInfo{result->TextOrEmpty(0, row), result->TextOrEmpty(1, row)});
  }
  return columns;
}

// Brings the partitioned table `target` to the columns of the SELECT's rows in `staging`, inside the write's
// transaction: added columns are added; removed or retyped ones throw SLU-WAREHOUSE-013.
void EvolveColumns(Session& session, const std::string& target, const std::string& staging,
                   const std::string& subject) {
  std::vector<ColumnInfo> table = DescribeColumns(session, target, subject);
  std::vector<ColumnInfo> selected = DescribeColumns(session, staging, subject);
  auto find = [](const std::vector<ColumnInfo>& columns, const std::string& name) -> const ColumnInfo* {
    for (const ColumnInfo& column : columns) {
      if (EqualsIgnoringAsciiCase(column.name, name)) return &column;
    }
    return nullptr;
  };
  // A retyped column is fine when its new values convert to the table's type implicitly (INTEGER into BIGINT).
  std::vector<std::pair<const ColumnInfo*, const ColumnInfo*>> retyped;  // table column, selected column
  std::string changes;
  for (const ColumnInfo& column : table) {
    const ColumnInfo* now = find(selected, column.name);
    if (now == nullptr) {
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + column.name + "\" is no longer selected";
    } else if (now->type != column.type) {
      retyped.emplace_back(&column, now);
    }
  }
  if (!retyped.empty()) {
    std::string check = "SELECT ";
    for (size_t i = 0; i < retyped.size(); ++i) {
      check += std::string(i > 0 ? ", " : "") + "can_cast_implicitly(NULL::" + retyped[i].second->type + ", NULL::" +
               retyped[i].first->type + ")";
    }
    auto fits = session.Run(check, Operation::kWrite, subject);
    for (size_t i = 0; i < retyped.size(); ++i) {
      if (fits->TextOrEmpty(i, 0) == "true") continue;
      changes += std::string(changes.empty() ? "" : "; ") + "column \"" + retyped[i].first->name + "\" was " +
                 retyped[i].first->type + " and is now " + retyped[i].second->type;
    }
  }
  if (!changes.empty()) {
    throw WarehouseError("SLU-WAREHOUSE-013", "the SELECT for " + subject + " no longer matches its table: " + changes,
                         "a partitioned table keeps the rows of its other dates, so only added columns are applied "
                         "in place; rebuild it with `sluice run --full-refresh --select <model>`");
  }
  for (const ColumnInfo& column : selected) {
    if (find(table, column.name) == nullptr) {
      session.Run("ALTER TABLE " + target + " ADD COLUMN " + Quote(column.name) + " " + column.type, Operation::kWrite,
                  subject);
    }
  }
}

std::string UniqueStagingName() {
  static std::atomic<uint64_t> counter{0};
  return "_sluice_staging_" + std::to_string(::getpid()) + "_" + std::to_string(counter.fetch_add(1));
}

// Waiting for another process to let go of the file: announces the wait once, polls, and gives up at the policy's
// timeout (SLU-WAREHOUSE-007) or when the run is canceled (SLU-WAREHOUSE-008). One waiter spans every stage of an
// open, so the timeout bounds the whole open.
class Waiter {
 public:
  Waiter(const WaitPolicy& policy, std::filesystem::path file)
      : policy_(policy), file_(std::move(file)), begin_(std::chrono::steady_clock::now()) {}

  // Called after an attempt failed because of `holder` (e.g. "it is open read-write by another process (pid
  // 12)"); returns when it is time for the next attempt.
  void Pause(const std::string& holder) {
    const bool no_wait = policy_.timeout && policy_.timeout->count() == 0;
    if (!announced_ && !no_wait && policy_.on_wait) {
      std::string limit = policy_.timeout            ? "giving up after " + Seconds(*policy_.timeout)
                          : policy_.timeout_flag.empty() ? "Ctrl-C to stop"
                                                     : "Ctrl-C to stop, " + policy_.timeout_flag + " to limit";
      policy_.on_wait("waiting for " + file_.string() + ": " + holder + " (" + limit + ")");
    }
    announced_ = true;
    if (policy_.cancel != nullptr && policy_.cancel->load()) {
      throw WarehouseError("SLU-WAREHOUSE-008", "canceled while waiting for " + file_.string() + ": " + holder, "");
    }
    auto waited = std::chrono::steady_clock::now() - begin_;
    if (policy_.timeout && waited >= *policy_.timeout) {
      throw WarehouseError(
          "SLU-WAREHOUSE-007",
          (no_wait ? std::string("cannot open ") : "gave up waiting after " + Seconds(*policy_.timeout) + " for ") +
              file_.string() + ": " + holder,
          "DuckDB lets one process at a time open a file, readers included: close the other process (a DuckDB "
          "shell, a notebook, another sluice run)" +
              (policy_.timeout_flag.empty() ? std::string(", or try again once it is done")
                                            : ", or wait longer with " + policy_.timeout_flag));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }

 private:
  static std::string Seconds(std::chrono::milliseconds duration) {
    return std::to_string((duration.count() + 999) / 1000) + "s";
  }

  const WaitPolicy& policy_;
  std::filesystem::path file_;
  std::chrono::steady_clock::time_point begin_;
  bool announced_ = false;
};

// Exclusive advisory lock on `<file>.lock`, holding our pid, taken by every read-write open so that a second
// sluice writer waits for the first. Returns the descriptor.
int AcquireWriterLock(const std::filesystem::path& file, Waiter& waiter) {
  std::filesystem::path lock_path = file;
  lock_path += ".lock";
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw WarehouseError("SLU-WAREHOUSE-004",
                         "cannot create the lock file " + lock_path.string() + ": " + std::strerror(errno),
                         "check that the folder is writable");
  }
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) {
      int error = errno;
      ::close(fd);
      throw WarehouseError("SLU-WAREHOUSE-004",
                           "cannot lock " + lock_path.string() + ": " + std::strerror(error), "");
    }
    char buffer[32] = {};
    ssize_t read_bytes = ::pread(fd, buffer, sizeof buffer - 1, 0);
    std::string holder =
        read_bytes > 0 ? std::string(buffer, static_cast<size_t>(read_bytes)) : std::string();
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
    try {
      waiter.Pause("it is open read-write by another sluice process (pid " +
                   (holder.empty() ? std::string("unknown") : holder) + ")");
    } catch (...) {
      ::close(fd);
      throw;
    }
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  // The pid is informational (shown to a waiting opener); failing to write it does not stop the open.
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] ssize_t written = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return fd;
}

// For an open that failed because another process holds DuckDB's own lock on the file: who holds it, e.g.
// "it is open by another process (pid 12, /usr/bin/duckdb)". nullopt for any other failure.
std::optional<std::string> LockHolder(const std::string& open_error) {
  if (open_error.find("Conflicting lock") == std::string::npos) return std::nullopt;
  static const std::regex kHolder(R"(Conflicting lock is held in (.*) \(PID (\d+)\))");
  std::smatch match;
  if (!std::regex_search(open_error, match, kHolder)) return std::string("it is open by another process");
  return "it is open by another process (pid " + match[2].str() + ", " + match[1].str() + ")";
}


}  // namespace

struct DuckDbWarehouse::Handles {
  duckdb_database database = nullptr;
  std::string catalog;  // the database's name in its own catalog (current_database())
  std::string version;  // the library's, e.g. "v1.4.4"
  // Serializes catalog DDL that concurrent writes would otherwise race on (CREATE SCHEMA of the same
  // schema, creation of the ledger), which DuckDB reports as a write-write conflict.
  std::mutex ddl_mutex;
  bool ledger_ready = false;            // guarded by ddl_mutex
  std::set<std::string> schemas_ready;  // guarded by ddl_mutex; lower-cased
  OpenConnections connections;
  StatementObserver observer;  // set before writes start
  // The kind of every relation of the database (lower-cased "schema.name" → is a view), read with one catalog
  // query by the first write that needs it, then kept by the writes: DuckDB grants a file to one process at a
  // time, so only this object changes its catalog, except through the caller's own SQL (Execute, Query), which
  // drops this knowledge. Guarded by kinds_mutex.
  std::mutex kinds_mutex;
  std::optional<std::map<std::string, bool>> kinds;

  ~Handles() {
    connections.CloseIdle();
    if (database != nullptr) DuckDb().close(&database);
  }

  // The caller's SQL may have changed the catalog.
  void ForgetCatalog() {
    {
      std::lock_guard<std::mutex> lock(kinds_mutex);
      kinds.reset();
    }
    std::lock_guard<std::mutex> lock(ddl_mutex);
    schemas_ready.clear();
  }

  // Whether `relation` is a view (true), a table (false), or absent (nullopt).
  std::optional<bool> KindOf(const Relation& relation) {
    std::lock_guard<std::mutex> lock(kinds_mutex);
    if (!kinds) {
      Session session(database, connections);
      auto result = session.Run(
          "SELECT schema_name, table_name, false FROM duckdb_tables() WHERE database_name = current_database()\n"
          "UNION ALL SELECT schema_name, view_name, true FROM duckdb_views() WHERE database_name = current_database()"
          " AND NOT internal",
          Operation::kCatalog, relation.ToString());
      kinds.emplace();
      for (size_t row = 0; row < result->row_count(); ++row) {
        (*kinds)[RelationKey({result->TextOrEmpty(0, row), result->TextOrEmpty(1, row)})] = result->TextOrEmpty(2, row) == "true";
      }
    }
    auto found = kinds->find(RelationKey(relation));
    if (found == kinds->end()) return std::nullopt;
    return found->second;
  }

  // After a committed write (`is_view`) or drop (nullopt) of `relation`.
  void Changed(const Relation& relation, std::optional<bool> is_view) {
    std::lock_guard<std::mutex> lock(kinds_mutex);
    if (!kinds) return;
    if (is_view) {
      (*kinds)[RelationKey(relation)] = *is_view;
    } else {
      kinds->erase(RelationKey(relation));
    }
  }

  void EnsureSchema(const std::string& name) {
    std::lock_guard<std::mutex> lock(ddl_mutex);
    std::string key = RelationKey({name, ""});
    if (schemas_ready.count(key)) return;
    Session session(database, connections);
    session.Run("CREATE SCHEMA IF NOT EXISTS " + Quote(catalog) + "." + Quote(name), Operation::kStatement, name);
    schemas_ready.insert(key);
  }

  void EnsureLedger() {
    std::lock_guard<std::mutex> lock(ddl_mutex);
    if (ledger_ready) return;
    Session session(database, connections);
    std::string ledger = LedgerName(catalog);
    session.Run("CREATE SCHEMA IF NOT EXISTS " + Quote(catalog) + "." + Quote(kLedgerSchema), Operation::kStatement,
                ledger);
    session.Run("CREATE TABLE IF NOT EXISTS " + ledger +
                    " (asset VARCHAR, window_start DATE, window_end DATE, run_id VARCHAR, row_count BIGINT,"
                    " sql_hash VARCHAR, written_at TIMESTAMP, relation_schema VARCHAR, relation_name VARCHAR)",
                Operation::kStatement, ledger);
    // A ledger created before writes recorded their relation gains the columns (NULL in its old rows).
    for (const char* column : {"relation_schema", "relation_name"}) {
      session.Run("ALTER TABLE " + ledger + " ADD COLUMN IF NOT EXISTS " + column + " VARCHAR", Operation::kStatement,
                  ledger);
    }
    ledger_ready = true;
  }

  // Everything a write needs before its transaction: the target schema and the ledger. Both are
  // idempotent DDL outside the write's transaction, so concurrent first writes do not conflict.
  void PrepareWrite(const Relation& relation) {
    EnsureSchema(relation.name_space);
    EnsureLedger();
  }

  // Runs `body` in one transaction on its own connection, then the pause point, the ledger row and COMMIT
  // (LedgeredWrite); then the statements `body` queued in `after_commit` (dropping its staging objects).
  template <typename Body>
  WriteResult Write(const Relation& relation, const LedgerEntry& ledger, Body&& body) {
    std::vector<std::string> statements;
    std::optional<Session> session;
    std::optional<WriteScope> scope;
    return LedgeredWrite(
        observer, relation, statements,
        [&] {
          PrepareWrite(relation);
          std::optional<bool> existing = KindOf(relation);
          session.emplace(database, connections);
          scope.emplace(WriteScope{*session, catalog, relation.ToString(), {}, existing});
          if (observer) session->RecordInto(&statements);
        },
        [&] { return Transaction(*session, scope->subject); },
        [&](Transaction&) { return body(*scope); },
        [&](Transaction& transaction, const WriteResult& result) {
          transaction.CommitAfter(LedgerInsertSql(catalog, relation, ledger, result.rows_written, result.written_at));
          Changed(relation, scope->writes_view);
          // The data is committed: a cleanup failure must not report the write as failed, and the temporary
          // objects it drops vanish with the connection anyway.
          for (const std::string& sql : scope->after_commit) session->RunIgnoringFailure(sql.c_str());
        });
  }
};

DuckDbWarehouse::DuckDbWarehouse(std::filesystem::path file, std::unique_ptr<Handles> handles, int lock_fd)
    : file_(std::move(file)), handles_(std::move(handles)), lock_fd_(lock_fd) {
  capabilities_.transactions = true;
  capabilities_.create_or_replace_view = true;
  capabilities_.exchange_tables = false;
  capabilities_.native_date_partitioning = false;
  capabilities_.double_colon_cast = true;
  capabilities_.window_functions = true;
  capabilities_.replace_view_changes_columns = true;
  capabilities_.server_version = handles_->version;
}

DuckDbWarehouse::~DuckDbWarehouse() {
  handles_.reset();  // close the database before another writer may take the lock
  if (lock_fd_ >= 0) {
    ::flock(lock_fd_, LOCK_UN);
    ::close(lock_fd_);
  }
}

std::unique_ptr<DuckDbWarehouse> DuckDbWarehouse::Open(const std::filesystem::path& file, bool read_only,
                                                       const WaitPolicy& wait) {
  std::error_code error;
  std::filesystem::path absolute = std::filesystem::absolute(file, error);
  if (error) absolute = file;
  if (read_only) {
    if (!std::filesystem::exists(absolute, error)) {
      throw WarehouseError("SLU-WAREHOUSE-003", "DuckDB file " + absolute.string() + " does not exist",
                           "run a build first, or check [connection] path of the target");
    }
  } else if (absolute.has_parent_path()) {
    std::filesystem::create_directories(absolute.parent_path(), error);
    if (error) {
      throw WarehouseError(
          "SLU-WAREHOUSE-002",
          "cannot open DuckDB file " + absolute.string() + ": cannot create its folder: " + error.message(),
          "check the path and its permissions");
    }
  }

  Waiter waiter(wait, absolute);
  int lock_fd = read_only ? -1 : AcquireWriterLock(absolute, waiter);
  auto release_lock = [&] {
    if (lock_fd >= 0) ::close(lock_fd);
  };

  auto handles = std::make_unique<Handles>();
  while (true) {
    duckdb_config config = nullptr;
    if (DuckDb().create_config(&config) == DuckDBError) {
      release_lock();
      throw TranslateDuckDbError(Operation::kOpen, absolute.string(),
                                 DuckDbFailure{DUCKDB_ERROR_INVALID, "cannot create a config", {}});
    }
    DuckDb().set_config(config, "autoinstall_known_extensions", "false");
    DuckDb().set_config(config, "autoload_known_extensions", "false");
    if (read_only) DuckDb().set_config(config, "access_mode", "READ_ONLY");
    char* open_error = nullptr;
    duckdb_state state = DuckDb().open_ext(absolute.c_str(), &handles->database, config, &open_error);
    DuckDb().destroy_config(&config);
    if (state != DuckDBError) break;
    std::string message = open_error == nullptr ? "unknown error" : open_error;
    if (open_error != nullptr) DuckDb().free(open_error);
    handles->database = nullptr;
    // DuckDB's own lock: another process (a DuckDB shell, a reader) has the file open.
    std::optional<std::string> holder = LockHolder(message);
    try {
      if (!holder) {
        throw TranslateDuckDbError(Operation::kOpen, absolute.string(), DuckDbFailure{DUCKDB_ERROR_IO, message, {}});
      }
      waiter.Pause(*holder);
    } catch (...) {
      release_lock();
      throw;
    }
  }
  try {
    Session session(handles->database, handles->connections);
    auto opened = session.Run("SELECT current_database(), version()", Operation::kOpen, absolute.string());
    handles->catalog = opened->TextOrEmpty(0, 0);
    handles->version = opened->TextOrEmpty(1, 0);
  } catch (const Error&) {
    handles.reset();
    release_lock();
    throw;
  }
  return std::unique_ptr<DuckDbWarehouse>(new DuckDbWarehouse(absolute, std::move(handles), lock_fd));
}

void DuckDbWarehouse::Execute(const std::string& sql) {
  Session session(handles_->database, handles_->connections);
  session.NotReusable();
  handles_->ForgetCatalog();
  session.Run(sql, Operation::kStatement, "");
}

Rows DuckDbWarehouse::Query(const std::string& sql) {
  Session session(handles_->database, handles_->connections);
  session.NotReusable();
  handles_->ForgetCatalog();
  // Casting every column to VARCHAR in SQL renders nested and zoned types too, which the result API
  // cannot; statements that cannot be a subquery (PRAGMA, ...) run as they are.
  std::string as_text = Embedding("SELECT COLUMNS(*)::VARCHAR FROM ", sql).sql;
  std::unique_ptr<QueryResult> result = session.Prepares(as_text)
                                            ? session.Run(as_text, Operation::kStatement, "")
                                            : session.Run(sql, Operation::kStatement, "");
  Rows rows;
  rows.columns = result->ColumnNames();
  for (size_t row = 0; row < result->row_count(); ++row) {
    std::vector<std::optional<std::string>> values;
    for (size_t column = 0; column < rows.columns.size(); ++column)
      values.push_back(result->Text(column, row));
    rows.rows.push_back(std::move(values));
  }
  return rows;
}

std::string DuckDbWarehouse::QualifiedName(const Relation& relation) const {
  return Qualified(handles_->catalog, relation);
}

std::optional<TableInfo> DuckDbWarehouse::Describe(const Relation& relation) {
  Session session(handles_->database, handles_->connections);
  auto result = session.Run(CatalogSql(&relation), Operation::kCatalog, relation.ToString());
  std::vector<TableInfo> infos = CatalogRows(*result);
  if (infos.empty()) return std::nullopt;
  return infos.front();
}

std::vector<TableInfo> DuckDbWarehouse::ListRelations() {
  Session session(handles_->database, handles_->connections);
  auto result = session.Run(CatalogSql(nullptr), Operation::kCatalog, "the database");
  return CatalogRows(*result);
}

std::vector<CatalogEntry> DuckDbWarehouse::CatalogOf(const std::string& name_space) {
  Session session(handles_->database, handles_->connections);
  auto result = session.Run(
      CatalogEntriesSql([&](std::string_view) { return "schema_name = " + Literal(name_space); }),
      Operation::kCatalog, name_space);
  return CatalogEntries(*result);
}

std::vector<CatalogEntry> DuckDbWarehouse::CatalogOf(const std::vector<Relation>& relations) {
  if (relations.empty()) return {};
  auto filter = [&](std::string_view name) {
    std::string where;
    for (const Relation& relation : relations) {
      where += (where.empty() ? "(schema_name = " : " OR (schema_name = ") + Literal(relation.name_space) + " AND " +
               std::string(name) + " = " + Literal(relation.name) + ")";
    }
    return where;
  };
  Session session(handles_->database, handles_->connections);
  auto result = session.Run(CatalogEntriesSql(filter), Operation::kCatalog,
                            relations.size() == 1 ? relations.front().ToString() : "several relations");
  return CatalogEntries(*result);
}

void DuckDbWarehouse::EnsureSchema(const std::string& name) { handles_->EnsureSchema(name); }

WriteResult DuckDbWarehouse::ReplaceTable(const Relation& relation, const std::string& select_sql,
                                          LedgerEntry ledger) {
  return handles_->Write(relation, ledger, [&](WriteScope& scope) {
    Session& session = scope.session;
    const std::string& subject = scope.subject;
    std::string target = Qualified(scope.catalog, relation);
    DropIfOtherKind(scope, relation, false);
    // CREATE TABLE … AS answers with the number of rows it wrote.
    auto created = session.Run(Embedding("CREATE OR REPLACE TABLE " + target + " AS SELECT * FROM ", select_sql),
                               Operation::kWrite, subject);
    WriteResult result;
    result.rows_written = std::stoll(created->TextOrEmpty(0, 0));
    return result;
  });
}

WriteResult DuckDbWarehouse::ReplaceDateRange(const Relation& relation, const std::string& select_sql,
                                              const std::string& date_column, DateWindow window,
                                              LedgerEntry ledger, DateRangeMode mode) {
  ledger.window = window;  // the ledger records exactly the window this write owned
  // Temporary tables live in the catalog `temp`, schema `main`, private to the write's connection.
  std::string staging = Quote("temp") + "." + sql::QualifiedName(kDialect, "main", UniqueStagingName());
  return handles_->Write(relation, ledger, [&](WriteScope& scope) {
    Session& session = scope.session;
    const std::string& subject = scope.subject;
    std::string target = Qualified(scope.catalog, relation);
    scope.after_commit.push_back("DROP TABLE IF EXISTS " + staging);
    session.Run(Embedding("CREATE TEMP TABLE " + staging + " AS SELECT * FROM ", select_sql),
                Operation::kWrite, subject);
    std::vector<std::string> columns =
        session.Run("SELECT * FROM " + staging + " LIMIT 0", Operation::kWrite, subject)->ColumnNames();
    bool has_date_column = false;
    for (const std::string& column : columns)
      has_date_column = has_date_column || EqualsIgnoringAsciiCase(column, date_column);
    if (!has_date_column) {
      throw WarehouseError(
          "SLU-WAREHOUSE-010",
          "the SELECT for " + subject + " has no column \"" + date_column + "\", its partition date column",
          "select the date column (by that name) in the model, or fix the partitions column");
    }
    const bool existing = DropIfOtherKind(scope, relation, false);

    std::string column = Quote(date_column);
    std::string in_window = column + " >= " + sql::DateLiteral(kDialect, window.start) + " AND " + column +
                            " < " + sql::DateLiteral(kDialect, window.end);
    auto counts = session.Run("SELECT count(*) FILTER (WHERE " + in_window + "), count(*) FILTER (WHERE " +
                                  column + " IS NULL OR NOT (" + in_window + ")) FROM " + staging,
                              Operation::kWrite, subject);
    WriteResult result;
    result.rows_written = std::stoll(counts->TextOrEmpty(0, 0));
    result.rows_dropped = std::stoll(counts->TextOrEmpty(1, 0));

    std::string window_rows = "SELECT * FROM " + staging + " WHERE " + in_window + " ORDER BY " + column;
    if (mode == DateRangeMode::kWholeTable) {
      session.Run("CREATE OR REPLACE TABLE " + target + " AS " + window_rows, Operation::kWrite, subject);
      return result;
    }
    if (existing) {
      EvolveColumns(session, target, staging, subject);
    } else {
      // IF NOT EXISTS keeps the statements idempotent when pasted from target/run.
      session.Run("CREATE TABLE IF NOT EXISTS " + target + " AS SELECT * FROM " + staging + " LIMIT 0",
                  Operation::kWrite, subject);
    }
    session.Run("DELETE FROM " + target + " WHERE " + in_window, Operation::kWrite, subject);
    session.Run("INSERT INTO " + target + " BY NAME " + window_rows, Operation::kWrite, subject);
    return result;
  });
}

WriteResult DuckDbWarehouse::ReplaceView(const Relation& relation, const std::string& select_sql,
                                         LedgerEntry ledger) {
  return handles_->Write(relation, ledger, [&](WriteScope& scope) {
    DropIfOtherKind(scope, relation, true);
    scope.session.Run(
        Embedding("CREATE OR REPLACE VIEW " + Qualified(scope.catalog, relation) + " AS SELECT * FROM ", select_sql),
        Operation::kWrite, scope.subject);
    return WriteResult{};  // a view stores no rows
  });
}

WriteResult DuckDbWarehouse::LoadSeed(const Relation& relation, const SeedFile& seed, LedgerEntry ledger) {
  ReadSeedFile(relation, seed);  // the precondition every backend shares; DuckDB reads the file itself
  return handles_->Write(relation, ledger, [&](WriteScope& scope) {
    Session& session = scope.session;
    const std::string& subject = scope.subject;
    std::string target = Qualified(scope.catalog, relation);
    // Every option of the seed CSV dialect is set (docs/project-format.md; the project loader checks files against
    // it, core/seed_csv.hpp), so DuckDB's sniffer decides only the line ending and the types of
    // columns `columns` does not list, from every row: a `#` line is a row and not a comment, `""` is the empty
    // string, and a malformed row fails the load instead of being skipped or read as a header.
    std::string read = "read_csv(" + Literal(seed.path) +
                       ", header = true, delim = ',', quote = '\"', escape = '\"', skip = 0, comment = '',"
                       " encoding = 'utf-8', nullstr = '', allow_quoted_nulls = false, strict_mode = true,"
                       " null_padding = false, ignore_errors = false, sample_size = -1";
    if (!seed.columns.empty()) {
      read += ", types = {";
      for (size_t i = 0; i < seed.columns.size(); ++i) {
        if (i > 0) read += ", ";
        read += Literal(seed.columns[i].first) + ": " + Literal(seed.columns[i].second);
      }
      read += "}";
    }
    read += ")";
    DropIfOtherKind(scope, relation, false);
    std::unique_ptr<QueryResult> created;
    try {
      created = session.Run("CREATE OR REPLACE TABLE " + target + " AS SELECT * FROM " + read, Operation::kWrite,
                            subject);
    } catch (const Error& error) {
      if (std::optional<Error> located = LocatedSeedError(seed, subject, error)) throw *located;
      throw;
    }

    std::vector<std::string> loaded =
        session.Run("SELECT * FROM " + target + " LIMIT 0", Operation::kWrite, subject)->ColumnNames();
    for (const auto& [name, type] : seed.columns) {
      bool present = false;
      for (const std::string& column : loaded) present = present || EqualsIgnoringAsciiCase(column, name);
      if (!present) {
        throw WarehouseError("SLU-WAREHOUSE-011",
                             "seed column \"" + name + "\" of " + subject + " is not in " + seed.path,
                             "the CSV header must name every column listed under `columns`");
      }
    }
    WriteResult result;
    result.rows_written = std::stoll(created->TextOrEmpty(0, 0));
    return result;
  });
}

void DuckDbWarehouse::DropRelation(const Relation& relation) {
  Session session(handles_->database, handles_->connections);
  std::string subject = relation.ToString();
  Transaction transaction(session, subject);
  std::vector<TableInfo> existing = CatalogRows(*session.Run(CatalogSql(&relation), Operation::kWrite, subject));
  if (existing.empty()) return;
  const Relation& named = existing.front().relation;  // as the catalog spells it
  session.Run(std::string(existing.front().is_view ? "DROP VIEW " : "DROP TABLE ") + Qualified(handles_->catalog, named),
              Operation::kWrite, subject);
  transaction.Commit();
  handles_->Changed(relation, std::nullopt);
}

void DuckDbWarehouse::Interrupt() { handles_->connections.Interrupt(); }

void DuckDbWarehouse::ObserveStatements(StatementObserver observer) { handles_->observer = std::move(observer); }

std::vector<LedgerEntry> DuckDbWarehouse::ReadLedger() {
  Session session(handles_->database, handles_->connections);
  std::string ledger = LedgerName(handles_->catalog);
  int64_t exists = session.Count(
      "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()"
      " AND schema_name = " +
          Literal(kLedgerSchema) + " AND table_name = " + Literal(kLedgerTable),
      Operation::kCatalog, ledger);
  if (exists == 0) return {};
  // A ledger older than the relation columns (read-only opens do not add them) reads as NULL relations.
  const bool has_relation =
      session.Count("SELECT count(*) FROM duckdb_columns() WHERE database_name = current_database()"
                    " AND schema_name = " + Literal(kLedgerSchema) + " AND table_name = " + Literal(kLedgerTable) +
                    " AND column_name = 'relation_name'",
                    Operation::kCatalog, ledger) > 0;
  auto result = session.Run(
      "SELECT asset, CAST(window_start AS VARCHAR), CAST(window_end AS VARCHAR), run_id,"
      " CAST(row_count AS VARCHAR), sql_hash, strftime(written_at, '%Y-%m-%dT%H:%M:%S.%gZ'), " +
          std::string(has_relation ? "relation_schema, relation_name" : "NULL, NULL") + " FROM " + ledger +
          " ORDER BY written_at, rowid",
      Operation::kCatalog, ledger);
  std::vector<LedgerEntry> entries;
  for (size_t row = 0; row < result->row_count(); ++row) {
    LedgerEntry entry;
    entry.asset = result->TextOrEmpty(0, row);
    std::optional<std::string> start = result->Text(1, row);
    std::optional<std::string> end = result->Text(2, row);
    if (start && end) {
      std::optional<Date> start_date = Date::Parse(*start);
      std::optional<Date> end_date = Date::Parse(*end);
      if (start_date && end_date) entry.window = DateWindow{*start_date, *end_date};
    }
    entry.run_id = result->TextOrEmpty(3, row);
    entry.row_count = std::stoll(result->Text(4, row).value_or("0"));
    entry.sql_hash = result->TextOrEmpty(5, row);
    entry.written_at = result->TextOrEmpty(6, row);
    std::optional<std::string> schema = result->Text(7, row);
    std::optional<std::string> name = result->Text(8, row);
    if (schema && name) entry.relation = Relation{*schema, *name};
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace sluice
