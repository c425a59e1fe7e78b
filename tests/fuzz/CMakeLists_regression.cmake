# The replay of tests/fuzz/regressions/<target>/* through the fuzz entry functions, as a GoogleTest of the
# normal build (no clang or libFuzzer needed; in build/fuzz it runs with the sanitizers). Included from
# tests/CMakeLists.txt. Defined once.
include_guard(GLOBAL)
include("${PROJECT_SOURCE_DIR}/tests/fuzz/fuzz_entries.cmake")

sluice_test(fuzz_regression_test
  SOURCES "${PROJECT_SOURCE_DIR}/tests/fuzz/regression_test.cpp"
  DEPS sluice_fuzz_entries_sql sluice_fuzz_entries_project sluice_fuzz_entries_macros
  LABELS "sql;project")
