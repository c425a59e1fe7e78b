# sluice_add_pipeline(<name> <sources>...): a pipeline's C++ definitions built into their own program, <name>, with
# Sluice's commands (run, status, runs, logs, inspect, backfills, clean). The sources define
# `sluice::dg::Definitions sluice_definitions()` (include <sluice/dg.hpp>). See docs/sdk.md.
function(sluice_add_pipeline name)
  if(NOT ARGN)
    message(FATAL_ERROR "sluice_add_pipeline(${name}): name the source files that define sluice_definitions()")
  endif()
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE sluice_code_program sluice_cli)
endfunction()
