#include "project/macros/macro_arguments.hpp"

#include <cstdint>
#include <optional>
#include <set>

#include "core/diagnostic.hpp"
#include "core/python_string_literal.hpp"

namespace sluice {

void MacroSqlText::Fail(size_t offset, std::string code, std::string message, std::string hint) const {
  throw Error(
      MakeDiagnostic(std::move(code), std::move(message), LocationAt(file, text, offset), std::move(hint), text));
}

namespace {

constexpr const char* kNotLiteral = "SLU-MACRO-005";
constexpr const char* kUnpacking = "SLU-MACRO-006";
constexpr const char* kKeywordOrder = "SLU-MACRO-007";
constexpr const char* kContextKeyword = "SLU-MACRO-008";

constexpr std::string_view kLiteralHint =
    "macro arguments are Python literals (str, int, float, bool, None, list, tuple, dict) or nested "
    "@macro(...) calls";
constexpr int kMaxDepth = 64;

using python::HexValue;
using python::IsAsciiLetter;
using python::IsDigit;
using python::IsNameChar;
using python::IsNameStart;

// Escapes decode as in Python's str; a backslash before CR LF continues the line.
constexpr python::PythonStringRules kStringRules{.x_escape_is_byte = false, .crlf_continuation = true};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

bool IsOctal(char c) { return c >= '0' && c <= '7'; }
bool IsBinary(char c) { return c == '0' || c == '1'; }

bool IsHex(char c) { return HexValue(c) >= 0; }


// Recursive-descent reader over sql.text[pos_, end_), where end_ is the call's closing `)`.
class ArgumentParser {
 public:
  ArgumentParser(const MacroSqlText& sql, size_t begin, size_t end)
      : sql_(sql), text_(sql.text), pos_(begin), end_(end) {}

  // Reads `name(` ... `)` arguments up to end_ (the top-level call's closing parenthesis).
  void ReadTopLevel(MacroInvocation& invocation) {
    ReadArgumentList(invocation, end_);
    SkipSpace();
    if (pos_ != end_) Unexpected("`,` or the end of the arguments");
  }

 private:
  [[noreturn]] void Fail(size_t offset, const char* code, std::string message,
                         std::string hint = std::string(kLiteralHint)) const {
    sql_.Fail(offset, code, std::move(message), std::move(hint));
  }

  std::string Describe(size_t offset) const {
    if (offset >= end_) return "the end of the arguments";
    char c = text_[offset];
    if (IsNameStart(c)) {
      size_t stop = offset;
      while (stop < end_ && IsNameChar(text_[stop])) ++stop;
      return "`" + text_.substr(offset, stop - offset) + "`";
    }
    return "`" + std::string(1, c) + "`";
  }

  [[noreturn]] void Unexpected(const std::string& expected) const {
    Fail(pos_, kNotLiteral, "expected " + expected + " in the macro arguments, found " + Describe(pos_));
  }

  bool AtEnd() const { return pos_ >= end_; }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < end_ ? text_[pos_ + ahead] : '\0'; }

  void SkipSpace() {
    while (!AtEnd()) {
      if (IsSpace(text_[pos_])) {
        ++pos_;
      } else if (text_[pos_] == '\\' && (Peek(1) == '\n' || (Peek(1) == '\r' && Peek(2) == '\n'))) {
        pos_ += Peek(1) == '\n' ? 2 : 3;  // explicit line continuation
      } else {
        return;
      }
    }
  }

