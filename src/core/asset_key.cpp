#include "core/asset_key.hpp"

#include <algorithm>

#include "core/diagnostic.hpp"

namespace sluice {

bool IsIdentifier(std::string_view part) {
  if (part.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(part[0])) return false;
  for (char c : part) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

AssetKey AssetKey::FromParts(const std::vector<std::string>& parts, std::string_view default_namespace) {
  if (parts.empty() || parts.size() > 2) {
    std::string shown;
    for (const std::string& part : parts) shown += (shown.empty() ? "" : ".") + part;
    throw Error(Diagnostic{"SLU-CORE-001",
                           "asset key '" + shown + "' has " + std::to_string(parts.size()) +
                               " parts; expected 1 (name) or 2 (namespace, name)",
                           {},
                           "write the key as `name` or `namespace.name`",
                           {}});
  }
  if (parts.size() == 1) {
    CheckPart(parts[0]);
    return AssetKey(std::string(default_namespace), parts[0]);
  }
  return Of(parts[0], parts[1]);
}

AssetKey AssetKey::Of(std::string_view name_space, std::string_view name) {
  CheckPart(name_space);
  CheckPart(name);
  return AssetKey(std::string(name_space), std::string(name));
}

void AssetKey::CheckPart(std::string_view part) {
  if (!IsIdentifier(part)) {
    throw Error(Diagnostic{"SLU-CORE-001",
                           "asset key part '" + std::string(part) + "' is not an identifier",
                           {},
                           "each part must match [A-Za-z_][A-Za-z0-9_]*",
                           {}});
  }
}

AssetKey AssetKey::Parse(std::string_view text, std::string_view default_namespace) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (true) {
    size_t dot = text.find('.', begin);
    parts.emplace_back(text.substr(begin, dot == std::string_view::npos ? std::string_view::npos : dot - begin));
    if (dot == std::string_view::npos) break;
    begin = dot + 1;
  }
  return FromParts(parts, default_namespace);
}

}  // namespace sluice
