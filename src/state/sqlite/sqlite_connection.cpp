#include "state/sqlite/sqlite_connection.hpp"

#include "state/sqlite/sqlite_statement.hpp"

namespace sluice {

SqliteConnection::SqliteConnection(sqlite3* db) : db_(db) {}

SqliteConnection::~SqliteConnection() { sqlite3_close_v2(db_); }

void SqliteConnection::Run(Access, std::string_view action, const std::function<void(StateSession&)>& work) {
  action_ = action;
  work(*this);
}

Error SqliteConnection::StateError(std::string code, std::string message, std::string hint) const {
  return sluice::StateError(db_, std::move(code), std::move(message), std::move(hint));
}

std::vector<SqlRow> SqliteConnection::Query(std::string_view sql, const SqlParams& params) {
  SqliteStatement statement(db_, SqliteStage::kServing, action_, sql);
  statement.BindAll(params);
  std::vector<SqlRow> rows;
  while (statement.Step()) rows.push_back(statement.Row());
  return rows;
}

int64_t SqliteConnection::Execute(std::string_view sql, const SqlParams& params) {
  SqliteStatement statement(db_, SqliteStage::kServing, action_, sql);
  statement.BindAll(params);
  return statement.Execute();
}

void SqliteConnection::Begin(TransactionKind kind) {
  // IMMEDIATE takes the write lock up front, so a busy database is waited for by the busy timeout instead of failing at
  // the first write (which a deferred transaction can't retry).
  Execute(kind == TransactionKind::kWrite ? "BEGIN IMMEDIATE" : "BEGIN", {});
}

void SqliteConnection::Commit() { Execute("COMMIT", {}); }

void SqliteConnection::Rollback() noexcept {
  // A failed statement may already have ended the transaction (SQLite rolls back on some errors);
  // sqlite3_get_autocommit tells. A failing ROLLBACK leaves nothing to undo, so its code is not needed.
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

}  // namespace sluice
