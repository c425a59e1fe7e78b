// Sluice's on/off environment settings (SLUICE_TIMINGS, SLUICE_PARSE_CACHE), read one way; and the lookup of
// environment variables that configuration reads through, so tests can give their own.
// Thread-safety: reads the environment; safe while no thread changes it.
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace sluice {

// The setting of the environment variable `name` as a switch: nullopt when unset or empty; false for "0",
// "off", "false" or "no" (any case); true for anything else ("1", "on", "yes" …).
std::optional<bool> EnvironmentSwitch(const char* name);

// The value of an environment variable, or nullopt when it is unset.
using EnvironmentLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process's environment.
EnvironmentLookup ProcessEnvironment();

}  // namespace sluice
