#include "warehouse/duckdb/duckdb_library.hpp"

#include <dlfcn.h>

#include <string>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

[[noreturn]] void FailToLoad(const std::string& what) {
  throw Error(Diagnostic{"SLU-WAREHOUSE-006", "cannot load the DuckDB library: " + what, {},
                         "run scripts/setup.sh (make setup) to install DuckDB into third_party/duckdb", {}});
}

void* OpenLibrary() {
  std::string errors;
  for (const char* candidate : {SLUICE_DUCKDB_LIBRARY, "libduckdb.so"}) {
    if (void* handle = ::dlopen(candidate, RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* error = ::dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(error ? error : candidate);
  }
  FailToLoad(errors);
}

template <typename Function>
void Bind(void* handle, const char* name, Function& slot) {
  void* symbol = ::dlsym(handle, name);
  if (symbol == nullptr) FailToLoad(std::string("missing function ") + name);
  slot = reinterpret_cast<Function>(symbol);
}

DuckDbApi LoadApi() {
  void* handle = OpenLibrary();  // kept open for the life of the process
  DuckDbApi api{};
  Bind(handle, "duckdb_create_config", api.create_config);
  Bind(handle, "duckdb_set_config", api.set_config);
  Bind(handle, "duckdb_destroy_config", api.destroy_config);
  Bind(handle, "duckdb_open_ext", api.open_ext);
  Bind(handle, "duckdb_close", api.close);
  Bind(handle, "duckdb_connect", api.connect);
  Bind(handle, "duckdb_disconnect", api.disconnect);
  Bind(handle, "duckdb_query", api.query);
  Bind(handle, "duckdb_prepare", api.prepare);
  Bind(handle, "duckdb_destroy_prepare", api.destroy_prepare);
  Bind(handle, "duckdb_destroy_result", api.destroy_result);
  Bind(handle, "duckdb_result_error", api.result_error);
  Bind(handle, "duckdb_result_error_type", api.result_error_type);
  Bind(handle, "duckdb_row_count", api.row_count);
  Bind(handle, "duckdb_column_count", api.column_count);
  Bind(handle, "duckdb_column_name", api.column_name);
  Bind(handle, "duckdb_value_varchar", api.value_varchar);
  Bind(handle, "duckdb_value_is_null", api.value_is_null);
  Bind(handle, "duckdb_free", api.free);
  Bind(handle, "duckdb_interrupt", api.interrupt);
  return api;
}

}  // namespace

const DuckDbApi& DuckDb() {
  static const DuckDbApi api = LoadApi();  // a failed load throws and is retried by the next call
  return api;
}

}  // namespace sluice
