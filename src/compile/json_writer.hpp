// The writer of the large compile artifacts (manifest.json, streambuild_dag.json): it appends to a string as
// values arrive, with no document tree in memory, and produces exactly the bytes nlohmann::json's
// dump(indent) produces for the same document (dump() when the indent is negative): `": "` after keys,
// one item per line, `[]` and `{}` for empty containers, the same string escapes. Everything else Sluice writes
// as JSON goes through nlohmann-json; these two files are too large for a document tree (docs/performance.md).
//
// Object keys must be written in ascending byte order (what a sorted-key document needs); a key out of order
// throws std::logic_error, since it would silently break byte-for-byte determinism.
// Strings are written as UTF-8; a byte sequence that is not valid UTF-8 is replaced by U+FFFD.
// A writer can start at a nesting depth, so a value rendered on its own (say on another thread) can be
// spliced into a larger document with Raw().
// Thread-safety: one writer per thread; distinct writers are independent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

class JsonWriter {
 public:
  // Appends to `out`. `indent` spaces per level (negative: compact); `depth` is the level of the first value.
  explicit JsonWriter(std::string& out, int indent = 2, int depth = 0);

  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);  // in an object, before each value

  void String(std::string_view value);
  void StringOrNull(const std::optional<std::string>& value);
  void Int(int64_t value);
  void Bool(bool value);
  void Null();
  void StringArray(const std::vector<std::string>& values);
  // A value already rendered by a JsonWriter with the same indent at the depth this value has here.
  void Raw(std::string_view rendered_value);

 private:
  struct Level {
    bool object;
    size_t count = 0;
    std::string last_key;
  };
  void BeforeValue();
  void NewLine(size_t depth);

  std::string& out_;
  int indent_;
  size_t base_depth_;
  std::vector<Level> levels_;
  bool after_key_ = false;
};

}  // namespace sluice
