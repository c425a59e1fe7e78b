#include "orchestrate/python_literal.hpp"

#include <charconv>
#include <cstdlib>

#include "core/diagnostic.hpp"
#include "core/python_string_literal.hpp"

namespace sluice::orchestrate {

namespace {

constexpr const char* kSyntax = "SLU-STARLAKE-001";
constexpr const char* kUnclosed = "SLU-STARLAKE-002";
constexpr const char* kEscape = "SLU-STARLAKE-003";
constexpr const char* kNotLiteral = "SLU-STARLAKE-009";

constexpr const char* kLiteralHint =
    "Sluice reads the generated module without running it: assign plain literals (strings, numbers, True, False, "
    "None, lists, tuples, dicts), as `starlake dag-generate` writes them";

using python::HexValue;
using python::IsDigit;
using python::IsQuote;
using python::IsNameChar;
using python::IsNameStart;

// \xNN is the byte NN; a backslash before CR is kept with it.
constexpr python::PythonStringRules kStringRules{.x_escape_is_byte = true, .crlf_continuation = false};


// A string literal's prefix: the letters before its opening quote.
struct StringPrefix {
  bool raw = false;
  bool bytes = false;
  bool formatted = false;
};

// Whether `letters` is a valid Python string prefix (r, u, b, f and their two-letter combinations).
std::optional<StringPrefix> ParsePrefix(std::string_view letters) {
  if (letters.size() > 2) return std::nullopt;
  StringPrefix prefix;
  for (char c : letters) {
    switch (c | 0x20) {
      case 'r': prefix.raw = true; break;
      case 'b': prefix.bytes = true; break;
      case 'f': prefix.formatted = true; break;
      case 'u':
        if (letters.size() != 1) return std::nullopt;
        break;
      default: return std::nullopt;
    }
  }
  if (letters.size() == 2 && !prefix.raw) return std::nullopt;  // only rb, br, rf, fr pair up
  return prefix;
}

// The module reader: one pass over the text, reading requested assignments and skipping everything else.
class ModuleReader {
 public:
  ModuleReader(const std::string& file, std::string_view text, const PythonLiteralRules& rules)
      : file_(file), text_(text), rules_(rules) {}

  std::vector<PythonAssignment> Read() {
    std::vector<PythonAssignment> assignments;
    int depth = 0;
    bool statement_start = true;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      const bool column_one = pos_ == 0 || text_[pos_ - 1] == '\n';
      if (statement_start && depth == 0 && column_one && IsNameStart(c)) {
        statement_start = false;
        if (std::optional<PythonAssignment> assignment = TryAssignment()) {
          assignments.push_back(std::move(*assignment));
          continue;
        }
      }
      if (c != '\n' && c != ' ' && c != '\t' && c != '\r') statement_start = false;
      if (c == '#') {
        SkipComment();
      } else if (c == '\n') {
        if (depth == 0) statement_start = true;
        ++pos_;
      } else if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        pos_ += 2;
      } else if (IsQuote(c)) {
        ReadString(StringPrefix{true, false, false}, pos_);  // skipped: read raw, escapes only hide quotes
      } else if (IsNameStart(c)) {
        const size_t start = pos_;
        while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
        if (pos_ < text_.size() && IsQuote(text_[pos_])) {
          if (ParsePrefix(text_.substr(start, pos_ - start))) ReadString(StringPrefix{true, false, false}, start);
        }
      } else if (c == '(' || c == '[' || c == '{') {
        ++depth;
        ++pos_;
      } else if (c == ')' || c == ']' || c == '}') {
        if (depth > 0) --depth;
        ++pos_;
      } else {
        ++pos_;
      }
    }
    return assignments;
  }

 private:
  [[noreturn]] void Fail(const char* code, size_t offset, const std::string& message,
                         const std::string& hint = kLiteralHint) const {
    throw Error(MakeDiagnostic(code, message, LocationAt(file_, text_, offset), hint, text_));
  }

  // What is at `offset`, for "found …" in messages.
  std::string Found(size_t offset) const {
    if (offset >= text_.size()) return "the end of the file";
    const char c = text_[offset];
    if (c == '\n' || c == '\r') return "the end of the line";
    if (IsNameStart(c)) {
      size_t end = offset;
      while (end < text_.size() && IsNameChar(text_[end])) ++end;
      return "`" + std::string(text_.substr(offset, end - offset)) + "`";
    }
    return "`" + std::string(1, c) + "`";
  }

