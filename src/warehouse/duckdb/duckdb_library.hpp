// The DuckDB C API, loaded with dlopen on first use instead of linked: commands that never open a warehouse
// (compile, discover, runs …) do not pay for mapping and relocating the large library at start-up.
//
// The library is looked up at the path the build recorded (third_party/duckdb/lib/libduckdb.so), then by
// name through the usual search path (LD_LIBRARY_PATH, the binary's run path).
// Errors: SLU-WAREHOUSE-006 when the library or one of its functions cannot be loaded.
// Thread-safety: DuckDb() may be called from any thread; the library is loaded once.
#pragma once

#include <duckdb.h>

namespace sluice {

// The functions Sluice calls, named as in duckdb.h without the `duckdb_` prefix.
struct DuckDbApi {
  decltype(&::duckdb_create_config) create_config;
  decltype(&::duckdb_set_config) set_config;
  decltype(&::duckdb_destroy_config) destroy_config;
  decltype(&::duckdb_open_ext) open_ext;
  decltype(&::duckdb_close) close;
  decltype(&::duckdb_connect) connect;
  decltype(&::duckdb_disconnect) disconnect;
  decltype(&::duckdb_query) query;
  decltype(&::duckdb_prepare) prepare;
  decltype(&::duckdb_destroy_prepare) destroy_prepare;
  decltype(&::duckdb_destroy_result) destroy_result;
  decltype(&::duckdb_result_error) result_error;
  decltype(&::duckdb_result_error_type) result_error_type;
  decltype(&::duckdb_row_count) row_count;
  decltype(&::duckdb_column_count) column_count;
  decltype(&::duckdb_column_name) column_name;
  decltype(&::duckdb_value_varchar) value_varchar;
  decltype(&::duckdb_value_is_null) value_is_null;
  decltype(&::duckdb_free) free;
  decltype(&::duckdb_interrupt) interrupt;
};

const DuckDbApi& DuckDb();

}  // namespace sluice