  // Arguments of a call up to (not including) the `)` at `close`, or up to the next `)` when close is npos.
  void ReadArgumentList(MacroInvocation& invocation, size_t close) {
    std::set<std::string> keywords;
    while (true) {
      SkipSpace();
      if (close != std::string::npos ? pos_ >= close : Peek() == ')') return;
      if (Peek() == '*') {
        Fail(pos_, kUnpacking,
             Peek(1) == '*' ? "`**` unpacking is not allowed in macro calls"
                            : "`*` unpacking is not allowed in macro calls",
             "pass each argument literally, e.g. @m(1, 2, key='value')");
      }
      size_t start = pos_;
      std::optional<std::string> keyword = KeywordName();
      if (keyword) {
        if (*keyword == "ctx") {
          Fail(start, kContextKeyword, "`ctx=` cannot be passed to a macro: Sluice supplies the MacroContext",
               "remove ctx=...; a macro whose first parameter is `ctx: MacroContext` receives it automatically");
        }
        if (!keywords.insert(*keyword).second) {
          Fail(start, kKeywordOrder, "keyword argument `" + *keyword + "` is given twice", "give each keyword once");
        }
        MacroArgument value = ReadExpression(1);
        invocation.keywords.push_back(KeywordArgument{*keyword, std::move(value), start});
      } else {
        if (!invocation.keywords.empty()) {
          Fail(start, kKeywordOrder, "a positional argument follows a keyword argument",
               "put positional arguments before keyword arguments, as in Python");
        }
        invocation.positional.push_back(ReadExpression(1));
      }
      SkipSpace();
      if (Peek() == ',' && (close == std::string::npos || pos_ < close)) {
        ++pos_;
        continue;
      }
      if (close != std::string::npos ? pos_ >= close : Peek() == ')') return;
      Unexpected("`,` or `)`");
    }
  }

  // `name =` (not `==`) at pos_: consumes it and returns the name; otherwise leaves pos_ alone.
  std::optional<std::string> KeywordName() {
    if (!IsNameStart(Peek())) return std::nullopt;
    size_t stop = pos_;
    while (stop < end_ && IsNameChar(text_[stop])) ++stop;
    size_t after = stop;
    while (after < end_ && IsSpace(text_[after])) ++after;
    if (after >= end_ || text_[after] != '=' || (after + 1 < end_ && text_[after + 1] == '=')) return std::nullopt;
    std::string name = text_.substr(pos_, stop - pos_);
    if (name == "True" || name == "False" || name == "None") {
      Fail(pos_, kNotLiteral, "`" + name + "` cannot be used as a keyword name");
    }
    pos_ = after + 1;
    return name;
  }

  MacroArgument ReadExpression(int depth) {
    if (depth > kMaxDepth) Fail(pos_, kNotLiteral, "macro arguments are nested too deeply");
    SkipSpace();
    size_t start = pos_;
    if (AtEnd()) Unexpected("a value");
    char c = Peek();
    if (c == '+' || c == '-') {
      ++pos_;
      SkipSpace();
      if (!(IsDigit(Peek()) || (Peek() == '.' && IsDigit(Peek(1))))) {
        Fail(start, kNotLiteral, std::string("unary `") + c + "` applies only to a number literal");
      }
      return ReadNumber(start, c == '-' ? "-" : "");
    }
    if (IsDigit(c) || (c == '.' && IsDigit(Peek(1)))) return ReadNumber(start, "");
    if (c == '"' || c == '\'') return MacroArgument{StrLiteral{ReadStrings()}, start};
    if (c == '@') return MacroArgument{ReadInvocation(depth), start};
    if (c == '[') return MacroArgument{ListLiteral{ReadSequence('[', ']', depth)}, start};
    if (c == '(') return ReadParenthesised(depth);
    if (c == '{') return ReadDict(depth);
    if (IsNameStart(c)) {
      size_t stop = pos_;
      while (stop < end_ && IsNameChar(text_[stop])) ++stop;
      if (stop < end_ && (text_[stop] == '\'' || text_[stop] == '"') && stop - pos_ <= 2) {
        return MacroArgument{StrLiteral{ReadStrings()}, start};
      }
      std::string name = text_.substr(pos_, stop - pos_);
      pos_ = stop;
      if (name == "None") return MacroArgument{NoneLiteral{}, start};
      if (name == "True") return MacroArgument{BoolLiteral{true}, start};
      if (name == "False") return MacroArgument{BoolLiteral{false}, start};
      Fail(start, kNotLiteral, "`" + name + "` is a name, not a literal", "quote it to pass a string: '" + name + "'");
    }
    if (c == '*') {
      Fail(start, kUnpacking, "`*` unpacking is not allowed in macro arguments", "write the elements literally");
    }
    Unexpected("a value");
  }

