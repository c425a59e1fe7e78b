#include "project/relation_name.hpp"

#include <cctype>
#include <string>

#include "core/asset_key.hpp"

namespace sluice {

namespace {

bool HasManagedSourcePrefix(std::string_view name) {
  return name.starts_with("kafka__") || name.starts_with("raw__") || name.starts_with("mv__");
}

bool LooksLikeDeploymentSuffix(std::string_view name) {
  // __YYYYMMDDTHHMMSSZ_<6 hex> or __reconcile_<ts>
  if (name.find("__reconcile_") != std::string_view::npos) return true;
  size_t at = name.rfind("__");
  if (at == std::string_view::npos) return false;
  std::string_view tail = name.substr(at + 2);
  if (tail.size() != 8 + 1 + 6 + 1 + 1 + 6) return false;
  auto digits = [&](size_t b, size_t n) {
    for (size_t i = b; i < b + n; ++i)
      if (tail[i] < '0' || tail[i] > '9') return false;
    return true;
  };
  auto hex = [&](size_t b, size_t n) {
    for (size_t i = b; i < b + n; ++i)
      if (!std::isxdigit(static_cast<unsigned char>(tail[i]))) return false;
    return true;
  };
  return digits(0, 8) && tail[8] == 'T' && digits(9, 6) && tail[15] == 'Z' && tail[16] == '_' && hex(17, 6);
}

}  // namespace

bool IsAllowedRelationName(std::string_view name) {
  return IsIdentifier(name) && !HasManagedSourcePrefix(name) && !LooksLikeDeploymentSuffix(name);
}

bool IsAllowedRelationPrefix(std::string_view prefix) {
  return prefix.empty() || (IsIdentifier(prefix) && !HasManagedSourcePrefix(prefix));
}

}  // namespace sluice
