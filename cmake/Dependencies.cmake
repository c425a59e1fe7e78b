# Third-party dependencies: Debian 12 packages plus DuckDB from third_party/ (scripts/setup.sh).
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)
find_package(SQLite3 REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(CLI11 REQUIRED)
find_package(GTest REQUIRED)
pkg_check_modules(TOMLPLUSPLUS REQUIRED IMPORTED_TARGET tomlplusplus)
find_package(OpenSSL REQUIRED)
# Time zones for schedules (src/core/time_zone.cpp): Howard Hinnant's date-tz over the system tz database.
find_package(date REQUIRED)
# The ClickHouse backend's HTTP client (a compiled library; only warehouse/clickhouse/clickhouse_http.cpp includes it).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
pkg_check_modules(LIBPQ REQUIRED IMPORTED_TARGET libpq)
pkg_check_modules(LIBCURL REQUIRED IMPORTED_TARGET libcurl)
# The sluice executable's allocator (src/cli/allocator.cpp). Not with sanitizers, which bring their own.
if(SLUICE_SANITIZE OR CMAKE_CXX_FLAGS MATCHES "-fsanitize")
  set(SLUICE_JEMALLOC OFF)
else()
  pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
  set(SLUICE_JEMALLOC ON)
endif()

set(SLUICE_DUCKDB_DIR "${PROJECT_SOURCE_DIR}/third_party/duckdb")
if(NOT EXISTS "${SLUICE_DUCKDB_DIR}/lib/libduckdb.so")
  message(FATAL_ERROR "DuckDB is missing from third_party/duckdb: run scripts/setup.sh (make setup)")
endif()
add_library(duckdb SHARED IMPORTED GLOBAL)
set_target_properties(duckdb PROPERTIES
  IMPORTED_LOCATION "${SLUICE_DUCKDB_DIR}/lib/libduckdb.so"
  IMPORTED_NO_SONAME ON
  INTERFACE_INCLUDE_DIRECTORIES "${SLUICE_DUCKDB_DIR}/include")
set(CMAKE_BUILD_RPATH "${SLUICE_DUCKDB_DIR}/lib")
# The header alone: Sluice loads the library itself on first use (src/warehouse/duckdb/duckdb_library.hpp).
add_library(duckdb_headers INTERFACE)
target_include_directories(duckdb_headers INTERFACE "${SLUICE_DUCKDB_DIR}/include")
