#include "warehouse/postgres/postgres_session.hpp"

#include <cstdlib>

#include "sql/dialect.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::postgres {

namespace {

// PostgreSQL's error position counts characters (1-based); the byte offset of that character in `text`.
size_t ByteOffsetOfCharacter(const std::string& text, int position) {
  int seen = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte
    if (++seen == position) return i;
  }
  return text.size();
}

}  // namespace

std::string Masked(std::string text, const std::string& password) {
  if (password.size() < 3) return text;  // masking a short password would mangle ordinary words
  for (size_t at = text.find(password); at != std::string::npos; at = text.find(password, at + 3)) {
    text.replace(at, password.size(), "***");
  }
  return text;
}

std::optional<size_t> RefusedParameter(const pg::PgError& failure, size_t count) {
  if (!failure.sqlstate().starts_with("22")) return std::nullopt;
  const std::string marker = "parameter $";
  const size_t at = failure.context().find(marker);
  if (at == std::string::npos) return std::nullopt;
  const size_t number = std::strtoull(failure.context().c_str() + at + marker.size(), nullptr, 10);
  if (number == 0 || number > count) return std::nullopt;
  return number - 1;
}

Statement Embedding(std::string before, const std::string& select_sql, std::string_view after) {
  return sluice::Embedding(sql::Dialect::kPostgres, std::move(before), select_sql, after);
}

[[noreturn]] void ThrowTranslated(Operation operation, const std::string& subject, const pg::PgError& failure,
                                  const Statement* statement, bool interrupted, const std::string& password) {
  const std::string what = FailedOperation(operation, "PostgreSQL", subject, "cannot connect to PostgreSQL at " + subject);
  const std::string& state = failure.sqlstate();
  std::string message = Masked(failure.what(), password);
  if (!failure.detail().empty()) message += " (" + Masked(failure.detail(), password) + ")";
  if (interrupted) {
    throw WarehouseError("SLU-WAREHOUSE-008",
                         what + ": interrupted (the run was canceled); its transaction is rolled back", "");
  }
  if (operation == Operation::kOpen || failure.connection_lost()) {
    // The client names the (redacted) connection string; `what` names the server already.
    const std::string client_prefix = "cannot connect to PostgreSQL (";
    if (message.rfind(client_prefix, 0) == 0) {
      if (size_t end = message.find("): "); end != std::string::npos) message = message.substr(end + 3);
    }
    std::string code;
    std::string hint;
    if (message.find("password authentication failed") != std::string::npos ||
        message.find("no password supplied") != std::string::npos || state == "28P01" || state == "28000") {
      code = "SLU-WAREHOUSE-030";
      hint = "check the target's connection username and password";
    } else if (message.find("does not exist") != std::string::npos && message.find("database") != std::string::npos) {
      code = "SLU-WAREHOUSE-040";
      hint = "create the database (CREATE DATABASE) or fix the target's connection dbname";
    } else {
      code = "SLU-WAREHOUSE-031";
      hint = operation == Operation::kOpen ? "check that the server runs and the target's connection host and port"
                                           : "the connection to the server was lost; run again";
    }
    throw WarehouseError(code, what + ": " + message, hint);
  }
  const FailureKind kind =
      state == "42P01" || state == "42883" || state == "3F000" ? FailureKind::kMissing
      : state == "42601"                                       ? FailureKind::kSyntax
      : state.rfind("42", 0) == 0 && state != "42501" && state != "42P07" && state != "42P06" ? FailureKind::kBind
      : state == "22P02" || state == "22007" || state == "22008" || state == "22003" || state == "22018"
          ? FailureKind::kConversion
      : state == pg::kSerializationFailure || state == pg::kDeadlockDetected || state == pg::kLockNotAvailable
          ? FailureKind::kConflict
          : FailureKind::kOther;
  // The server's hint, where it gives one, says more than the usual one; a conflict's says what to do.
  Diagnostic diagnostic = ClassifiedError(kind, what + ": " + message, "PostgreSQL SQL",
                                          kind == FailureKind::kConflict ? "" : failure.hint())
                              .diagnostics()
                              .front();
  if (statement != nullptr && statement->select_begin != std::string::npos && failure.position() > 0) {
    size_t byte = ByteOffsetOfCharacter(statement->sql, failure.position());
    if (byte >= statement->select_begin && byte < statement->select_begin + statement->select_size) {
      throw SqlError(std::move(diagnostic), byte - statement->select_begin);
    }
  }
  throw Error(std::move(diagnostic));
}

void CheckIdentifier(const std::string& name, const std::string& what) {
  if (name.empty() || name.size() > kMaxIdentifierBytes || name.find('\0') != std::string::npos) {
    throw WarehouseError("SLU-WAREHOUSE-041",
                         what + " \"" + name + "\" is not a PostgreSQL identifier: " +
                             (name.empty()                        ? std::string("it is empty")
                              : name.size() > kMaxIdentifierBytes ? std::to_string(name.size()) + " bytes, more than 63"
                                                                  : std::string("it holds a NUL byte")),
                         "PostgreSQL names hold at most 63 bytes (longer ones would be cut, making two names one); "
                         "use a shorter name");
  }
}
void CheckRelation(const Relation& relation) {
  CheckIdentifier(relation.name_space, "schema");
  CheckIdentifier(relation.name, "relation");
}

std::unique_ptr<pg::Connection> ConnectionPool::Acquire() {
  if (interrupted) {
    throw WarehouseError("SLU-WAREHOUSE-008", "interrupted (the run was canceled) before connecting to PostgreSQL", "");
  }
  std::unique_ptr<pg::Connection> connection;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!idle.empty()) {
      connection = std::move(idle.back());
      idle.pop_back();
    }
  }
  if (!connection) {
    try {
      connection = pg::Connection::Open(endpoint.conninfo);
      connection->Exec(SessionSetup());
    } catch (const pg::PgError& e) {
      ThrowTranslated(Operation::kOpen, endpoint.display, e, nullptr, false, endpoint.password);
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  in_use.insert(connection.get());
  return connection;
}

std::string ConnectionPool::SessionSetup() const {
  // UTC, so timestamps read back as written; the caller's SQL resolves names in its schema.
  std::string setup = "SET TIME ZONE 'UTC'";
  if (!endpoint.default_schema.empty()) {
    setup += "; SET search_path TO " + sql::QuoteIdentifier(sql::Dialect::kPostgres, endpoint.default_schema);
  }
  if (endpoint.read_only) setup += "; SET default_transaction_read_only = on";
  return setup;
}

void ConnectionPool::Release(std::unique_ptr<pg::Connection> connection, bool broken, bool dirty) {
  bool keep = !broken && !interrupted && !connection->InTransaction();
  if (keep && dirty) {
    try {
      connection->Exec("DISCARD ALL");  // alone: it refuses the implicit transaction of a multi-statement string
      connection->Exec(SessionSetup());
    } catch (const pg::PgError&) {
      keep = false;  // closed below; the next call opens a new connection
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  in_use.erase(connection.get());
  if (keep) idle.push_back(std::move(connection));
}

}  // namespace sluice::postgres
