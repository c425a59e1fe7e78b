// Sluice's on/off environment settings (SLUICE_TIMINGS, SLUICE_PARSE_CACHE), read one way.
// Thread-safety: reads the environment; safe while no thread changes it.
#pragma once

#include <optional>

namespace sluice {

// The setting of the environment variable `name` as a switch: nullopt when unset or empty; false for "0",
// "off", "false" or "no" (any case); true for anything else ("1", "on", "yes" …).
std::optional<bool> EnvironmentSwitch(const char* name);

}  // namespace sluice
