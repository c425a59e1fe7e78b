// AssetKey: the identity of an asset, one or two identifier parts.
//
// One part names an asset in the default namespace; two parts are [namespace, name]. Each part matches
// `[A-Za-z_][A-Za-z0-9_]*`. Any other shape is rejected with SLU-CORE-001.
// Thread-safety: immutable value.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

inline constexpr std::string_view kDefaultNamespace = "main";

// True when `part` is a valid identifier part: `[A-Za-z_][A-Za-z0-9_]*`.
bool IsIdentifier(std::string_view part);

class AssetKey {
 public:
  // The empty key (both parts empty): a place to assign a key to, never a valid asset's key (as a moved-from
  // key is empty too).
  AssetKey() = default;
  // Throws Error(SLU-CORE-001) unless parts has 1 or 2 valid identifier parts.
  static AssetKey FromParts(const std::vector<std::string>& parts,
                            std::string_view default_namespace = kDefaultNamespace);
  // FromParts({name_space, name}) without building the parts.
  static AssetKey Of(std::string_view name_space, std::string_view name);
  // Parses "name" or "namespace.name" with the same rules.
  static AssetKey Parse(std::string_view text, std::string_view default_namespace = kDefaultNamespace);

  const std::string& name_space() const { return namespace_; }
  const std::string& name() const { return name_; }
  std::string ToString() const { return namespace_ + "." + name_; }

  auto operator<=>(const AssetKey&) const = default;

 private:
  // Throws Error(SLU-CORE-001) unless `part` is an identifier.
  static void CheckPart(std::string_view part);
  AssetKey(std::string name_space, std::string name) : namespace_(std::move(name_space)), name_(std::move(name)) {}
  std::string namespace_;
  std::string name_;
};

}  // namespace sluice
