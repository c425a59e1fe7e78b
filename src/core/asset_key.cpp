#include "core/asset_key.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "core/diagnostic.hpp"
#include "core/parallel_for.hpp"

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

namespace {

// The 8 bytes of s from `from` as a big-endian number, zero-padded: the numbers compare as the bytes do, and a
// name that ends sooner sorts first unless the longer one continues with zero bytes (the sort then compares the
// names themselves).
uint64_t BigEndianBytes(std::string_view s, size_t from) {
  uint64_t value = 0;
  for (size_t i = from; i < from + 8; ++i) value = (value << 8) | (i < s.size() ? static_cast<unsigned char>(s[i]) : 0);
  return value;
}

}  // namespace

std::vector<size_t> PlacesInKeyOrder(const std::vector<AssetKeyParts>& keys) {
  std::vector<std::string_view> name_spaces;
  for (const AssetKeyParts& key : keys) {
    if (name_spaces.empty() || name_spaces.back() != key.name_space) name_spaces.push_back(key.name_space);
  }
  std::sort(name_spaces.begin(), name_spaces.end());
  name_spaces.erase(std::unique(name_spaces.begin(), name_spaces.end()), name_spaces.end());
  struct Entry {
    uint32_t name_space;  // rank in name_spaces
    uint32_t given;       // index in keys
    uint64_t head;        // the name's bytes 0-7 and 8-15 (BigEndianBytes)
    uint64_t tail;
  };
  if (keys.size() > UINT32_MAX) throw std::length_error("PlacesInKeyOrder: more than 2^32 keys");
  std::vector<Entry> entries(keys.size());
  std::string_view last_name_space;
  uint32_t last_rank = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    const AssetKeyParts& key = keys[i];
    if (i == 0 || key.name_space != last_name_space) {
      last_name_space = key.name_space;
      last_rank = static_cast<uint32_t>(std::lower_bound(name_spaces.begin(), name_spaces.end(), key.name_space) -
                                        name_spaces.begin());
    }
    entries[i] = Entry{last_rank, static_cast<uint32_t>(i), BigEndianBytes(key.name, 0), BigEndianBytes(key.name, 8)};
  }
  ParallelStableSort(entries.begin(), entries.end(), [&](const Entry& a, const Entry& b) {
    if (a.name_space != b.name_space) return a.name_space < b.name_space;
    if (a.head != b.head) return a.head < b.head;
    if (a.tail != b.tail) return a.tail < b.tail;
    const std::string_view a_name = keys[a.given].name;
    const std::string_view b_name = keys[b.given].name;
    return a_name.size() <= 16 && b_name.size() <= 16 ? a_name.size() < b_name.size() : a_name < b_name;
  });
  std::vector<size_t> places(keys.size());
  for (size_t place = 0; place < entries.size(); ++place) places[entries[place].given] = place;
  return places;
}

}  // namespace sluice
