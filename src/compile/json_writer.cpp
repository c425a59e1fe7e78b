#include "compile/json_writer.hpp"

#include <array>
#include <stdexcept>

namespace sluice {

namespace {

// The length of the valid UTF-8 sequence starting at text[i], or 0 when it is not one.
size_t Utf8Length(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  auto continuation = [&](size_t k) { return k < text.size() && (byte(k) & 0xC0) == 0x80; };
  unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(i + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    if (!continuation(i + 1) || !continuation(i + 2)) return 0;
    unsigned char second = byte(i + 1);
    if (lead == 0xE0 && second < 0xA0) return 0;   // overlong
    if (lead == 0xED && second >= 0xA0) return 0;  // surrogate
    return 3;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    if (!continuation(i + 1) || !continuation(i + 2) || !continuation(i + 3)) return 0;
    unsigned char second = byte(i + 1);
    if (lead == 0xF0 && second < 0x90) return 0;   // overlong
    if (lead == 0xF4 && second >= 0x90) return 0;  // beyond U+10FFFF
    return 4;
  }
  return 0;
}

// The bytes a JSON string cannot hold as they are: control characters, '"', '\\', and every byte of a UTF-8
// sequence (checked, then copied as is or replaced).
constexpr auto kNeedsCare = [] {
  std::array<bool, 256> table{};
  for (int c = 0; c < 256; ++c) table[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
  return table;
}();

void AppendEscaped(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    // Copy the longest run that needs no escaping in one append.
    size_t run = i;
    while (run < text.size() && !kNeedsCare[static_cast<unsigned char>(text[run])]) ++run;
    out.append(text, i, run - i);
    i = run;
    if (i == text.size()) break;
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      size_t length = Utf8Length(text, i);
      if (length == 0) {
        out += "\xEF\xBF\xBD";  // U+FFFD
        ++i;
      } else {
        out.append(text, i, length);
        i += length;
      }
      continue;
    }
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        out += "\\u00";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xF]);
    }
    ++i;
  }
  out.push_back('"');
}

}  // namespace

JsonWriter::JsonWriter(std::string& out, int indent, int depth)
    : out_(out), indent_(indent), base_depth_(depth < 0 ? 0 : static_cast<size_t>(depth)) {}

void JsonWriter::NewLine(size_t depth) {
  if (indent_ < 0) return;
  out_.push_back('\n');
  out_.append(depth * static_cast<size_t>(indent_), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (levels_.empty()) return;
  Level& level = levels_.back();
  if (level.object) throw std::logic_error("JsonWriter: a value in an object needs a Key first");
  if (level.count++ > 0) out_.push_back(',');
  NewLine(base_depth_ + levels_.size());
}

void JsonWriter::Key(std::string_view key) {
  if (levels_.empty() || !levels_.back().object || after_key_) throw std::logic_error("JsonWriter: misplaced key");
  Level& level = levels_.back();
  if (level.count > 0 && !(level.last_key < key)) {
    throw std::logic_error("JsonWriter: key \"" + std::string(key) + "\" is not after \"" + level.last_key + "\"");
  }
  level.last_key.assign(key);
  if (level.count++ > 0) out_.push_back(',');
  NewLine(base_depth_ + levels_.size());
  AppendEscaped(out_, key);
  out_ += indent_ < 0 ? ":" : ": ";
  after_key_ = true;
}

void JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  levels_.push_back(Level{true});
}

void JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  levels_.push_back(Level{false});
}

void JsonWriter::EndObject() {
  if (levels_.empty() || !levels_.back().object || after_key_) throw std::logic_error("JsonWriter: unbalanced object");
  bool empty = levels_.back().count == 0;
  levels_.pop_back();
  if (!empty) NewLine(base_depth_ + levels_.size());
  out_.push_back('}');
}

void JsonWriter::EndArray() {
  if (levels_.empty() || levels_.back().object) throw std::logic_error("JsonWriter: unbalanced array");
  bool empty = levels_.back().count == 0;
  levels_.pop_back();
  if (!empty) NewLine(base_depth_ + levels_.size());
  out_.push_back(']');
}

void JsonWriter::String(std::string_view value) {
  BeforeValue();
  AppendEscaped(out_, value);
}

void JsonWriter::StringOrNull(const std::optional<std::string>& value) {
  if (value) {
    String(*value);
  } else {
    Null();
  }
}

void JsonWriter::Int(int64_t value) {
  BeforeValue();
  out_ += std::to_string(value);
}

void JsonWriter::Bool(bool value) {
  BeforeValue();
  out_ += value ? "true" : "false";
}

void JsonWriter::Null() {
  BeforeValue();
  out_ += "null";
}

void JsonWriter::StringArray(const std::vector<std::string>& values) {
  BeginArray();
  for (const std::string& value : values) String(value);
  EndArray();
}

void JsonWriter::Raw(std::string_view rendered_value) {
  BeforeValue();
  out_.append(rendered_value);
}

}  // namespace sluice
