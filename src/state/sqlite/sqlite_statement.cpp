#include "state/sqlite/sqlite_statement.hpp"

#include <stdexcept>
#include <utility>

namespace sluice {

namespace {

std::string DatabaseFile(sqlite3* db) {
  const char* name = db == nullptr ? nullptr : sqlite3_db_filename(db, "main");
  return name == nullptr ? std::string() : std::string(name);
}

std::string HintFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return "another process kept the state database locked for longer than " +
             std::to_string(kSqliteBusyTimeoutMs / 1000) + " s; retry when it has finished";
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_AUTH:
      return "check that this user can create and write the file and its folder (SQLite keeps -wal and -shm "
             "files beside it)";
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
      return "the file is not a SQLite database or is damaged; move it aside to start a new run history";
    case SQLITE_FULL:
    case SQLITE_IOERR:
      return "check the disk holding the state database and its free space";
    default:
      return "";
  }
}

}  // namespace

[[noreturn]] void ThrowSqliteError(sqlite3* db, int rc, SqliteStage stage, std::string_view action,
                                   const std::filesystem::path& file) {
  std::string code;
  switch (stage) {
    case SqliteStage::kOpening:
      code = "SLU-STATE-001";
      break;
    case SqliteStage::kServing:
      code = "SLU-STATE-003";
      break;
  }
  // sqlite3_errmsg describes the most recent failure on `db` (e.g. "UNIQUE constraint failed: runs.run_id");
  // without a handle only the code's generic text is known.
  std::string detail = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  std::string message =
      "could not " + std::string(action) + ": " + detail + " (SQLite error " + std::to_string(rc) + ")";
  SourceLocation location{file.empty() ? DatabaseFile(db) : file.string(), 0, 0};
  throw Error(MakeDiagnostic(std::move(code), std::move(message), std::move(location), HintFor(rc)));
}

Error StateError(sqlite3* db, std::string code, std::string message, std::string hint) {
  return Error(MakeDiagnostic(std::move(code), std::move(message), SourceLocation{DatabaseFile(db), 0, 0},
                              std::move(hint)));
}

SqliteStatement::SqliteStatement(sqlite3* db, SqliteStage stage, std::string_view action,
                                 std::string_view sql)
    : db_(db), stage_(stage), action_(action) {
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), 0, &statement_, nullptr);
  if (rc != SQLITE_OK) ThrowSqliteError(db_, rc, stage_, action_);
}

SqliteStatement::~SqliteStatement() { sqlite3_finalize(statement_); }

void SqliteStatement::CheckBind(int rc, int index) {
  if (rc != SQLITE_OK) ThrowSqliteError(db_, rc, stage_, action_ + " (binding parameter " + std::to_string(index) + ")");
}

SqliteStatement& SqliteStatement::BindAll(const SqlParams& params) {
  if (sqlite3_bind_parameter_count(statement_) != static_cast<int>(params.size())) {
    throw std::logic_error("SQL statement takes " + std::to_string(sqlite3_bind_parameter_count(statement_)) +
                           " parameters, not " + std::to_string(params.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    const auto& value = params[i].value();
    if (const auto* text = std::get_if<std::string>(&value)) {
      CheckBind(sqlite3_bind_text64(statement_, index, text->data(), text->size(), SQLITE_TRANSIENT, SQLITE_UTF8),
                index);
    } else if (const auto* number = std::get_if<int64_t>(&value)) {
      CheckBind(sqlite3_bind_int64(statement_, index, *number), index);
    } else {
      CheckBind(sqlite3_bind_null(statement_, index), index);
    }
  }
  return *this;
}

bool SqliteStatement::Step() {
  int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  ThrowSqliteError(db_, rc, stage_, action_);
}

int64_t SqliteStatement::Execute() {
  while (Step()) {
  }
  return sqlite3_changes64(db_);
}

void SqliteStatement::Reset() {
  // sqlite3_reset repeats the last step's error, which Step() has already reported.
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

SqlRow SqliteStatement::Row() const {
  const int columns = sqlite3_column_count(statement_);
  std::vector<std::optional<std::string>> values;
  values.reserve(static_cast<size_t>(columns));
  for (int column = 0; column < columns; ++column) {
    const unsigned char* text = sqlite3_column_text(statement_, column);
    if (text == nullptr) {
      values.emplace_back(std::nullopt);
    } else {
      values.emplace_back(std::string(reinterpret_cast<const char*>(text),
                                      static_cast<size_t>(sqlite3_column_bytes(statement_, column))));
    }
  }
  return SqlRow(std::move(values));
}

int64_t SqliteStatement::Int(int column) const { return sqlite3_column_int64(statement_, column); }

void ExecuteSqliteScript(sqlite3* db, SqliteStage stage, std::string_view action, const std::string& sql) {
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) ThrowSqliteError(db, rc, stage, action);
}

SqliteTransaction::SqliteTransaction(sqlite3* db, SqliteStage stage, std::string_view action)
    : db_(db), stage_(stage), action_(action) {
  SqliteStatement(db_, stage_, action_ + " (begin)", "BEGIN IMMEDIATE").Execute();
}

SqliteTransaction::~SqliteTransaction() {
  // A failed statement may already have ended the transaction (SQLite rolls back on some errors);
  // sqlite3_get_autocommit tells. A failing ROLLBACK leaves nothing to undo, so its code is not needed.
  if (open_ && sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteTransaction::Commit() {
  SqliteStatement(db_, stage_, action_ + " (commit)", "COMMIT").Execute();
  open_ = false;
}

}  // namespace sluice
