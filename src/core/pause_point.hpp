// Named pause points for deterministic crash tests.
//
// When the environment variable SLUICE_TEST_PAUSE_AT equals `name`, PausePoint(name) writes the line
// `sluice: paused at <name>` to stderr, creates the file named by SLUICE_TEST_PAUSE_MARKER (when set),
// and sleeps for up to 10 minutes so a test can SIGKILL the process exactly there, or act and then let it go on by
// creating the file named by SLUICE_TEST_PAUSE_RESUME (when set). Otherwise it
// returns at once. Used by the engine and backends, e.g. "after_write_before_commit".
#pragma once

#include <string_view>

namespace sluice {

void PausePoint(std::string_view name);

}  // namespace sluice
