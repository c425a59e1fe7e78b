#include "warehouse/registry.hpp"

#include <algorithm>

#include "core/diagnostic.hpp"
#include "warehouse/clickhouse/clickhouse_warehouse.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"
#include "core/postgres/pg_connection.hpp"
#include "warehouse/postgres/postgres_warehouse.hpp"

namespace sluice {

namespace {

// Adapters Sluice knows (named by the seeds' projects) whose backend this build does not have yet.
constexpr const char* kPlannedAdapters[] = {"bigquery"};

std::string JoinedSupported() {
  std::string joined;
  for (const std::string& adapter : SupportedAdapters()) joined += (joined.empty() ? "" : ", ") + adapter;
  return joined;
}

std::unique_ptr<Warehouse> OpenDuckDb(const WarehouseConfig& config) {
  auto path = config.connection.find("path");
  std::filesystem::path file = path != config.connection.end() && !path->second.empty()
                                   ? std::filesystem::path(path->second)
                                   : std::filesystem::path(".sluice") /
                                         ((config.target.empty() ? "default" : config.target) + ".duckdb");
  if (file.is_relative()) file = config.project_dir / file;
  return DuckDbWarehouse::Open(file.lexically_normal(), config.mode == AccessMode::kReadOnly, config.wait);
}

// Keys: host, port (HTTP), username, password, settings.<name>, database (the current database of the caller's SQL).
std::unique_ptr<Warehouse> OpenClickHouse(const WarehouseConfig& config) {
  ClickHouseEndpoint endpoint;
  std::string database = "default";
  for (const auto& [key, value] : config.connection) {
    if (key == "host" && !value.empty()) {
      endpoint.host = value;
    } else if (key == "port") {
      bool digits = !value.empty() && value.size() < 6 &&
                    std::all_of(value.begin(), value.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
      if (!digits || std::stoi(value) == 0 || std::stoi(value) > 65535) {
        throw Error(Diagnostic{"SLU-WAREHOUSE-031", "ClickHouse port \"" + value + "\" is not a port number", {},
                               "set the target's connection port to the server's HTTP port, e.g. 8123", {}});
      }
      endpoint.port = std::stoi(value);
    } else if (key == "username" && !value.empty()) {
      endpoint.username = value;
    } else if (key == "password") {
      endpoint.password = value;
    } else if (key.rfind("settings.", 0) == 0) {
      endpoint.settings[key.substr(9)] = value;
    } else if (key == "database" && !value.empty()) {
      database = value;
    }
  }
  // A server has no file lock to wait for; a run canceled before it connects stops here.
  if (config.wait.cancel != nullptr && config.wait.cancel->load()) {
    throw Error(Diagnostic{"SLU-WAREHOUSE-008", "canceled before connecting to ClickHouse at " + endpoint.host + ":" +
                                                    std::to_string(endpoint.port), {}, "", {}});
  }
  if (config.mode == AccessMode::kReadOnly) endpoint.settings["readonly"] = "2";
  return ClickHouseWarehouse::Open(std::move(endpoint), std::move(database));
}

// Keys: host, port, username, password, dbname, sslmode (libpq's meanings), and database: the schema the caller's SQL
// resolves unqualified names in (the CLI sets it from the target), not a libpq key.
std::unique_ptr<Warehouse> OpenPostgres(const WarehouseConfig& config) {
  std::map<std::string, std::string> keys;
  std::string schema;
  for (const auto& [key, value] : config.connection) {
    if (key == "database") {
      schema = value;
    } else {
      keys[key] = value;
    }
  }
  if (auto port = keys.find("port"); port != keys.end()) {
    const std::string& value = port->second;
    bool digits = !value.empty() && value.size() < 6 &&
                  std::all_of(value.begin(), value.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(value) == 0 || std::stoi(value) > 65535) {
      throw Error(Diagnostic{"SLU-WAREHOUSE-031", "PostgreSQL port \"" + value + "\" is not a port number", {},
                             "set the target's connection port to the server's port, e.g. 5432", {}});
    }
  }
  auto get = [&](const std::string& key, const std::string& fallback) {
    auto found = keys.find(key);
    return found == keys.end() || found->second.empty() ? fallback : found->second;
  };
  PostgresEndpoint endpoint;
  endpoint.conninfo = pg::ConnectionStringFromKeys(keys);
  endpoint.display = get("host", "localhost") + ":" + get("port", "5432") + "/" + get("dbname", "(default)") +
                     " as " + get("username", get("user", "(default)"));
  endpoint.password = get("password", "");
  endpoint.default_schema = schema;
  endpoint.read_only = config.mode == AccessMode::kReadOnly;
  return PostgresWarehouse::Open(std::move(endpoint), config.wait);
}

}  // namespace

std::unique_ptr<Warehouse> OpenWarehouse(const WarehouseConfig& config) {
  if (config.adapter == "duckdb") return OpenDuckDb(config);
  if (config.adapter == "clickhouse") return OpenClickHouse(config);
  if (config.adapter == "postgres") return OpenPostgres(config);
  bool planned = std::find(std::begin(kPlannedAdapters), std::end(kPlannedAdapters), config.adapter) !=
                 std::end(kPlannedAdapters);
  std::string message = planned ? "adapter \"" + config.adapter + "\" is not supported yet"
                                : "unknown adapter \"" + config.adapter + "\"";
  throw Error(Diagnostic{"SLU-WAREHOUSE-001",
                         message,
                         {},
                         "this build supports: " + JoinedSupported() +
                             "; set adapter = \"duckdb\" at the top of streambuild_project.toml (or of "
                             "streambuild_local.toml, which overrides it)",
                         {}});
}

std::vector<std::string> SupportedAdapters() { return {"clickhouse", "duckdb", "postgres"}; }

}  // namespace sluice
