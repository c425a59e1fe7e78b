#include "core/python_string_literal.hpp"

#include <cstdint>
#include <optional>

#include "core/utf8.hpp"

namespace sluice::python {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

namespace {

using Kind = PythonStringFailure::Kind;

class StringReader {
 public:
  StringReader(std::string_view text, size_t end, const PythonStringRules& rules)
      : text_(text), end_(end), rules_(rules) {}

  std::variant<PythonString, PythonStringFailure> Read(size_t start, size_t quote_at, bool raw) {
    pos_ = quote_at;
    const char quote = Peek();
    const bool triple = Peek(1) == quote && Peek(2) == quote;
    pos_ += triple ? 3 : 1;
    PythonString literal;
    literal.content_start = pos_;
    while (true) {
      if (pos_ >= end_) return PythonStringFailure{Kind::kUnterminated, start};
      const char c = text_[pos_];
      if (c == quote && (!triple || (Peek(1) == quote && Peek(2) == quote))) {
        pos_ += triple ? 3 : 1;
        literal.end = pos_;
        return literal;
      }
      if (c == '\n' && !triple) return PythonStringFailure{Kind::kLineEnds, start};
      if (c != '\\') {
        literal.value += c;
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= end_) return PythonStringFailure{Kind::kUnterminated, start};
      if (raw) {  // a backslash keeps the next character (even a quote), and both stay in the value
        literal.value += c;
        literal.value += text_[pos_ + 1];
        pos_ += 2;
        continue;
      }
      literal.escaped = true;
      if (std::optional<PythonStringFailure> failure = ReadEscape(literal.value)) return *failure;
    }
  }

 private:
  char Peek(size_t ahead = 0) const { return pos_ + ahead < end_ ? text_[pos_ + ahead] : '\0'; }

  // Decodes the escape sequence at pos_ (a backslash) into `out`.
  std::optional<PythonStringFailure> ReadEscape(std::string& out) {
    const size_t escape = pos_;
    const char e = text_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '\n': return std::nullopt;  // a line continuation inside the string
      case '\r':
        if (!rules_.crlf_continuation) break;
        if (Peek() == '\n') ++pos_;
        return std::nullopt;
      case '\\': out += '\\'; return std::nullopt;
      case '\'': out += '\''; return std::nullopt;
      case '"': out += '"'; return std::nullopt;
      case 'a': out += '\a'; return std::nullopt;
      case 'b': out += '\b'; return std::nullopt;
      case 'f': out += '\f'; return std::nullopt;
      case 'n': out += '\n'; return std::nullopt;
      case 'r': out += '\r'; return std::nullopt;
      case 't': out += '\t'; return std::nullopt;
      case 'v': out += '\v'; return std::nullopt;
      case 'x':
      case 'u':
      case 'U': {
        const int digits = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t value = 0;
        for (int i = 0; i < digits; ++i) {
          const int digit = HexValue(Peek());
          if (digit < 0) return PythonStringFailure{Kind::kTruncatedEscape, escape, e, digits};
          value = value * 16 + static_cast<uint32_t>(digit);
          ++pos_;
        }
        if (e == 'x' && rules_.x_escape_is_byte) {
          out += static_cast<char>(value);
          return std::nullopt;
        }
        return AppendCodePoint(out, value, escape);
      }
      case 'N': return PythonStringFailure{Kind::kNamedEscape, escape};
      default: break;
    }
    if (e >= '0' && e <= '7') {
      uint32_t value = static_cast<uint32_t>(e - '0');
      for (int i = 0; i < 2 && Peek() >= '0' && Peek() <= '7'; ++i) {
        value = value * 8 + static_cast<uint32_t>(Peek() - '0');
        ++pos_;
      }
      return AppendCodePoint(out, value, escape);
    }
    out += '\\';  // Python keeps an unknown escape as written
    out += e;
    return std::nullopt;
  }

  static std::optional<PythonStringFailure> AppendCodePoint(std::string& out, uint32_t code_point, size_t escape) {
    if (code_point > 0x10FFFF) return PythonStringFailure{Kind::kBeyondUnicode, escape};
    if (code_point >= 0xD800 && code_point <= 0xDFFF) return PythonStringFailure{Kind::kSurrogate, escape};
    AppendUtf8(out, code_point);
    return std::nullopt;
  }

  std::string_view text_;
  size_t end_;
  const PythonStringRules& rules_;
  size_t pos_ = 0;
};

}  // namespace

std::variant<PythonString, PythonStringFailure> ReadPythonString(std::string_view text, size_t start, size_t quote,
                                                                 size_t end, bool raw, const PythonStringRules& rules) {
  return StringReader(text, end, rules).Read(start, quote, raw);
}

}  // namespace sluice::python
