#include "core/environment.hpp"

#include <cstdlib>
#include <string>

namespace sluice {

EnvironmentLookup ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::optional<bool> EnvironmentSwitch(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  std::string lower(value);
  for (char& c : lower) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return !(lower == "0" || lower == "off" || lower == "false" || lower == "no");
}

}  // namespace sluice
