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

}  // namespace sluice
