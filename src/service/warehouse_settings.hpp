// The warehouse a code pipeline writes to, from the environment (seed 000): read at the first warehouse access of a
// run and never before — building definitions and `inspect` do not read it.
//
//   SEGMENTSTREAM_WAREHOUSE_ENGINE             duckdb | clickhouse | postgres | bigquery
//   SEGMENTSTREAM_WAREHOUSE_CATALOG            DuckDB: the database file (relative to the working directory);
//                                              ClickHouse: the server's HTTP address, host[:port] (port 8123);
//                                              PostgreSQL: the database, postgresql://host[:port]/dbname or
//                                              host[:port]/dbname (port 5432), optionally ?sslmode=MODE;
//                                              BigQuery: the GCP project id
//   SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE  where one-part keys live (a DuckDB or PostgreSQL schema, a ClickHouse
//                                              database, a BigQuery dataset)
//   SEGMENTSTREAM_WAREHOUSE_LOCATION           optional: where namespaces are created, for engines with locations
//                                              (BigQuery: the datasets' location, default US)
//
// BigQuery credentials come from Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, the gcloud ADC file,
// the metadata server; docs/bigquery.md).
//
// Credentials, secrets the seed's four variables deliberately exclude, come from SEGMENTSTREAM_WAREHOUSE_USERNAME /
// _PASSWORD, else STREAMBUILD_CLICKHOUSE_USERNAME / _PASSWORD (ClickHouse) or PGUSER / PGPASSWORD (PostgreSQL); they
// are passed to the connection only and never printed.
// Errors: SLU-SDK-001 a required variable unset or empty (naming it), -002 an engine Sluice cannot open, -003 a default
// namespace that is not an identifier, -004 a ClickHouse catalog that is not host[:port], -006 a PostgreSQL catalog
// that is not [postgresql://]host[:port]/dbname (or holds credentials: then it is not echoed).
// Thread-safety: LazyWarehouseSettings::Get may be called from any thread; the first call reads the environment.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "core/environment.hpp"
#include "warehouse/registry.hpp"

namespace sluice::service {

struct WarehouseSettings {
  std::string engine;
  std::string catalog;
  std::string default_namespace;
  std::optional<std::string> location;
  WarehouseConfig config;  // how to open it (connection keys, secrets included: never print it)
};

WarehouseSettings ReadWarehouseSettings(const EnvironmentLookup& environment);

// ReadWarehouseSettings on the first Get, kept for the process.
class LazyWarehouseSettings {
 public:
  explicit LazyWarehouseSettings(EnvironmentLookup environment) : environment_(std::move(environment)) {}
  const WarehouseSettings& Get();
  bool read() const;  // whether the environment has been read (tests check that inspection never does)

 private:
  EnvironmentLookup environment_;
  mutable std::mutex mutex_;
  std::optional<WarehouseSettings> settings_;
};

}  // namespace sluice::service
