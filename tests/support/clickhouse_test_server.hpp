// The ClickHouse test server, for tests declared with `sluice_test(... CLICKHOUSE)` (cmake/SluiceTargets.cmake).
//
// CTest starts one server per run (fixture `clickhouse`, scripts/clickhouse_test_server.sh) and gives each such test
// SLUICE_TEST_CLICKHOUSE_DIR, the server's folder, holding `http_port` and `password`. A test asks for the server,
// then works in a database of its own (UniqueClickHouseDatabase), so `ctest -j` is safe:
//
//   ClickHouseTestServer server = RequireClickHouseTestServer();   // in a TEST or SetUp
//   WarehouseConfig config = ClickHouseTestConfig(server, UniqueClickHouseDatabase("orders"));
//
// Run by hand, outside CTest: `scripts/clickhouse_test_server.sh start /tmp/ch` and
// `SLUICE_TEST_CLICKHOUSE_DIR=/tmp/ch build/release/src/warehouse/warehouse_clickhouse_test`.
// Thread-safety: UniqueClickHouseDatabase may be called from several threads; the rest are pure reads.
#pragma once

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

struct ClickHouseTestServer {
  std::string host = "127.0.0.1";
  int port = 0;  // HTTP
  std::string username = "default";
  std::string password;
  std::filesystem::path dir;
};

// The server CTest started. Throws std::runtime_error (failing the test) when SLUICE_TEST_CLICKHOUSE_DIR is unset or
// its server did not start: a ClickHouse test never passes without a server.
inline ClickHouseTestServer RequireClickHouseTestServer() {
  const char* dir = std::getenv("SLUICE_TEST_CLICKHOUSE_DIR");
  if (dir == nullptr || *dir == '\0') {
    throw std::runtime_error(
        "SLUICE_TEST_CLICKHOUSE_DIR is not set: run this test through ctest (fixture `clickhouse`), or start a server "
        "with scripts/clickhouse_test_server.sh start DIR and set SLUICE_TEST_CLICKHOUSE_DIR=DIR");
  }
  ClickHouseTestServer server;
  server.dir = dir;
  std::ifstream port_file(server.dir / "http_port");
  std::ifstream password_file(server.dir / "password");
  if (!(port_file >> server.port) || !std::getline(password_file, server.password)) {
    throw std::runtime_error("no ClickHouse test server in " + server.dir.string() +
                             " (no http_port / password file): did clickhouse_server_start fail?");
  }
  return server;
}

// A database name no other test process or call uses, e.g. sluice_t_4242_17_orders.
inline std::string UniqueClickHouseDatabase(const std::string& hint) {
  static std::atomic<int> counter{0};
  static const long stamp = static_cast<long>(std::chrono::system_clock::now().time_since_epoch().count() % 100000);
  return "sluice_t_" + std::to_string(::getpid()) + "_" + std::to_string(stamp) + "_" +
         std::to_string(counter.fetch_add(1)) + "_" + hint;
}

// The connection keys of the server (as ExpandConnection yields them) with `database` as the current database.
inline std::map<std::string, std::string> ClickHouseTestConnection(const ClickHouseTestServer& server,
                                                                   const std::string& database) {
  return {{"host", server.host},
          {"port", std::to_string(server.port)},
          {"username", server.username},
          {"password", server.password},
          {"database", database}};
}

inline WarehouseConfig ClickHouseTestConfig(const ClickHouseTestServer& server, const std::string& database) {
  WarehouseConfig config;
  config.adapter = "clickhouse";
  config.connection = ClickHouseTestConnection(server, database);
  config.target = "test";
  return config;
}

// The environment that points `sluice` at the server (a ClickHouse target's connection comes from these variables).
inline std::map<std::string, std::string> ClickHouseTestEnvironment(const ClickHouseTestServer& server) {
  return {{"STREAMBUILD_CLICKHOUSE_HOST", server.host},
          {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(server.port)},
          {"STREAMBUILD_CLICKHOUSE_USERNAME", server.username},
          {"STREAMBUILD_CLICKHOUSE_PASSWORD", server.password}};
}

}  // namespace sluice::testing
