// The warehouse IO manager (the seed's `from segmentstream import …`): its resource key, the resources that bind it,
// and the metadata that declares a daily asset's physical DATE column.
//
// The warehouse is configured at the first access of a run, from SEGMENTSTREAM_WAREHOUSE_ENGINE (duckdb | clickhouse),
// SEGMENTSTREAM_WAREHOUSE_CATALOG (DuckDB: the database file; ClickHouse: the server, host[:port]),
// SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE and optionally SEGMENTSTREAM_WAREHOUSE_LOCATION (where the engine places
// namespaces; neither DuckDB nor ClickHouse has locations). Building definitions and `inspect` never read them.
#pragma once

#include <string>

#include "sluice/dagster.hpp"

namespace sluice {

inline const std::string WAREHOUSE_IO_MANAGER_KEY = "warehouse_io_manager";

// The metadata key warehouse_asset_metadata writes.
inline const std::string kPartitionByDateMetadata = "sluice/partition_by_date";

// {WAREHOUSE_IO_MANAGER_KEY: the warehouse IO manager}.
inline dagster::Resources warehouse_resources() { return {{WAREHOUSE_IO_MANAGER_KEY, {"warehouse_io_manager"}}}; }

struct WarehouseAssetMetadata {
  std::string partition_by_date;  // the DATE column a daily asset is partitioned by
};

// warehouse_asset_metadata(partition_by_date="event_date").
inline dagster::Metadata warehouse_asset_metadata(WarehouseAssetMetadata options) {
  dagster::Metadata metadata;
  if (!options.partition_by_date.empty()) metadata[kPartitionByDateMetadata] = options.partition_by_date;
  return metadata;
}

}  // namespace sluice
