#include "state/postgres/postgres_store_connection.hpp"

#include <utility>

namespace sluice {

namespace {

constexpr const char* kConnectHint =
    "check SLUICE_STATE_URL (or the project's [state] url): host, port, database, user and password, and that the "
    "server is running and reachable";

// The store call's statements on one pg::Connection.
class PostgresSession final : public StateSession {
 public:
  explicit PostgresSession(pg::Connection& connection) : connection_(connection) {}

  std::vector<SqlRow> Query(std::string_view sql, const SqlParams& params) override {
    pg::Result result = Exec(sql, params);
    std::vector<SqlRow> rows;
    rows.reserve(result.rows.size());
    for (auto& row : result.rows) rows.emplace_back(std::move(row));
    return rows;
  }

  int64_t Execute(std::string_view sql, const SqlParams& params) override { return Exec(sql, params).affected; }

 private:
  pg::Result Exec(std::string_view sql, const SqlParams& params) {
    pg::Params values;
    values.reserve(params.size());
    for (const SqlValue& param : params) values.push_back(param.Text());
    return connection_.Exec(RenderPlaceholders(sql, PlaceholderStyle::kDollarNumber), values);
  }

  void Begin(TransactionKind) override { connection_.Exec("BEGIN"); }
  void Commit() override { connection_.Exec("COMMIT"); }
  void Rollback() noexcept override {
    try {
      connection_.Exec("ROLLBACK");
    } catch (const pg::PgError&) {
      // The connection is gone (or the transaction with it): the server has rolled it back already.
    }
  }

  pg::Connection& connection_;
};

}  // namespace

PostgresStoreConnection::PostgresStoreConnection(std::string url, std::string application_name)
    : url_(std::move(url)),
      redacted_url_(pg::RedactConnectionString(url_)),
      application_name_(std::move(application_name)) {
  try {
    connection_ = pg::Connection::Open(url_, application_name_);
  } catch (const pg::PgError& error) {
    Throw(error, PgStage::kOpening, "connect to the state database");
  }
}

pg::Connection& PostgresStoreConnection::Current(std::string_view action) {
  if (!connection_) {
    try {
      connection_ = pg::Connection::Open(url_, application_name_);
    } catch (const pg::PgError& error) {
      Throw(error, PgStage::kServing, std::string(action) + " (reconnecting)");
    }
  }
  return *connection_;
}

void PostgresStoreConnection::Run(Access access, std::string_view action,
                                  const std::function<void(StateSession&)>& work) {
  auto attempt = [&] {
    PostgresSession session(Current(action));
    work(session);
  };
  if (access == Access::kRead) {
    try {
      return attempt();
    } catch (const pg::PgError& error) {
      if (!error.connection_lost()) Throw(error, PgStage::kServing, action);
      connection_.reset();
    }
  }
  try {
    attempt();
  } catch (const pg::PgError& error) {
    if (error.connection_lost()) connection_.reset();
    Throw(error, PgStage::kServing, action);
  }
}

void PostgresStoreConnection::RunOpening(std::string_view action, const std::function<void(pg::Connection&)>& work) {
  try {
    work(Current(action));
  } catch (const pg::PgError& error) {
    if (error.connection_lost()) connection_.reset();
    Throw(error, PgStage::kOpening, action);
  }
}

Error PostgresStoreConnection::StateError(std::string code, std::string message, std::string hint) const {
  return Error(
      MakeDiagnostic(std::move(code), std::move(message), SourceLocation{redacted_url_, 0, 0}, std::move(hint)));
}

void PostgresStoreConnection::Throw(const pg::PgError& error, PgStage stage, std::string_view action) const {
  const bool opening = stage == PgStage::kOpening;
  std::string message = "could not " + std::string(action) + ": " + error.what();
  // The connection error already names the (redacted) URL; the diagnostic's location names it for the others.
  if (!error.detail().empty()) message += " (" + error.detail() + ")";
  std::string hint = error.hint();
  if (error.connection_lost()) {
    hint = opening ? kConnectHint
                   : "the connection to the state database was lost; a write may or may not have been applied, so "
                     "check the run's state before retrying";
  } else if (hint.empty() && opening) {
    hint = "the state database user needs CREATE on the database's default schema to create Sluice's tables";
  }
  throw StateError(opening ? "SLU-STATE-001" : "SLU-STATE-003", std::move(message), std::move(hint));
}

PgTransaction::PgTransaction(pg::Connection& connection) : connection_(connection) { connection_.Exec("BEGIN"); }

PgTransaction::~PgTransaction() {
  if (!open_) return;
  try {
    connection_.Exec("ROLLBACK");
  } catch (const pg::PgError&) {
    // The connection is gone (or the transaction with it): the server has rolled it back already.
  }
}

void PgTransaction::Commit() {
  connection_.Exec("COMMIT");
  open_ = false;
}

}  // namespace sluice
