#include "warehouse/registry.hpp"

#include <algorithm>

#include "core/diagnostic.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice {

namespace {

// Adapters Sluice knows (named by the seeds' projects) whose backend this build does not have yet.
constexpr const char* kPlannedAdapters[] = {"bigquery", "clickhouse", "postgres"};

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

}  // namespace

std::unique_ptr<Warehouse> OpenWarehouse(const WarehouseConfig& config) {
  if (config.adapter == "duckdb") return OpenDuckDb(config);
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

std::vector<std::string> SupportedAdapters() { return {"duckdb"}; }

}  // namespace sluice
