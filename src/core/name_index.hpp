// Names → indices, for the hundreds of thousands of model names a large project looks up: one open-addressing
// table of 24-byte slots (the name's hash, a view of the name, the index), so a lookup reads one or two
// adjacent slots and confirms the name it finds, where std::unordered_map follows a bucket to a separately
// allocated node and from there to the name. At 100,000 models the loader's 300,000 lookups were ~4% of a
// `sluice discover` profile in std::unordered_map.
//
// The names are views: the caller keeps their characters alive and in place for the index's lifetime.
// Thread-safety: concurrent Finds are safe; Insert is not (insert from one thread, then share).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

class NameIndex {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  // Sized so `expected_names` insertions do not grow the table.
  explicit NameIndex(size_t expected_names = 0);

  // Adds name → index unless the name is present. Returns the index stored for the name (the earlier one
  // when it was present) and whether this call added it.
  std::pair<size_t, bool> Insert(std::string_view name, size_t index);

  // The index stored for `name`; kNone when it is absent.
  size_t Find(std::string_view name) const;

  size_t size() const { return size_; }

 private:
  struct Slot {
    const char* data = nullptr;  // null: an empty slot
    uint32_t size = 0;
    uint32_t hash = 0;  // the low 32 bits of the name's hash
    size_t index = 0;
  };

  static uint64_t HashOf(std::string_view name);
  // The slot holding `name`, or the empty slot where it would go.
  size_t SlotOf(std::string_view name, uint64_t hash) const;
  void Grow();

  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t size_ = 0;
};

// Indices found by a hash and confirmed by the caller, for keys the caller keeps in its own array (an asset's
// two-part key): a slot holds only the hash's low 32 bits and the index, 8 bytes. Sized once, for at most
// `capacity` entries; `is_key(index)` tells whether the entry at `index` holds the key being inserted or found.
// Thread-safety: as NameIndex.
class HashedIndex {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  explicit HashedIndex(size_t capacity = 0);

  // Adds hash → index unless an entry with this hash satisfies is_key. Returns the index stored for the key and
  // whether this call added it. Adding past the capacity, or an index of 2^32 - 1 or more, throws
  // std::length_error.
  template <typename IsKey>
  std::pair<size_t, bool> Insert(uint64_t hash, size_t index, const IsKey& is_key) {
    if (slots_.empty()) throw std::length_error("HashedIndex: more entries than its capacity");
    Slot& slot = slots_[SlotOf(hash, is_key)];
    if (slot.index != kEmpty) return {slot.index, false};
    if (size_ >= capacity_) throw std::length_error("HashedIndex: more entries than its capacity");
    if (index >= kEmpty) throw std::length_error("HashedIndex: an index of 2^32 - 1 or more");
    slot = Slot{static_cast<uint32_t>(hash), static_cast<uint32_t>(index)};
    ++size_;
    return {index, true};
  }

  // The index stored for the key; kNone when it is absent.
  template <typename IsKey>
  size_t Find(uint64_t hash, const IsKey& is_key) const {
    if (slots_.empty()) return kNone;
    const Slot& slot = slots_[SlotOf(hash, is_key)];
    return slot.index == kEmpty ? kNone : slot.index;
  }

  size_t size() const { return size_; }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint32_t hash = 0;  // the low 32 bits of the key's hash
    uint32_t index = kEmpty;
  };

  // The slot holding the key, or the empty slot where it would go (the table is at most half full).
  template <typename IsKey>
  size_t SlotOf(uint64_t hash, const IsKey& is_key) const {
    const size_t mask = slots_.size() - 1;
    const auto short_hash = static_cast<uint32_t>(hash);
    for (size_t at = static_cast<size_t>(hash >> 32 ^ hash) & mask;; at = (at + 1) & mask) {
      const Slot& slot = slots_[at];
      if (slot.index == kEmpty || (slot.hash == short_hash && is_key(slot.index))) return at;
    }
  }

  std::vector<Slot> slots_;  // a power of two, at least twice the capacity
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace sluice
