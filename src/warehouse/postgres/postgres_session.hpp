// Connections, statements and errors of the PostgreSQL backend (postgres_warehouse.hpp): a pool of libpq
// connections, one Session per call, Transaction around a write, and the one place PostgreSQL errors become
// sluice::Error (ThrowTranslated). Internal to warehouse/postgres.
// Thread-safety: ConnectionPool is thread-safe; a Session and its Transaction are used by one thread.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"
#include "core/postgres/pg_connection.hpp"
#include "warehouse/embedded_select.hpp"
#include "warehouse/warehouse_error.hpp"
#include "warehouse/postgres/postgres_warehouse.hpp"

namespace sluice::postgres {

// PostgreSQL cuts longer identifiers silently (NAMEDATALEN - 1), which would make two names one.
constexpr size_t kMaxIdentifierBytes = 63;
constexpr std::string_view kPauseBeforeCommit = "after_write_before_commit";

using sluice::Operation;

using sluice::WarehouseError;

// A statement, and where in it the caller's SELECT is embedded (when it is): an error PostgreSQL places inside that
// range is reported as a SqlError at its offset in the SELECT.
using Statement = EmbeddedStatement;

// sluice::Embedding in the PostgreSQL dialect.
Statement Embedding(std::string before, const std::string& select_sql, std::string_view after);

// The index (0-based, below `count`) of the parameter whose value the server refused to convert: a data exception
// (SQLSTATE class 22) whose context names it ("unnamed portal parameter $3"); nullopt for any other error.
std::optional<size_t> RefusedParameter(const pg::PgError& failure, size_t count);

// `text` with each occurrence of `password` (when not empty) replaced by ***.
std::string Masked(std::string text, const std::string& password);

// The one place PostgreSQL errors become sluice::Error: SLU-WAREHOUSE-NNN from the SQLSTATE, naming `subject` (the
// relation worked on, or the server for kOpen), with `password` masked; a SqlError when the error's position falls
// inside the SELECT `statement` embeds; SLU-WAREHOUSE-008 when `interrupted`.
[[noreturn]] void ThrowTranslated(Operation operation, const std::string& subject, const pg::PgError& failure,
                                  const Statement* statement, bool interrupted, const std::string& password);

// Throws SLU-WAREHOUSE-041 for a name PostgreSQL would cut (over 63 bytes) or cannot hold (empty, a NUL byte).
void CheckIdentifier(const std::string& name, const std::string& what);
void CheckRelation(const Relation& relation);

// The connections of one warehouse: those in use (so Interrupt reaches their statements) and idle ones kept for
// the next call. Thread-safe.
struct ConnectionPool {
  PostgresEndpoint endpoint;
  std::mutex mutex;
  std::set<pg::Connection*> in_use;                   // guarded by mutex
  std::vector<std::unique_ptr<pg::Connection>> idle;  // guarded by mutex
  std::atomic<bool> interrupted{false};

  // An idle connection, or a new one (in UTC, with the endpoint's schema and read-only setting). Throws
  // SLU-WAREHOUSE-008 once interrupted, the translated error when it cannot connect.
  std::unique_ptr<pg::Connection> Acquire();
  // Keeps the connection for the next call unless it is `broken`, inside a transaction, or the pool is interrupted.
  // A `dirty` one (it ran the caller's SQL, which may have changed settings) is reset first: DISCARD ALL and the
  // session settings again, far cheaper than a new connection (which authenticates again).
  void Release(std::unique_ptr<pg::Connection> connection, bool broken, bool dirty);

  void Interrupt() {
    interrupted = true;
    std::lock_guard<std::mutex> lock(mutex);
    for (pg::Connection* connection : in_use) connection->Cancel();
  }

  // The settings every session starts with.
  std::string SessionSetup() const;
};

// One pooled connection for the span of one call.
class Session {
 public:
  explicit Session(ConnectionPool& pool) : pool_(pool), connection_(pool.Acquire()) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { pool_.Release(std::move(connection_), broken_, dirty_); }

  // The caller's SQL may leave state on the connection (a setting, an open transaction): it is reset before reuse.
  void RunsCallersSql() { dirty_ = true; }
  void RecordInto(std::vector<std::string>* statements) { recorded_ = statements; }

