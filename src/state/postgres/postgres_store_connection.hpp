// The PostgreSQL state store's StateConnection, and the one place where PostgreSQL failures become sluice::Error
// (SLU-STATE-001 while opening and migrating, SLU-STATE-003 while serving).
//
// Statements written with `?` placeholders are sent as $1, $2 … (RenderPlaceholders), parameters as text whose type
// the server infers from the statement (so JSON text fills a jsonb column). A lost connection (server restart, network
// failure) is reopened: a read is retried once on the new connection, a write is not (it may or may not have
// committed) and reports SLU-STATE-003; the next call works on the new connection. Messages name the database by its
// URL with the password replaced by "***", never the password.
// Thread-safety: none of its own; the store's mutex serializes every use.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/diagnostic.hpp"
#include "core/postgres/pg_connection.hpp"
#include "state/sql/state_connection.hpp"

namespace sluice {

// What the connection is doing, which decides the code a failure gets.
enum class PgStage {
  kOpening,  // connecting, configuring or migrating: SLU-STATE-001
  kServing,  // a store call: SLU-STATE-003
};

class PostgresStoreConnection final : public StateConnection {
 public:
  // Connects to `url` (a postgresql:// URL or a libpq keyword=value string). Throws SLU-STATE-001 when it cannot.
  PostgresStoreConnection(std::string url, std::string application_name);

  void Run(Access access, std::string_view action, const std::function<void(StateSession&)>& work) override;
  Error StateError(std::string code, std::string message, std::string hint = {}) const override;
  std::string_view noun() const override { return "database"; }

  // Runs `work(connection)` once while opening the store; any PostgreSQL failure is SLU-STATE-001.
  void RunOpening(std::string_view action, const std::function<void(pg::Connection&)>& work);

  // Translates `error`, raised while doing `action`, into SLU-STATE-001 or -003 with the server's message.
  [[noreturn]] void Throw(const pg::PgError& error, PgStage stage, std::string_view action) const;

  // The URL as messages show it.
  const std::string& redacted_url() const { return redacted_url_; }
  const std::string& url() const { return url_; }

 private:
  // The open connection, reopened when the last one was lost.
  pg::Connection& Current(std::string_view action);

  std::string url_;
  std::string redacted_url_;
  std::string application_name_;
  std::unique_ptr<pg::Connection> connection_;
};

// BEGIN … COMMIT on one connection, for the migrations; rolls back in the destructor unless committed.
class PgTransaction {
 public:
  explicit PgTransaction(pg::Connection& connection);
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;

  void Commit();

 private:
  pg::Connection& connection_;
  bool open_ = true;
};

}  // namespace sluice
