// The backend registry: opens the warehouse a target names. The one place that dispatches on the adapter.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "warehouse/warehouse.hpp"

namespace sluice {

enum class AccessMode { kReadWrite, kReadOnly };

struct WarehouseConfig {
  std::string adapter;                              // "duckdb", ...
  std::map<std::string, std::string> connection;    // adapter keys, e.g. {"path": "..."} for DuckDB
  std::filesystem::path project_dir;                // relative paths resolve against it
  std::string target;                               // target name, for defaults such as .sluice/<target>.duckdb
  AccessMode mode = AccessMode::kReadWrite;
  WaitPolicy wait;  // how opening waits for another process holding the warehouse
};

// Throws SLU-WAREHOUSE-001 for an adapter this build does not support, or the backend's open error.
std::unique_ptr<Warehouse> OpenWarehouse(const WarehouseConfig& config);

// The adapters OpenWarehouse accepts, sorted.
std::vector<std::string> SupportedAdapters();

}  // namespace sluice