  void SkipComment() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }

  // Skips blanks; inside brackets newlines and comments too (they are whitespace there).
  void SkipBlanks(bool in_brackets) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\f' || (in_brackets && (c == '\n' || c == '\r'))) {
        ++pos_;
      } else if (c == '\\' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        pos_ += 2;
      } else if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n' && in_brackets) {
        pos_ += 2;
      } else if (c == '#' && in_brackets) {
        SkipComment();
      } else {
        break;
      }
    }
  }

  // At column 1 with an identifier: reads `name = value` when the name is requested; otherwise leaves pos_ at
  // the identifier's start and returns nullopt.
  std::optional<PythonAssignment> TryAssignment() {
    const size_t start = pos_;
    size_t end = start;
    while (end < text_.size() && IsNameChar(text_[end])) ++end;
    const std::string name(text_.substr(start, end - start));
    if (rules_.names.count(name) == 0) return std::nullopt;
    size_t at = end;
    while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t')) ++at;
    if (at >= text_.size() || text_[at] != '=' || (at + 1 < text_.size() && text_[at + 1] == '=')) {
      return std::nullopt;
    }
    pos_ = at + 1;
    SkipBlanks(false);
    PythonAssignment assignment;
    assignment.name = name;
    assignment.name_offset = start;
    assignment.value_offset = pos_;
    bool verbatim = false;
    size_t verbatim_offset = 0;
    assignment.value = ParseValue(false, &verbatim, &verbatim_offset);
    if (verbatim) assignment.verbatim_offset = verbatim_offset;
    SkipBlanks(false);
    if (pos_ < text_.size() && text_[pos_] == '#') SkipComment();
    if (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r' && text_[pos_] != ';') {
      Fail(kSyntax, pos_,
           "expected the end of the statement after the value of `" + name + "`, found " + Found(pos_));
    }
    return assignment;
  }

  // A value. `verbatim`, when given, is set when the value is one string literal without escapes.
  nlohmann::json ParseValue(bool in_brackets, bool* verbatim = nullptr, size_t* verbatim_offset = nullptr) {
    SkipBlanks(in_brackets);
    if (pos_ >= text_.size()) Fail(kSyntax, pos_, "expected a value, found the end of the file");
    const char c = text_[pos_];
    if (c == '{') return ParseDict();
    if (c == '[') return ParseSequence('[', ']');
    if (c == '(') return ParseSequence('(', ')');
    if (IsQuote(c)) return ParseStrings(StringPrefix{}, pos_, in_brackets, verbatim, verbatim_offset);
    if (IsDigit(c) || c == '-' || c == '+' || (c == '.' && pos_ + 1 < text_.size() && IsDigit(text_[pos_ + 1]))) {
      return ParseNumber();
    }
    if (IsNameStart(c)) {
      const size_t start = pos_;
      while (pos_ < text_.size() && IsNameChar(text_[pos_])) ++pos_;
      const std::string word(text_.substr(start, pos_ - start));
      if (pos_ < text_.size() && IsQuote(text_[pos_])) {
        std::optional<StringPrefix> prefix = ParsePrefix(word);
        if (!prefix) Fail(kSyntax, start, "expected a value, found `" + word + "`");
        return ParseStrings(*prefix, start, in_brackets, verbatim, verbatim_offset);
      }
      if (word == "True") return true;
      if (word == "False") return false;
      if (word == "None") return nullptr;
      if (rules_.transparent_calls.count(word) > 0) return ParseTransparentCall(word, verbatim, verbatim_offset);
      Fail(kSyntax, start,
           "expected a literal value (a string, number, True, False, None, list, tuple or dict), found `" + word +
               "`");
    }
    Fail(kSyntax, pos_,
         "expected a literal value (a string, number, True, False, None, list, tuple or dict), found " + Found(pos_));
  }

  // `Name(value)` or `Name(keyword=value)`, read as the value (verbatim as ParseValue's).
  nlohmann::json ParseTransparentCall(const std::string& name, bool* verbatim, size_t* verbatim_offset) {
    SkipBlanks(false);
    if (pos_ >= text_.size() || text_[pos_] != '(') {
      Fail(kSyntax, pos_, "expected `(` after `" + name + "`, found " + Found(pos_));
    }
    const size_t open = pos_++;
    SkipBlanks(true);
    if (pos_ < text_.size() && IsNameStart(text_[pos_])) {  // a keyword argument?
      size_t end = pos_;
      while (end < text_.size() && IsNameChar(text_[end])) ++end;
      size_t at = end;
      while (at < text_.size() && (text_[at] == ' ' || text_[at] == '\t')) ++at;
      if (at < text_.size() && text_[at] == '=' && (at + 1 >= text_.size() || text_[at + 1] != '=')) pos_ = at + 1;
    }
    nlohmann::json value = ParseValue(true, verbatim, verbatim_offset);
    SkipBlanks(true);
    if (pos_ < text_.size() && text_[pos_] == ',') {
      ++pos_;
      SkipBlanks(true);
    }
    if (pos_ >= text_.size()) Fail(kUnclosed, open, "`(` of `" + name + "(` is never closed");
    if (text_[pos_] != ')') {
      Fail(kSyntax, pos_, "expected `)` closing `" + name + "(` after its one argument, found " + Found(pos_));
    }
    ++pos_;
    return value;
  }

  nlohmann::json ParseDict() {
    const size_t open = pos_++;
    nlohmann::json object = nlohmann::json::object();
    while (true) {
      SkipBlanks(true);
      if (pos_ >= text_.size()) Fail(kUnclosed, open, "`{` is never closed");
      if (text_[pos_] == '}') {
        ++pos_;
        return object;
      }
      const size_t key_offset = pos_;
      nlohmann::json key = ParseValue(true);
      if (!key.is_string()) {
        Fail(kNotLiteral, key_offset, "a dict key must be a string, found " + std::string(key.type_name()));
      }
      SkipBlanks(true);
      if (pos_ >= text_.size()) Fail(kUnclosed, open, "`{` is never closed");
      if (text_[pos_] != ':') {
        if (text_[pos_] == ',' || text_[pos_] == '}') {
          Fail(kNotLiteral, key_offset, "set literals are not read; expected `:` after the dict key",
               "write a list `[...]` instead of a set `{...}`");
        }
        Fail(kSyntax, pos_, "expected `:` after the dict key, found " + Found(pos_));
      }
      ++pos_;
      object[key.get<std::string>()] = ParseValue(true);
      SkipBlanks(true);
      if (pos_ >= text_.size()) Fail(kUnclosed, open, "`{` is never closed");
      if (text_[pos_] == ',') {
        ++pos_;
      } else if (text_[pos_] != '}') {
        Fail(kSyntax, pos_, "expected `,` or `}` after a dict value, found " + Found(pos_));
      }
    }
  }

  // A list `[a, b]` or a tuple `(a, b)`; `(a)` is just a.
  nlohmann::json ParseSequence(char open_char, char close_char) {
    const size_t open = pos_++;
    nlohmann::json array = nlohmann::json::array();
    bool comma_seen = false;
    const std::string opener(1, open_char);
    while (true) {
      SkipBlanks(true);
      if (pos_ >= text_.size()) Fail(kUnclosed, open, "`" + opener + "` is never closed");
      if (text_[pos_] == close_char) {
        ++pos_;
        if (open_char == '(' && array.size() == 1 && !comma_seen) return array[0];
        return array;
      }
      array.push_back(ParseValue(true));
      SkipBlanks(true);
      if (pos_ >= text_.size()) Fail(kUnclosed, open, "`" + opener + "` is never closed");
      if (text_[pos_] == ',') {
        comma_seen = true;
        ++pos_;
      } else if (text_[pos_] != close_char) {
        Fail(kSyntax, pos_,
             std::string("expected `,` or `") + close_char + "` after " +
                 (open_char == '[' ? "a list item" : "a tuple item") + ", found " + Found(pos_));
      }
    }
  }

  nlohmann::json ParseNumber() {
    const size_t start = pos_;
    if (text_[pos_] == '-' || text_[pos_] == '+') {
      ++pos_;
      SkipBlanks(false);
    }
    const size_t digits_start = pos_;
    bool is_float = false;
    std::string digits;
    if (pos_ + 1 < text_.size() && text_[pos_] == '0' && (text_[pos_ + 1] | 0x20) == 'x') {
      pos_ += 2;
      while (pos_ < text_.size() && (HexValue(text_[pos_]) >= 0 || text_[pos_] == '_')) {
        if (text_[pos_] != '_') digits += text_[pos_];
        ++pos_;
      }
      if (digits.empty()) Fail(kSyntax, pos_, "expected hexadecimal digits after `0x`, found " + Found(pos_));
      int64_t value = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 16);
      if (error != std::errc()) Fail(kNotLiteral, start, "the integer does not fit in 64 bits", "");
      return text_[start] == '-' ? -value : value;
    }
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (IsDigit(c) || c == '_') {
        if (c != '_') digits += c;
      } else if (c == '.') {
        is_float = true;
        digits += c;
      } else if ((c == 'e' || c == 'E') && pos_ > digits_start) {
        is_float = true;
        digits += c;
        if (pos_ + 1 < text_.size() && (text_[pos_ + 1] == '-' || text_[pos_ + 1] == '+')) digits += text_[++pos_];
      } else {
        break;
      }
      ++pos_;
    }
    if (digits.empty() || digits == ".") Fail(kSyntax, digits_start, "expected a number, found " + Found(digits_start));
    if (pos_ < text_.size() && IsNameChar(text_[pos_])) {
      Fail(kSyntax, pos_, "expected the end of the number, found " + Found(pos_));
    }
    const bool negative = text_[start] == '-';
    if (!is_float) {
      int64_t value = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
      if (error == std::errc() && end == digits.data() + digits.size()) return negative ? -value : value;
    }
    char* end = nullptr;
    const double value = std::strtod(digits.c_str(), &end);
    if (end != digits.c_str() + digits.size()) Fail(kSyntax, digits_start, "malformed number `" + digits + "`");
    return negative ? -value : value;
  }

  // One or more adjacent string literals (implicit concatenation), the first starting at `start` with `prefix`.
  nlohmann::json ParseStrings(StringPrefix prefix, size_t start, bool in_brackets, bool* verbatim,
                              size_t* verbatim_offset) {
    if (prefix.formatted) {
      Fail(kNotLiteral, start, "an f-string is not a literal Sluice can read", "write the value as a plain string");
    }
    if (prefix.bytes) {
      Fail(kNotLiteral, start, "a bytes literal is not read; the value must be text", "drop the `b` prefix");
    }
    python::PythonString first = ReadString(prefix, start);
    std::string value = std::move(first.value);
    int pieces = 1;
    while (true) {
      const size_t before = pos_;
      SkipBlanks(in_brackets);
      size_t at = pos_;
      while (at < text_.size() && IsNameStart(text_[at])) ++at;
      if (at >= text_.size() || !IsQuote(text_[at])) {
        pos_ = before;
        break;
      }
      std::optional<StringPrefix> next_prefix = ParsePrefix(text_.substr(pos_, at - pos_));
      if (!next_prefix) {
        pos_ = before;
        break;
      }
      if (next_prefix->formatted || next_prefix->bytes) {
        return ParseStrings(*next_prefix, pos_, in_brackets, nullptr, nullptr);  // reports the error
      }
      value += ReadString(*next_prefix, pos_).value;
      ++pieces;
    }
    if (verbatim != nullptr) {
      *verbatim = pieces == 1 && !first.escaped;
      *verbatim_offset = first.content_start;
    }
    return value;
  }

  // One string literal whose prefix starts at `start` (pos_ at the prefix or the quote). Decodes escapes unless
  // raw; leaves pos_ after the closing quote.
  python::PythonString ReadString(StringPrefix prefix, size_t start) {
    while (pos_ < text_.size() && !IsQuote(text_[pos_])) ++pos_;
    auto read = python::ReadPythonString(text_, start, pos_, text_.size(), prefix.raw, kStringRules);
    if (const auto* failure = std::get_if<python::PythonStringFailure>(&read)) FailString(*failure);
    python::PythonString& literal = std::get<python::PythonString>(read);
    pos_ = literal.end;
    return std::move(literal);
  }

  [[noreturn]] void FailString(const python::PythonStringFailure& failure) const {
    using Kind = python::PythonStringFailure::Kind;
    switch (failure.kind) {
      case Kind::kUnterminated:
        Fail(kUnclosed, failure.offset, "this string is never closed", "close it with its quote");
      case Kind::kLineEnds:
        Fail(kUnclosed, failure.offset, "this string is never closed on its line",
             "close it with its quote, or use triple quotes for text over several lines");
      case Kind::kTruncatedEscape:
        Fail(kEscape, failure.offset,
             "the escape `\\" + std::string(1, failure.escape) + "` needs " + std::to_string(failure.digits) +
                 " hexadecimal digits",
             "write a backslash as `\\\\`");
      case Kind::kBeyondUnicode:
      case Kind::kSurrogate:
        Fail(kEscape, failure.offset, "the escape names no Unicode character", "");
      case Kind::kNamedEscape:
        Fail(kEscape, failure.offset, "named escapes `\\N{...}` are not read", "write the character itself (UTF-8)");
    }
    Fail(kEscape, failure.offset, "this string cannot be read");
  }

  const std::string& file_;
  std::string_view text_;
  const PythonLiteralRules& rules_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<PythonAssignment> ReadPythonAssignments(const std::string& file, std::string_view text,
                                                    const PythonLiteralRules& rules) {
  return ModuleReader(file, text, rules).Read();
}

}  // namespace sluice::orchestrate
