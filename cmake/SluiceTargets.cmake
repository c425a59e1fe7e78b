# One small helper per target kind. Every source list is explicit.

# sluice_library(<layer> SOURCES ... [DEPS ...]): the static library `sluice_<layer>`.
# DEPS lists what the layer may use (other layers as `sluice_<layer>`, or third-party targets); a layer
# that includes a header of a layer it does not list fails to link.
function(sluice_library layer)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_library(sluice_${layer} STATIC ${ARG_SOURCES})
  # include/ holds the public headers (the SDK's, and the value types they expose); src/ the layers' own.
  target_include_directories(sluice_${layer} PUBLIC ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  # Programs that link a layer (SDK pipelines among them) compile as C++20, whatever their own default.
  target_compile_features(sluice_${layer} PUBLIC cxx_std_20)
  target_link_libraries(sluice_${layer} PUBLIC ${ARG_DEPS})
endfunction()

# The ClickHouse test server every test declared with CLICKHOUSE uses: started once per ctest run by the test
# clickhouse_server_start (fixture setup `clickhouse`), stopped by clickhouse_server_stop (fixture cleanup), its
# folder (config, data, logs, the file http_port) in the build tree. scripts/clickhouse_test_server.sh does the work.
set(SLUICE_CLICKHOUSE_TEST_DIR "${PROJECT_BINARY_DIR}/clickhouse")

function(sluice_clickhouse_fixture)
  add_test(NAME clickhouse_server_start
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/clickhouse_test_server.sh" start "${SLUICE_CLICKHOUSE_TEST_DIR}")
  add_test(NAME clickhouse_server_stop
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/clickhouse_test_server.sh" stop "${SLUICE_CLICKHOUSE_TEST_DIR}")
  set_tests_properties(clickhouse_server_start PROPERTIES FIXTURES_SETUP clickhouse LABELS "clickhouse" TIMEOUT 200)
  set_tests_properties(clickhouse_server_stop PROPERTIES FIXTURES_CLEANUP clickhouse LABELS "clickhouse" TIMEOUT 60)
endfunction()

# The PostgreSQL 15 test server every test declared with POSTGRES uses, the same way: fixture `postgres`, its folder
# (the port, password and user files; the cluster itself unless run as root from a folder closed to `postgres`) in the
# build tree. scripts/postgres_test_server.sh does the work.
set(SLUICE_POSTGRES_TEST_DIR "${PROJECT_BINARY_DIR}/postgres")

function(sluice_postgres_fixture)
  add_test(NAME postgres_server_start
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/postgres_test_server.sh" start "${SLUICE_POSTGRES_TEST_DIR}")
  add_test(NAME postgres_server_stop
    COMMAND bash "${PROJECT_SOURCE_DIR}/scripts/postgres_test_server.sh" stop "${SLUICE_POSTGRES_TEST_DIR}")
  set_tests_properties(postgres_server_start PROPERTIES FIXTURES_SETUP postgres LABELS "postgres" TIMEOUT 200)
  set_tests_properties(postgres_server_stop PROPERTIES FIXTURES_CLEANUP postgres LABELS "postgres" TIMEOUT 60)
endfunction()

# sluice_test(<name> SOURCES ... DEPS ... LABELS ... [CLICKHOUSE] [POSTGRES]): a GoogleTest executable whose tests are
# registered one by one with CTest, each carrying LABELS (layer/area, engine, e2e). CLICKHOUSE: the tests run against
# the ClickHouse test server (label `clickhouse`, fixture `clickhouse`, SLUICE_TEST_CLICKHOUSE_DIR set to its folder;
# tests/support/clickhouse_test_server.hpp reads it). POSTGRES: likewise against the PostgreSQL test server (label
# `postgres`, fixture `postgres`, SLUICE_TEST_POSTGRES_DIR; tests/support/postgres_test_server.hpp).
function(sluice_test name)
  cmake_parse_arguments(ARG "CLICKHOUSE;POSTGRES" "" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    SLUICE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SLUICE_BINARY_DIR="${PROJECT_BINARY_DIR}")
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST TEST_LIST ${name}_TESTS)
  # gtest_discover_tests flattens list-valued PROPERTIES (CMake 3.25), so several labels are set by a
  # script CTest includes right after the discovered tests.
  set(label_script "${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake")
  set(labels "${ARG_LABELS}")
  set(fixtures "")
  set(environment "")
  if(ARG_CLICKHOUSE)
    if(NOT "clickhouse" IN_LIST labels)
      list(APPEND labels clickhouse)
    endif()
    list(APPEND fixtures clickhouse)
    list(APPEND environment "SLUICE_TEST_CLICKHOUSE_DIR=${SLUICE_CLICKHOUSE_TEST_DIR}")
  endif()
  if(ARG_POSTGRES)
    if(NOT "postgres" IN_LIST labels)
      list(APPEND labels postgres)
    endif()
    list(APPEND fixtures postgres)
    list(APPEND environment "SLUICE_TEST_POSTGRES_DIR=${SLUICE_POSTGRES_TEST_DIR}")
    target_link_libraries(${name} PRIVATE PkgConfig::LIBPQ)
  endif()
  set(extra "")
  if(fixtures)
    target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    set(extra " FIXTURES_REQUIRED \"${fixtures}\" ENVIRONMENT \"${environment}\"")
  endif()
  file(WRITE "${label_script}"
    "foreach(test IN LISTS ${name}_TESTS)\n"
    "  set_tests_properties(\"\${test}\" PROPERTIES LABELS \"${labels}\"${extra})\n"
    "endforeach()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${label_script}")
endfunction()
