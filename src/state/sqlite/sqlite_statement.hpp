// Thin RAII wrappers over the SQLite C API used by the SQLite state store, and the one place where SQLite
// failures become sluice::Error.
//
// Every value reaches SQL through a bound positional parameter (`?`); SQL text is always a constant.
// Thread-safety: none of their own; the store's mutex serializes every use of a connection.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "core/diagnostic.hpp"
#include "state/sql/state_connection.hpp"

namespace sluice {

// How long a call waits for another connection's write lock before failing with SQLITE_BUSY.
inline constexpr int kSqliteBusyTimeoutMs = 10000;

// What the connection is doing, which decides the code a SQLite failure gets.
enum class SqliteStage {
  kOpening,  // opening, configuring or migrating the file: SLU-STATE-001
  kServing,  // a store call: SLU-STATE-003
};

// Translates a failed SQLite call (`rc`, extended codes on) into sluice::Error. `action` says what was being done, e.g.
// "append an event to run r1". The diagnostic's location names the database file: `file` when given,
// otherwise the file `db` has open. The message carries SQLite's own text.
[[noreturn]] void ThrowSqliteError(sqlite3* db, int rc, SqliteStage stage, std::string_view action,
                                   const std::filesystem::path& file = {});

// A state-store error that is not a SQLite failure (unknown run, forbidden transition, unreadable row),
// located at the file `db` has open.
Error StateError(sqlite3* db, std::string code, std::string message, std::string hint = {});

class SqliteStatement {
 public:
  // Prepares `sql` (one statement). Throws via ThrowSqliteError.
  SqliteStatement(sqlite3* db, SqliteStage stage, std::string_view action, std::string_view sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Binds `params` to the statement's `?` parameters, in order. A count that differs from the statement's is a
  // programming error and throws std::logic_error.
  SqliteStatement& BindAll(const SqlParams& params);

  // Advances: true when a row is ready to read, false when the statement is done.
  bool Step();
  // Runs a statement that returns no rows; returns how many rows it changed.
  int64_t Execute();
  // Makes the statement runnable again with new bindings (old bindings are cleared).
  void Reset();

  // The current row, every column as text (integers in decimal, NULL as nullopt).
  SqlRow Row() const;
  int64_t Int(int column) const;

 private:
  void CheckBind(int rc, int index);

  sqlite3* db_;
  SqliteStage stage_;
  std::string action_;
  sqlite3_stmt* statement_ = nullptr;
};

// Runs constant SQL text that may hold several statements (schema migrations). Throws via ThrowSqliteError.
void ExecuteSqliteScript(sqlite3* db, SqliteStage stage, std::string_view action, const std::string& sql);

// BEGIN IMMEDIATE … COMMIT. IMMEDIATE takes the write lock up front, so a busy database is waited for by
// the busy timeout instead of failing at the first write (which a deferred transaction can't retry).
// Rolls back in the destructor unless committed.
class SqliteTransaction {
 public:
  SqliteTransaction(sqlite3* db, SqliteStage stage, std::string_view action);
  ~SqliteTransaction();
  SqliteTransaction(const SqliteTransaction&) = delete;
  SqliteTransaction& operator=(const SqliteTransaction&) = delete;

  void Commit();

 private:
  sqlite3* db_;
  SqliteStage stage_;
  std::string action_;
  bool open_ = true;
};

}  // namespace sluice
