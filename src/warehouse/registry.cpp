#include "warehouse/registry.hpp"

#include <algorithm>

#include "core/diagnostic.hpp"
#include "core/environment.hpp"
#include "core/postgres/pg_connection.hpp"
#include "warehouse/bigquery/bigquery_warehouse.hpp"
#include "warehouse/clickhouse/clickhouse_warehouse.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"
#include "warehouse/postgres/postgres_warehouse.hpp"

namespace sluice {

namespace {

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

// Keys: project (required), location (US), api_url, token_url, credentials (a credentials file replacing the ADC
// search; relative to the project), max_concurrent_jobs_per_table (2). Credentials otherwise come from Application
// Default Credentials (warehouse/bigquery/google_credentials.hpp).
std::unique_ptr<Warehouse> OpenBigQuery(const WarehouseConfig& config) {
  BigQueryOptions options;
  auto key = [&](const char* name) -> std::optional<std::string> {
    auto found = config.connection.find(name);
    if (found == config.connection.end() || found->second.empty()) return std::nullopt;
    return found->second;
  };
  auto invalid = [](std::string message, std::string hint) {
    return Error(Diagnostic{"SLU-WAREHOUSE-057", std::move(message), {}, std::move(hint), {}});
  };
  std::optional<std::string> project = key("project");
  if (!project) {
    throw invalid("the BigQuery target has no connection key `project`",
                  "set project = \"<GCP project id>\" in the target's [connection] (SDK pipelines: "
                  "SEGMENTSTREAM_WAREHOUSE_CATALOG)");
  }
  options.endpoint.project = *project;
  if (auto location = key("location")) options.endpoint.location = *location;
  if (auto api_url = key("api_url")) {
    options.endpoint.api_url = *api_url;
    std::string& url = options.endpoint.api_url;
    while (!url.empty() && url.back() == '/') url.pop_back();
  }
  if (auto token_url = key("token_url")) options.credentials.token_url = *token_url;
  if (auto credentials = key("credentials")) {
    std::filesystem::path file(*credentials);
    if (file.is_relative()) file = config.project_dir / file;
    options.credentials.credentials_file = file.lexically_normal().string();
  }
  if (auto cap = key("max_concurrent_jobs_per_table")) {
    bool digits = cap->size() < 4 &&
                  std::all_of(cap->begin(), cap->end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
    if (!digits || std::stoi(*cap) == 0) {
      throw invalid("max_concurrent_jobs_per_table = \"" + *cap + "\" is not a positive number",
                    "set it to how many jobs may change one table at once, e.g. 2");
    }
    options.max_concurrent_jobs_per_table = std::stoi(*cap);
  }
  options.credentials.environment = ProcessEnvironment();
  if (config.wait.cancel != nullptr && config.wait.cancel->load()) {
    throw Error(Diagnostic{"SLU-WAREHOUSE-008", "canceled before connecting to BigQuery project " + *project, {}, "",
                           {}});
  }
  return BigQueryWarehouse::Open(std::move(options));
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
  if (config.adapter == "bigquery") return OpenBigQuery(config);
  if (config.adapter == "postgres") return OpenPostgres(config);
  throw Error(Diagnostic{"SLU-WAREHOUSE-001",
                         "unknown adapter \"" + config.adapter + "\"",
                         {},
                         "this build supports: " + JoinedSupported() +
                             "; set adapter = \"duckdb\" at the top of streambuild_project.toml (or of "
                             "streambuild_local.toml, which overrides it)",
                         {}});
}

std::vector<std::string> SupportedAdapters() { return {"bigquery", "clickhouse", "duckdb", "postgres"}; }

}  // namespace sluice
