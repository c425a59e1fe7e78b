// Whether the CLI colours what it writes to a stream: only when the stream is a terminal and NO_COLOR is unset or
// empty (https://no-color.org: any non-empty value turns colour off). Every coloured output of `sluice` asks here.
// Thread-safety: reads the environment; safe while no thread changes it.
#pragma once

#include "core/diagnostic.hpp"

namespace sluice::cli {

// The rule itself: `no_color` is NO_COLOR's value, nullptr when unset.
bool ColorWanted(bool is_terminal, const char* no_color);

// The style for file descriptor `fd` (STDOUT_FILENO, STDERR_FILENO) in this process: ColorWanted(isatty(fd),
// getenv("NO_COLOR")).
TextStyle StyleFor(int fd);

}  // namespace sluice::cli