  MacroInvocation ReadInvocation(int depth) {
    MacroInvocation invocation;
    invocation.offset = pos_;
    ++pos_;  // '@'
    if (!IsNameStart(Peek())) Unexpected("a macro name after `@`");
    size_t stop = pos_;
    while (stop < end_ && IsNameChar(text_[stop])) ++stop;
    invocation.name = text_.substr(pos_, stop - pos_);
    pos_ = stop;
    if (Peek() != '(') Unexpected("`(` right after @" + invocation.name);
    ++pos_;
    ReadNested(invocation, depth);
    return invocation;
  }

  void ReadNested(MacroInvocation& invocation, int depth) {
    if (depth > kMaxDepth) Fail(pos_, kNotLiteral, "macro arguments are nested too deeply");
    ReadArgumentList(invocation, std::string::npos);
    if (Peek() != ')') Unexpected("`)` closing @" + invocation.name + "(");
    ++pos_;
  }

  std::vector<MacroArgument> ReadSequence(char open, char close, int depth) {
    size_t start = pos_;
    ++pos_;  // open
    std::vector<MacroArgument> items;
    while (true) {
      SkipSpace();
      if (Peek() == close) {
        ++pos_;
        return items;
      }
      if (AtEnd()) Fail(start, kNotLiteral, std::string("`") + open + "` is never closed");
      items.push_back(ReadExpression(depth + 1));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != close) {
        Unexpected(std::string("`,` or `") + close + "`");
      }
    }
  }

