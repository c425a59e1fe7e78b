#include "service/warehouse_settings.hpp"

#include <algorithm>

#include "core/asset_key.hpp"
#include "core/diagnostic.hpp"

namespace sluice::service {

namespace {

constexpr const char* kEngine = "SEGMENTSTREAM_WAREHOUSE_ENGINE";
constexpr const char* kCatalog = "SEGMENTSTREAM_WAREHOUSE_CATALOG";
constexpr const char* kDefaultNamespace = "SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE";
constexpr const char* kLocation = "SEGMENTSTREAM_WAREHOUSE_LOCATION";

std::optional<std::string> Lookup(const EnvironmentLookup& environment, const std::string& name) {
  std::optional<std::string> value = environment(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string Required(const EnvironmentLookup& environment, const char* name, const std::string& example) {
  std::optional<std::string> value = Lookup(environment, name);
  if (!value) {
    throw Error(Diagnostic{"SLU-SDK-001", std::string(name) + " is not set: the warehouse cannot be opened", {},
                           "set it before running, e.g. " + std::string(name) + "=" + example +
                               " (the four SEGMENTSTREAM_WAREHOUSE_* variables are read when a run first needs the "
                               "warehouse)",
                           {}});
  }
  return *value;
}

// host[:port] → connection keys.
void ClickHouseAddress(const std::string& catalog, WarehouseConfig& config) {
  std::string host = catalog;
  std::string port = "8123";
  for (const char* scheme : {"http://", "https://"}) {
    if (host.rfind(scheme, 0) == 0) host = host.substr(std::string(scheme).size());
  }
  if (!host.empty() && host.back() == '/') host.pop_back();
  if (size_t colon = host.rfind(':'); colon != std::string::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  bool valid_port = !port.empty() && port.size() <= 5 &&
                    std::all_of(port.begin(), port.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  if (host.empty() || !valid_port || host.find_first_of("/@ ") != std::string::npos) {
    throw Error(Diagnostic{"SLU-SDK-004",
                           std::string(kCatalog) + " = \"" + catalog + "\" is not a ClickHouse server address", {},
                           "write host[:port] of the server's HTTP interface, e.g. localhost:8123", {}});
  }
  config.connection["host"] = host;
  config.connection["port"] = port;
}

// [postgresql://]host[:port]/dbname[?sslmode=MODE] → connection keys. Credentials are refused in the catalog (they
// come from their own variables), and a catalog holding '@' is never echoed, since it may hold a password.
void PostgresAddress(const std::string& catalog, WarehouseConfig& config) {
  auto refuse = [&](const std::string& why) {
    bool secret = catalog.find('@') != std::string::npos;
    throw Error(Diagnostic{"SLU-SDK-006",
                           std::string(kCatalog) + (secret ? "" : " = \"" + catalog + "\"") +
                               " is not a PostgreSQL database address: " + why,
                           {},
                           "write postgresql://host:port/dbname or host[:port]/dbname (port 5432 by default); the "
                           "user and password go in SEGMENTSTREAM_WAREHOUSE_USERNAME / _PASSWORD (or PGUSER / "
                           "PGPASSWORD)",
                           {}});
  };
  std::string rest = catalog;
  for (const char* scheme : {"postgresql://", "postgres://"}) {
    if (rest.rfind(scheme, 0) == 0) rest = rest.substr(std::string(scheme).size());
  }
  if (rest.find('@') != std::string::npos) refuse("it holds credentials");
  std::string sslmode;
  if (size_t query = rest.find('?'); query != std::string::npos) {
    std::string parameters = rest.substr(query + 1);
    rest = rest.substr(0, query);
    if (parameters.rfind("sslmode=", 0) != 0 || parameters.find('&') != std::string::npos) {
      refuse("the only parameter it takes is sslmode");
    }
    sslmode = parameters.substr(8);
  }
  size_t slash = rest.find('/');
  if (slash == std::string::npos) refuse("it names no database (…/dbname)");
  std::string host = rest.substr(0, slash);
  std::string dbname = rest.substr(slash + 1);
  std::string port = "5432";
  if (size_t colon = host.rfind(':'); colon != std::string::npos) {
    port = host.substr(colon + 1);
    host = host.substr(0, colon);
  }
  bool valid_port = !port.empty() && port.size() <= 5 &&
                    std::all_of(port.begin(), port.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  if (host.empty() || !valid_port || dbname.empty() || dbname.find_first_of("/ ") != std::string::npos ||
      host.find(' ') != std::string::npos) {
    refuse("expected host[:port]/dbname");
  }
  config.connection["host"] = host;
  config.connection["port"] = port;
  config.connection["dbname"] = dbname;
  if (!sslmode.empty()) config.connection["sslmode"] = sslmode;
}

// The first of `names` that is set.
std::optional<std::string> FirstSet(const EnvironmentLookup& environment, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (auto value = Lookup(environment, name)) return value;
  }
  return std::nullopt;
}

}  // namespace

WarehouseSettings ReadWarehouseSettings(const EnvironmentLookup& environment) {
  WarehouseSettings settings;
  settings.engine = Required(environment, kEngine, "duckdb");
  const char* catalog_example = settings.engine == "duckdb"     ? "warehouse.duckdb"
                                : settings.engine == "bigquery" ? "my-gcp-project"
                                : settings.engine == "postgres" ? "postgresql://localhost:5432/analytics"
                                                                : "localhost:8123";
  settings.catalog = Required(environment, kCatalog, catalog_example);
  settings.default_namespace = Required(environment, kDefaultNamespace, "analytics");
  settings.location = Lookup(environment, kLocation);
  if (!IsIdentifier(settings.default_namespace)) {
    throw Error(Diagnostic{"SLU-SDK-003",
                           std::string(kDefaultNamespace) + " = \"" + settings.default_namespace +
                               "\" is not a namespace name",
                           {}, "use letters, digits and underscores, not starting with a digit", {}});
  }
  WarehouseConfig& config = settings.config;
  config.adapter = settings.engine;
  config.target = "sdk";
  config.project_dir = std::filesystem::current_path();
  if (settings.engine == "duckdb") {
    config.connection["path"] = settings.catalog;
  } else if (settings.engine == "clickhouse") {
    ClickHouseAddress(settings.catalog, config);
    config.connection["database"] = settings.default_namespace;
    for (const char* name : {"SEGMENTSTREAM_WAREHOUSE_USERNAME", "STREAMBUILD_CLICKHOUSE_USERNAME"}) {
      if (auto value = Lookup(environment, name)) {
        config.connection["username"] = *value;
        break;
      }
    }
    for (const char* name : {"SEGMENTSTREAM_WAREHOUSE_PASSWORD", "STREAMBUILD_CLICKHOUSE_PASSWORD"}) {
      if (auto value = Lookup(environment, name)) {
        config.connection["password"] = *value;
        break;
      }
    }
  } else if (settings.engine == "bigquery") {
    // Credentials come from Application Default Credentials (docs/bigquery.md), never from these variables.
    config.connection["project"] = settings.catalog;
    if (settings.location) config.connection["location"] = *settings.location;
  } else if (settings.engine == "postgres") {
    PostgresAddress(settings.catalog, config);
    config.connection["database"] = settings.default_namespace;  // the schema of the caller's SQL
    if (auto user = FirstSet(environment, {"SEGMENTSTREAM_WAREHOUSE_USERNAME", "PGUSER"})) {
      config.connection["username"] = *user;
    }
    if (auto password = FirstSet(environment, {"SEGMENTSTREAM_WAREHOUSE_PASSWORD", "PGPASSWORD"})) {
      config.connection["password"] = *password;
    }
  } else {
    throw Error(Diagnostic{"SLU-SDK-002",
                           std::string(kEngine) + " = \"" + settings.engine + "\" is not an engine Sluice can open",
                           {}, "use duckdb, clickhouse, postgres or bigquery", {}});
  }
  return settings;
}

const WarehouseSettings& LazyWarehouseSettings::Get() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!settings_) settings_ = ReadWarehouseSettings(environment_);
  return *settings_;
}

bool LazyWarehouseSettings::read() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return settings_.has_value();
}

}  // namespace sluice::service