  pg::Result Run(const Statement& statement, Operation operation, const std::string& subject) {
    if (pool_.interrupted) ThrowInterrupted(subject);
    if (recorded_ != nullptr) recorded_->push_back(statement.sql);
    try {
      // A statement that completes although Interrupt came meanwhile stands: the next one (or the ROLLBACK) sees the
      // flag, and a COMMIT that went through must not be reported as failed.
      return connection_->Exec(statement.sql);
    } catch (const pg::PgError& e) {
      broken_ = broken_ || e.connection_lost();
      ThrowTranslated(operation, subject, e, &statement, pool_.interrupted, pool_.endpoint.password);
    }
  }
  pg::Result Run(const std::string& sql, Operation operation, const std::string& subject) {
    return Run(Statement{sql}, operation, subject);
  }
  // Runs `sql` with text parameters; recorded without them. When the server refuses a parameter's value (a data
  // exception naming "parameter $N"), `bad_parameter`, when set, gets its index (0-based) and the server's message
  // (password masked) and the error it returns is thrown instead of the translated one.
  using BadParameter = std::function<Error(size_t index, const std::string& problem)>;
  pg::Result RunWithParams(const std::string& sql, const pg::Params& params, const std::string& subject,
                           const BadParameter& bad_parameter = nullptr) {
    if (pool_.interrupted) ThrowInterrupted(subject);
    try {
      return connection_->Exec(sql, params);
    } catch (const pg::PgError& e) {
      broken_ = broken_ || e.connection_lost();
      if (bad_parameter && !pool_.interrupted) {
        if (std::optional<size_t> index = RefusedParameter(e, params.size())) {
          throw bad_parameter(*index, Masked(e.what(), pool_.endpoint.password));
        }
      }
      ThrowTranslated(Operation::kWrite, subject, e, nullptr, pool_.interrupted, pool_.endpoint.password);
    }
  }
  // The server's error as it is, for callers that report it their own way; nullopt on success.
  std::optional<pg::PgError> TryRun(const std::string& sql) {
    if (recorded_ != nullptr) recorded_->push_back(sql);
    try {
      connection_->Exec(sql);
      return std::nullopt;
    } catch (const pg::PgError& e) {
      broken_ = broken_ || e.connection_lost();
      return e;
    }
  }
  void RunIgnoringFailure(const std::string& sql) {
    try {
      connection_->Exec(sql);
    } catch (const pg::PgError&) {
      broken_ = true;  // a connection whose ROLLBACK failed is not reused; the server ends its transaction with it
    }
  }
  int64_t Count(const std::string& sql, Operation operation, const std::string& subject) {
    return std::stoll(Run(sql, operation, subject).Scalar().value_or("0"));
  }

 private:
  [[noreturn]] void ThrowInterrupted(const std::string& subject) {
    throw WarehouseError("SLU-WAREHOUSE-008",
                         (subject.empty() ? std::string("statement") : "writing " + subject) +
                             ": interrupted (the run was canceled); its transaction is rolled back",
                         "");
  }

  ConnectionPool& pool_;
  std::unique_ptr<pg::Connection> connection_;
  std::vector<std::string>* recorded_ = nullptr;
  bool dirty_ = false;
  bool broken_ = false;
};

// BEGIN on construction, ROLLBACK on destruction unless committed. READ COMMITTED whatever the server's default, so
// that each statement sees what committed before it started: a write's statements after its relation's lock see the
// previous writer's commit.
class Transaction {
 public:
  Transaction(Session& session, std::string subject) : session_(session), subject_(std::move(subject)) {
    session_.Run("BEGIN ISOLATION LEVEL READ COMMITTED", Operation::kWrite, subject_);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!finished_) session_.RunIgnoringFailure("ROLLBACK");
  }
  // A write's end: the pause point, `last` (its ledger row) and COMMIT.
  void CommitAfter(const std::string& last) {
    PausePoint(kPauseBeforeCommit);
    if (!last.empty()) session_.Run(last, Operation::kWrite, subject_);
    Commit();
  }
  // COMMIT alone, for transactions that are not writes (schema and ledger creation): no pause point.
  void Commit() {
    session_.Run("COMMIT", Operation::kWrite, subject_);
    finished_ = true;
  }

 private:
  Session& session_;
  std::string subject_;
  bool finished_ = false;
};

}  // namespace sluice::postgres
