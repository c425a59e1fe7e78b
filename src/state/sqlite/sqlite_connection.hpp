// The SQLite state store's StateConnection: one open sqlite3 handle (owned), statements prepared per call with
// positional `?` parameters, write transactions as BEGIN IMMEDIATE, read snapshots as a deferred BEGIN (WAL mode: a
// snapshot never blocks a writer). A failing statement is SLU-STATE-003 (ThrowSqliteError) naming the call's action.
// Thread-safety: none of its own (see state_connection.hpp).
#pragma once

#include <sqlite3.h>

#include <string>

#include "state/sql/state_connection.hpp"

namespace sluice {

class SqliteConnection final : public StateConnection, private StateSession {
 public:
  // Takes ownership of `db` (open, configured and migrated).
  explicit SqliteConnection(sqlite3* db);
  ~SqliteConnection() override;
  SqliteConnection(const SqliteConnection&) = delete;
  SqliteConnection& operator=(const SqliteConnection&) = delete;

  void Run(Access access, std::string_view action, const std::function<void(StateSession&)>& work) override;
  Error StateError(std::string code, std::string message, std::string hint = {}) const override;
  std::string_view noun() const override { return "file"; }

  sqlite3* handle() const { return db_; }

 private:
  std::vector<SqlRow> Query(std::string_view sql, const SqlParams& params) override;
  int64_t Execute(std::string_view sql, const SqlParams& params) override;
  void Begin(TransactionKind kind) override;
  void Commit() override;
  void Rollback() noexcept override;

  sqlite3* db_;
  std::string action_;  // of the call running, for failure messages
};

}  // namespace sluice
