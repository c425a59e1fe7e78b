// Wall-clock timings of a command's phases for performance work: with the environment variable
// SLUICE_TIMINGS switched on (set to anything but empty, "0", "off", "false" or "no"; core/environment.hpp),
// each MarkPhase("name") prints to stderr the milliseconds since
// the previous mark, the total since the first mark and the resident memory; otherwise it does nothing
// beyond one getenv on first use.
// Thread-safety: MarkPhase may be called from any thread; marks are serialised.
#pragma once

namespace sluice {

void MarkPhase(const char* name);

}  // namespace sluice