  // `()` empty tuple, `(x)` the value x, `(x,)` / `(x, y)` tuples.
  MacroArgument ReadParenthesised(int depth) {
    size_t start = pos_;
    ++pos_;
    SkipSpace();
    if (Peek() == ')') {
      ++pos_;
      return MacroArgument{TupleLiteral{}, start};
    }
    MacroArgument first = ReadExpression(depth + 1);
    SkipSpace();
    if (Peek() == ')') {
      ++pos_;
      return first;
    }
    if (Peek() != ',') Unexpected("`,` or `)`");
    ++pos_;
    std::vector<MacroArgument> items;
    items.push_back(std::move(first));
    while (true) {
      SkipSpace();
      if (Peek() == ')') {
        ++pos_;
        return MacroArgument{TupleLiteral{std::move(items)}, start};
      }
      if (AtEnd()) Fail(start, kNotLiteral, "`(` is never closed");
      items.push_back(ReadExpression(depth + 1));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != ')') {
        Unexpected("`,` or `)`");
      }
    }
  }

  MacroArgument ReadDict(int depth) {
    size_t start = pos_;
    ++pos_;
    DictLiteral dict;
    while (true) {
      SkipSpace();
      if (Peek() == '}') {
        ++pos_;
        return MacroArgument{std::move(dict), start};
      }
      if (AtEnd()) Fail(start, kNotLiteral, "`{` is never closed");
      if (Peek() == '*') {
        Fail(pos_, kUnpacking, "`**` unpacking is not allowed in a dict argument", "write the entries literally");
      }
      MacroArgument key = ReadExpression(depth + 1);
      bool scalar = std::holds_alternative<NoneLiteral>(key.value) || std::holds_alternative<BoolLiteral>(key.value) ||
                    std::holds_alternative<IntLiteral>(key.value) || std::holds_alternative<FloatLiteral>(key.value) ||
                    std::holds_alternative<StrLiteral>(key.value) || std::holds_alternative<MacroInvocation>(key.value);
      if (!scalar) {
        Fail(key.offset, kNotLiteral, "dict keys must be scalars (str, int, float, bool or None)");
      }
      SkipSpace();
      if (Peek() != ':') {
        if (Peek() == ',' || Peek() == '}') {
          Fail(start, kNotLiteral, "set literals are not supported in macro arguments", "use a list or a tuple");
        }
        Unexpected("`:` after a dict key");
      }
      ++pos_;
      MacroArgument value = ReadExpression(depth + 1);
      dict.entries.push_back(DictEntry{std::move(key), std::move(value)});
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
      } else if (Peek() != '}') {
        Unexpected("`,` or `}`");
      }
    }
  }

  // One or more adjacent string literals, concatenated as Python does.
  std::string ReadStrings() {
    std::string value = ReadString();
    while (true) {
      size_t saved = pos_;
      SkipSpace();
      char c = Peek();
      bool next_is_string = c == '\'' || c == '"';
      if (!next_is_string && IsNameStart(c)) {
        size_t stop = pos_;
        while (stop < end_ && IsNameChar(text_[stop])) ++stop;
        next_is_string = stop < end_ && (text_[stop] == '\'' || text_[stop] == '"') && stop - pos_ <= 2;
      }
      if (!next_is_string) {
        pos_ = saved;
        return value;
      }
      value += ReadString();
    }
  }

  std::string ReadString() {
    size_t start = pos_;
    bool raw = false;
    while (IsAsciiLetter(Peek())) {
      char p = static_cast<char>(Peek() | 0x20);
      if (p == 'r') {
        raw = true;
      } else if (p == 'b') {
        Fail(start, kNotLiteral, "bytes literals are not supported in macro arguments", "use a str literal");
      } else if (p == 'f') {
        Fail(start, kNotLiteral, "f-strings are not literals", "use a plain string literal");
      } else if (p != 'u') {
        Fail(start, kNotLiteral, "unknown string prefix `" + text_.substr(start, pos_ - start + 1) + "`");
      }
      ++pos_;
    }
    auto read = python::ReadPythonString(text_, start, pos_, end_, raw, kStringRules);
    if (const auto* failure = std::get_if<python::PythonStringFailure>(&read)) FailString(*failure);
    python::PythonString& literal = std::get<python::PythonString>(read);
    pos_ = literal.end;
    return std::move(literal.value);
  }

  [[noreturn]] void FailString(const python::PythonStringFailure& failure) const {
    using Kind = python::PythonStringFailure::Kind;
    switch (failure.kind) {
      case Kind::kUnterminated:
        Fail(failure.offset, kNotLiteral, "unterminated string literal in the macro arguments");
      case Kind::kLineEnds:
        Fail(failure.offset, kNotLiteral, "unterminated string literal in the macro arguments",
             "use a triple-quoted string for text spanning lines");
      case Kind::kTruncatedEscape:
        Fail(failure.offset, kNotLiteral,
             "truncated \\" + std::string(1, failure.escape) + " escape: expected " + std::to_string(failure.digits) +
                 " hex digits");
      case Kind::kBeyondUnicode:
        Fail(failure.offset, kNotLiteral, "escape is beyond the last Unicode code point");
      case Kind::kSurrogate:
        Fail(failure.offset, kNotLiteral, "lone surrogate escapes cannot be passed to macros");
      case Kind::kNamedEscape:
        Fail(failure.offset, kNotLiteral, "\\N{...} escapes are not supported in macro arguments",
             "write the character itself or use \\u/\\U escapes");
    }
    Fail(failure.offset, kNotLiteral, "unreadable string literal in the macro arguments");
  }

  // Digits with single underscores between them ([0-9](_?[0-9])*), for `is_digit`; returns false when none.
  bool ReadDigitPart(bool (*is_digit)(char), size_t number_start) {
    if (!is_digit(Peek())) return false;
    ++pos_;
    while (true) {
      if (Peek() == '_') {
        if (!is_digit(Peek(1))) Fail(number_start, kNotLiteral, "invalid number literal (misplaced `_`)");
        ++pos_;
      } else if (!is_digit(Peek())) {
        return true;
      }
      ++pos_;
    }
  }

  MacroArgument ReadNumber(size_t start, const std::string& sign) {
    size_t digits_start = pos_;
    char second = static_cast<char>(Peek(1) | 0x20);
    if (Peek() == '0' && (second == 'x' || second == 'o' || second == 'b')) {
      bool (*digit)(char) = second == 'x' ? IsHex : second == 'o' ? IsOctal : IsBinary;
      pos_ += 2;
      if (Peek() == '_') ++pos_;
      if (!ReadDigitPart(digit, start)) Fail(start, kNotLiteral, "invalid number literal");
      CheckNumberEnd(start);
      return MacroArgument{IntLiteral{sign + text_.substr(digits_start, pos_ - digits_start)}, start};
    }
    bool is_float = false;
    bool has_integer_part = ReadDigitPart(IsDigit, start);
    if (Peek() == '.') {
      is_float = true;
      ++pos_;
      if (IsDigit(Peek()))
        ReadDigitPart(IsDigit, start);
      else if (!has_integer_part)
        Fail(start, kNotLiteral, "invalid number literal");
    }
    if (Peek() == 'e' || Peek() == 'E') {
      is_float = true;
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!ReadDigitPart(IsDigit, start)) Fail(start, kNotLiteral, "invalid number literal (empty exponent)");
    }
    if (Peek() == 'j' || Peek() == 'J') {
      Fail(start, kNotLiteral, "complex numbers are not supported in macro arguments");
    }
    CheckNumberEnd(start);
    std::string text = text_.substr(digits_start, pos_ - digits_start);
    if (is_float) {
      std::erase(text, '_');
      return MacroArgument{FloatLiteral{sign + text}, start};
    }
    if (text.size() > 1 && text[0] == '0' && text.find_first_not_of("0_") != std::string::npos) {
      Fail(start, kNotLiteral, "leading zeros are not permitted in decimal integer literals",
           "write 0o... for an octal number, or drop the zeros");
    }
    return MacroArgument{IntLiteral{sign + text}, start};
  }

  void CheckNumberEnd(size_t start) {
    if (IsNameChar(Peek()) || Peek() == '.') {
      Fail(start, kNotLiteral, "invalid number literal");
    }
  }

  const MacroSqlText& sql_;
  const std::string& text_;
  size_t pos_;
  size_t end_;
};

}  // namespace

