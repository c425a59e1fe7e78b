// The PostgreSQL test server, for tests declared with `sluice_test(... POSTGRES)` (cmake/SluiceTargets.cmake).
//
// CTest starts one server per run (fixture `postgres`, scripts/postgres_test_server.sh) and gives each such test
// SLUICE_TEST_POSTGRES_DIR, the server's folder, holding `port`, `user` and `password`. A test asks for the server,
// then works in a database of its own (CreatePostgresTestDatabase), so `ctest -j` is safe:
//
//   PostgresTestServer server = RequirePostgresTestServer();            // in a TEST or SetUp
//   std::string database = CreatePostgresTestDatabase(server, "orders");
//   WarehouseConfig config = PostgresTestConfig(server, database);      // or PostgresTestUrl(server, database)
//
// Run by hand, outside CTest: `scripts/postgres_test_server.sh start /tmp/pg` and
// `SLUICE_TEST_POSTGRES_DIR=/tmp/pg build/release/src/warehouse/warehouse_postgres_test`.
// Thread-safety: CreatePostgresTestDatabase may be called from several threads; the rest are pure reads.
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <string>

#include "warehouse/registry.hpp"

namespace sluice::testing {

struct PostgresTestServer {
  std::string host = "127.0.0.1";
  int port = 0;
  std::string user;
  std::string password;
  std::filesystem::path dir;
};

// The server CTest started. Throws std::runtime_error (failing the test) when SLUICE_TEST_POSTGRES_DIR is unset or its
// server did not start: a PostgreSQL test never passes without a server.
inline PostgresTestServer RequirePostgresTestServer() {
  const char* dir = std::getenv("SLUICE_TEST_POSTGRES_DIR");
  if (dir == nullptr || *dir == '\0') {
    throw std::runtime_error(
        "SLUICE_TEST_POSTGRES_DIR is not set: run this test through ctest (fixture `postgres`), or start a server with "
        "scripts/postgres_test_server.sh start DIR and set SLUICE_TEST_POSTGRES_DIR=DIR");
  }
  PostgresTestServer server;
  server.dir = dir;
  std::ifstream port_file(server.dir / "port");
  std::ifstream user_file(server.dir / "user");
  std::ifstream password_file(server.dir / "password");
  if (!(port_file >> server.port) || !std::getline(user_file, server.user) ||
      !std::getline(password_file, server.password)) {
    throw std::runtime_error("no PostgreSQL test server in " + server.dir.string() +
                             " (no port / user / password file): did postgres_server_start fail?");
  }
  return server;
}

// libpq's keyword=value connection string for `database` (values quoted as libpq wants).
inline std::string PostgresTestConninfo(const PostgresTestServer& server, const std::string& database) {
  auto quoted = [](const std::string& value) {
    std::string out = "'";
    for (char c : value) {
      if (c == '\'' || c == '\\') out += '\\';
      out += c;
    }
    return out + "'";
  };
  return "host=" + server.host + " port=" + std::to_string(server.port) + " user=" + quoted(server.user) +
         " password=" + quoted(server.password) + " dbname=" + quoted(database) + " connect_timeout=10";
}

// Runs one statement as the superuser in `database`; throws std::runtime_error with the server's message.
inline void PostgresTestExecute(const PostgresTestServer& server, const std::string& database, const std::string& sql) {
  PGconn* connection = PQconnectdb(PostgresTestConninfo(server, database).c_str());
  if (PQstatus(connection) != CONNECTION_OK) {
    std::string message = PQerrorMessage(connection);
    PQfinish(connection);
    throw std::runtime_error("cannot connect to the PostgreSQL test server: " + message);
  }
  PGresult* result = PQexec(connection, sql.c_str());
  ExecStatusType status = PQresultStatus(result);
  std::string message = PQresultErrorMessage(result);
  PQclear(result);
  PQfinish(connection);
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    throw std::runtime_error("PostgreSQL test server: " + sql + ": " + message);
  }
}

// Creates a database no other test process or call uses, e.g. sluice_t_4242_17_3_orders, and returns its name.
inline std::string CreatePostgresTestDatabase(const PostgresTestServer& server, const std::string& hint) {
  static std::atomic<int> counter{0};
  static const long stamp = static_cast<long>(std::chrono::system_clock::now().time_since_epoch().count() % 100000);
  std::string name = "sluice_t_" + std::to_string(::getpid()) + "_" + std::to_string(stamp) + "_" +
                     std::to_string(counter.fetch_add(1)) + "_" + hint;
  PostgresTestExecute(server, "postgres", "CREATE DATABASE \"" + name + "\"");
  return name;
}

// postgresql://user:password@host:port/database, as SLUICE_STATE_URL takes it.
inline std::string PostgresTestUrl(const PostgresTestServer& server, const std::string& database) {
  return "postgresql://" + server.user + ":" + server.password + "@" + server.host + ":" + std::to_string(server.port) +
         "/" + database;
}

// The connection keys of a project's [connection] for adapter = "postgres".
inline std::map<std::string, std::string> PostgresTestConnection(const PostgresTestServer& server,
                                                                 const std::string& database) {
  return {{"host", server.host},
          {"port", std::to_string(server.port)},
          {"username", server.user},
          {"password", server.password},
          {"dbname", database}};
}

// The same keys as TOML lines, for a project's `[targets.<name>.connection]`.
inline std::string PostgresTestConnectionToml(const PostgresTestServer& server, const std::string& database) {
  return "host = \"" + server.host + "\"\nport = " + std::to_string(server.port) + "\nusername = \"" + server.user +
         "\"\npassword = \"" + server.password + "\"\ndbname = \"" + database + "\"\n";
}

inline WarehouseConfig PostgresTestConfig(const PostgresTestServer& server, const std::string& database) {
  WarehouseConfig config;
  config.adapter = "postgres";
  config.connection = PostgresTestConnection(server, database);
  config.target = "test";
  return config;
}

}  // namespace sluice::testing
