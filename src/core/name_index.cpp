#include "core/name_index.hpp"

#include <cstring>
#include <functional>
#include <stdexcept>

namespace sluice {

namespace {

size_t CapacityFor(size_t names) {
  size_t capacity = 16;
  while (capacity < names * 2) capacity *= 2;
  return capacity;
}

}  // namespace

NameIndex::NameIndex(size_t expected_names) : slots_(CapacityFor(expected_names)) {}

HashedIndex::HashedIndex(size_t capacity) : slots_(capacity == 0 ? 0 : CapacityFor(capacity)), capacity_(capacity) {}

uint64_t NameIndex::HashOf(std::string_view name) { return std::hash<std::string_view>()(name); }

size_t NameIndex::SlotOf(std::string_view name, uint64_t hash) const {
  const size_t mask = slots_.size() - 1;
  const auto short_hash = static_cast<uint32_t>(hash);
  for (size_t at = static_cast<size_t>(hash >> 32 ^ hash) & mask;; at = (at + 1) & mask) {
    const Slot& slot = slots_[at];
    if (slot.data == nullptr) return at;
    if (slot.hash == short_hash && slot.size == name.size() && std::memcmp(slot.data, name.data(), name.size()) == 0) {
      return at;
    }
  }
}

std::pair<size_t, bool> NameIndex::Insert(std::string_view name, size_t index) {
  if (name.size() > UINT32_MAX) throw std::length_error("NameIndex: a name longer than 4 GiB");
  if ((size_ + 1) * 2 > slots_.size()) Grow();
  uint64_t hash = HashOf(name);
  Slot& slot = slots_[SlotOf(name, hash)];
  if (slot.data != nullptr) return {slot.index, false};
  // An empty name still needs a non-null pointer to mark its slot as taken.
  slot = Slot{name.empty() ? "" : name.data(), static_cast<uint32_t>(name.size()), static_cast<uint32_t>(hash), index};
  ++size_;
  return {index, true};
}

size_t NameIndex::Find(std::string_view name) const {
  const Slot& slot = slots_[SlotOf(name, HashOf(name))];
  return slot.data == nullptr ? kNone : slot.index;
}

void NameIndex::Grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  for (const Slot& slot : old) {
    if (slot.data == nullptr) continue;
    std::string_view name(slot.data, slot.size);
    slots_[SlotOf(name, HashOf(name))] = slot;
  }
}

}  // namespace sluice
