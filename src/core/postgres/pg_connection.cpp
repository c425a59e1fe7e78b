#include "core/postgres/pg_connection.hpp"

#include <libpq-fe.h>

#include <cstdlib>
#include <regex>

namespace sluice::pg {

namespace {

std::string Field(const PGresult* result, int code) {
  const char* value = PQresultErrorField(result, code);
  return value ? value : "";
}

std::string Trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// Keyword=value values are quoted when they hold spaces, quotes or backslashes (libpq's rules).
std::string ConninfoValue(const std::string& value) {
  if (!value.empty() && value.find_first_of(" '\\") == std::string::npos) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

const std::optional<std::string>& Result::Scalar() const {
  if (rows.empty() || rows.front().empty()) throw std::out_of_range("the statement returned no value");
  return rows.front().front();
}

std::unique_ptr<Connection> Connection::Open(const std::string& connection_string,
                                             const std::string& application_name) {
  const char* keywords[] = {"dbname", "application_name", "fallback_application_name", nullptr};
  const char* values[] = {connection_string.c_str(), nullptr, application_name.c_str(), nullptr};
  // expand_dbname = 1: the first dbname value is itself a connection string (either form).
  PGconn* connection = PQconnectdbParams(keywords, values, 1);
  if (connection == nullptr || PQstatus(connection) != CONNECTION_OK) {
    std::string message = connection ? Trimmed(PQerrorMessage(connection)) : "out of memory";
    if (connection) PQfinish(connection);
    throw PgError("cannot connect to PostgreSQL (" + RedactConnectionString(connection_string) + "): " + message, "",
                  "", "", 0);
  }
  // Notices (e.g. "schema already exists, skipping") would go to stderr; Sluice reports what matters itself.
  PQsetNoticeProcessor(connection, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<Connection>(new Connection(connection));
}

Connection::Connection(pg_conn* connection) : connection_(connection), cancel_(PQgetCancel(connection)) {}

Connection::~Connection() {
  if (cancel_) PQfreeCancel(cancel_);
  PQfinish(connection_);
}

Result Connection::Exec(const std::string& sql, const Params& params) {
  PGresult* result;
  if (params.empty()) {
    result = PQexec(connection_, sql.c_str());
  } else {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& param : params) values.push_back(param ? param->c_str() : nullptr);
    result = PQexecParams(connection_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                          nullptr, 0);
  }
  if (result == nullptr) throw PgError(Trimmed(PQerrorMessage(connection_)), "", "", "", 0);
  ExecStatusType status = PQresultStatus(result);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    std::string message = Trimmed(Field(result, PG_DIAG_MESSAGE_PRIMARY));
    if (message.empty()) message = Trimmed(PQresultErrorMessage(result));
    if (message.empty()) message = Trimmed(PQerrorMessage(connection_));
    std::string sqlstate = Field(result, PG_DIAG_SQLSTATE);
    if (PQstatus(connection_) != CONNECTION_OK) sqlstate.clear();  // the connection is gone, whatever it said
    std::string position = Field(result, PG_DIAG_STATEMENT_POSITION);
    PgError error(message, sqlstate, Field(result, PG_DIAG_MESSAGE_DETAIL), Field(result, PG_DIAG_MESSAGE_HINT),
                  position.empty() ? 0 : std::atoi(position.c_str()), Field(result, PG_DIAG_CONTEXT));
    PQclear(result);
    throw error;
  }
  Result out;
  const int columns = PQnfields(result);
  const int rows = PQntuples(result);
  out.columns.reserve(columns);
  for (int c = 0; c < columns; ++c) out.columns.emplace_back(PQfname(result, c));
  out.rows.resize(rows);
  for (int r = 0; r < rows; ++r) {
    out.rows[r].reserve(columns);
    for (int c = 0; c < columns; ++c) {
      if (PQgetisnull(result, r, c)) {
        out.rows[r].emplace_back(std::nullopt);
      } else {
        out.rows[r].emplace_back(std::string(PQgetvalue(result, r, c), PQgetlength(result, r, c)));
      }
    }
  }
  const char* affected = PQcmdTuples(result);
  out.affected = affected && *affected ? std::atoll(affected) : 0;
  PQclear(result);
  return out;
}

void Connection::Cancel() {
  if (cancel_ == nullptr) return;
  char error[256];
  PQcancel(cancel_, error, sizeof error);
}

int Connection::BackendPid() const { return PQbackendPID(connection_); }

bool Connection::InTransaction() const { return PQtransactionStatus(connection_) != PQTRANS_IDLE; }

std::string QuoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string QuoteLiteral(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') out += '\'';
    out += c;
  }
  return out + "'";
}

std::optional<std::string> ConnectionStringError(const std::string& connection_string) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(connection_string.c_str(), &error);
  if (options != nullptr) {
    PQconninfoFree(options);
    return std::nullopt;
  }
  std::string message = error ? Trimmed(error) : "out of memory";
  if (error) PQfreemem(error);
  // libpq quotes offending text (e.g. a bad percent-escape), which could be part of the password.
  static const std::regex url_password(R"(^postgres(?:ql)?://[^:@/]*:([^@]*)@)");
  std::smatch password;
  if (std::regex_search(connection_string, password, url_password) && password[1].length() > 0) {
    for (size_t at = message.find(password[1].str()); at != std::string::npos;
         at = message.find(password[1].str(), at)) {
      message.replace(at, password[1].length(), "***");
    }
  }
  return message;
}

std::string RedactConnectionString(const std::string& connection_string) {
  static const std::regex url_password(R"(^(postgres(?:ql)?://[^:@/]*:)[^@]*@)");
  static const std::regex query_password(R"(([?&]password=)[^&]*)");
  static const std::regex keyword_password(R"((password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+))");
  if (connection_string.rfind("postgres", 0) == 0 && connection_string.find("://") != std::string::npos) {
    return std::regex_replace(std::regex_replace(connection_string, url_password, "$1***@"), query_password, "$1***");
  }
  return std::regex_replace(connection_string, keyword_password, "$1***");
}

std::string ConnectionStringFromKeys(const std::map<std::string, std::string>& keys) {
  static const std::map<std::string, std::string> kKeywords = {
      {"host", "host"},         {"port", "port"},     {"username", "user"},
      {"user", "user"},         {"password", "password"}, {"dbname", "dbname"},
      {"database", "dbname"},   {"sslmode", "sslmode"},   {"connect_timeout", "connect_timeout"}};
  std::map<std::string, std::string> chosen;
  for (const auto& [key, value] : keys) {
    auto keyword = kKeywords.find(key);
    if (keyword == kKeywords.end() || value.empty()) continue;
    chosen[keyword->second] = value;
  }
  chosen.emplace("connect_timeout", "10");
  std::string out;
  for (const auto& [keyword, value] : chosen) out += (out.empty() ? "" : " ") + keyword + "=" + ConninfoValue(value);
  return out;
}

}  // namespace sluice::pg
