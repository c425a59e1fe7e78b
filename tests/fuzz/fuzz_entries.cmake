# The fuzz entry functions (fuzz_entries.hpp), one small library per layer so each fuzz target links only
# the layers it exercises. Included by CMakeLists.txt (the libFuzzer build) and CMakeLists_regression.cmake
# (the GoogleTest replay in the normal build); defined once.
include_guard(GLOBAL)

set(SLUICE_FUZZ_DIR "${PROJECT_SOURCE_DIR}/tests/fuzz")

# sluice_fuzz_entries(<area> <source> DEPS ...): the static library `sluice_fuzz_entries_<area>`.
function(sluice_fuzz_entries area source)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  add_library(sluice_fuzz_entries_${area} STATIC "${SLUICE_FUZZ_DIR}/${source}")
  target_include_directories(sluice_fuzz_entries_${area} PUBLIC "${SLUICE_FUZZ_DIR}")
  target_link_libraries(sluice_fuzz_entries_${area} PUBLIC ${ARG_DEPS})
endfunction()

sluice_fuzz_entries(sql fuzz_entries_sql.cpp DEPS sluice_sql)
sluice_fuzz_entries(project fuzz_entries_project.cpp DEPS sluice_project)
sluice_fuzz_entries(macros fuzz_entries_macros.cpp DEPS sluice_project_macros)