MacroInvocation ParseMacroInvocation(const MacroSqlText& sql, const sql::MacroCall& call) {
  MacroInvocation invocation;
  invocation.name = call.name;
  invocation.offset = call.begin;
  size_t open = call.begin + 1 + call.name.size();  // the `(` right after the name
  size_t close = call.end - 1;                      // the matching `)`
  ArgumentParser(sql, open + 1, close).ReadTopLevel(invocation);
  return invocation;
}

void CollectNestedInvocations(const MacroInvocation& invocation, std::vector<const MacroInvocation*>& out) {
  struct Walker {
    std::vector<const MacroInvocation*>& out;
    void Visit(const MacroArgument& argument) {
      std::visit(
          [this](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, ListLiteral> || std::is_same_v<T, TupleLiteral>) {
              for (const MacroArgument& item : value.items) Visit(item);
            } else if constexpr (std::is_same_v<T, DictLiteral>) {
              for (const DictEntry& entry : value.entries) {
                Visit(entry.key);
                Visit(entry.value);
              }
            } else if constexpr (std::is_same_v<T, MacroInvocation>) {
              out.push_back(&value);
              Arguments(value);
            }
          },
          argument.value);
    }
    void Arguments(const MacroInvocation& call) {
      for (const MacroArgument& argument : call.positional) Visit(argument);
      for (const KeywordArgument& keyword : call.keywords) Visit(keyword.value);
    }
  };
  Walker{out}.Arguments(invocation);
}

}  // namespace sluice
