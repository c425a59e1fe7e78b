#include "core/virtual_names.hpp"

#include <cstdio>
#include <random>

namespace sluice {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

constexpr std::string_view kSeparator = "__";

}  // namespace

std::string NewDeploymentId(const Clock& clock) {
  std::random_device device;
  std::uniform_int_distribution<uint32_t> distribution(0, 0xFFFFFF);
  char suffix[8];
  std::snprintf(suffix, sizeof suffix, "%06x", distribution(device));
  return CompactUtc(clock.Now()) + "_" + suffix;
}

bool IsDeploymentId(std::string_view id) {
  // 8 digits, T, 6 digits, Z, _, then one or more letters or digits.
  if (id.size() < 18) return false;
  for (size_t i = 0; i < 8; ++i) {
    if (!IsDigit(id[i])) return false;
  }
  if (id[8] != 'T') return false;
  for (size_t i = 9; i < 15; ++i) {
    if (!IsDigit(id[i])) return false;
  }
  if (id[15] != 'Z' || id[16] != '_') return false;
  for (size_t i = 17; i < id.size(); ++i) {
    if (!IsAlnum(id[i])) return false;
  }
  return true;
}

std::string PhysicalName(std::string_view logical, std::string_view deployment_id) {
  return std::string(logical) + std::string(kSeparator) + std::string(deployment_id);
}

std::optional<PhysicalNameParts> SplitPhysicalName(std::string_view physical) {
  const size_t at = physical.rfind(kSeparator);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  const std::string_view id = physical.substr(at + kSeparator.size());
  if (!IsDeploymentId(id)) return std::nullopt;
  return PhysicalNameParts{std::string(physical.substr(0, at)), std::string(id)};
}

}  // namespace sluice
