#include "project/header_grammar.hpp"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

constexpr char kKeyValueHint[] = "header entries are written `key value`, e.g. `kind table`";

bool IsWhitespace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool IsSymbol(char c) { return c == '(' || c == ')' || c == '[' || c == ']' || c == ','; }

bool IsQuote(char c) { return c == '"' || c == '\''; }

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A token as it appears in a message: in backticks, cut short so a runaway word stays readable.
std::string Shown(std::string_view token) {
  constexpr size_t kMaxShown = 40;
  std::string shown = "`";
  shown += token.substr(0, kMaxShown);
  if (token.size() > kMaxShown) shown += "...";
  shown += "`";
  return shown;
}

size_t SkipDigits(std::string_view word, size_t i) {
  while (i < word.size() && IsDigit(word[i])) ++i;
  return i;
}

size_t SkipSign(std::string_view word) {
  return !word.empty() && (word[0] == '+' || word[0] == '-') ? 1 : 0;
}

// `[+-]?[0-9]+`
bool IsIntegerWord(std::string_view word) {
  size_t start = SkipSign(word);
  return start < word.size() && SkipDigits(word, start) == word.size();
}

// `[+-]?` digits with a `.` and/or an exponent: `1.5`, `.5`, `5.`, `1e3`, `2.5E-2`.
bool IsFloatWord(std::string_view word) {
  size_t i = SkipSign(word);
  size_t integer_end = SkipDigits(word, i);
  bool has_digits = integer_end > i;
  i = integer_end;
  bool has_point = false;
  if (i < word.size() && word[i] == '.') {
    has_point = true;
    size_t fraction_end = SkipDigits(word, i + 1);
    has_digits = has_digits || fraction_end > i + 1;
    i = fraction_end;
  }
  if (!has_digits) return false;
  bool has_exponent = false;
  if (i < word.size() && (word[i] == 'e' || word[i] == 'E')) {
    ++i;
    if (i < word.size() && (word[i] == '+' || word[i] == '-')) ++i;
    size_t exponent_end = SkipDigits(word, i);
    if (exponent_end == i) return false;
    i = exponent_end;
    has_exponent = true;
  }
  return i == word.size() && (has_point || has_exponent);
}

// One parse of one header. Positions are byte offsets into the whole text, so every diagnostic points
// at the absolute line and column. `open_` holds the offsets of the `(` / `[` not yet closed, innermost
// last; its size is the nesting depth.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view keyword, const std::string& file)
      : text_(text), keyword_(keyword), file_(file) {}

  HeaderBlock Parse(size_t offset) {
    pos_ = std::min(offset, text_.size());
    while (pos_ < text_.size() && IsWhitespace(text_[pos_])) ++pos_;
    HeaderBlock block;
    block.begin = pos_;
    size_t open_at = ExpectKeywordAndParen();
    block.entries = ParseMap(open_at);
    SkipTrivia();
    if (pos_ >= text_.size() || text_[pos_] != ';') {
      Fail("SLU-HEADER-002", pos_,
           "unterminated header: expected `;` after the `)` that closes `" + std::string(keyword_) +
               " (` at " + Where(open_at),
           "end the header with `);`, e.g. `" + std::string(keyword_) + " ( kind table );`");
    }
    block.end = ++pos_;
    return block;
  }

 private:
  // Keeps `open_` in step with the recursion; refuses to go deeper than kMaxHeaderNesting.
  class Nesting {
   public:
    Nesting(HeaderParser& parser, size_t open_at) : parser_(parser) {
      if (parser_.open_.size() >= static_cast<size_t>(kMaxHeaderNesting)) {
        parser_.Fail("SLU-HEADER-011", open_at, "header nested too deeply",
                     "a header may nest at most " + std::to_string(kMaxHeaderNesting) +
                         " levels of `(` and `[`");
      }
      parser_.open_.push_back(open_at);
    }
    ~Nesting() { parser_.open_.pop_back(); }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;

   private:
    HeaderParser& parser_;
  };

  // Checks `<keyword> (` at pos_; returns the offset of the `(`.
  size_t ExpectKeywordAndParen() {
    std::string keyword(keyword_);  // short: no allocation
    auto example = [&] { return "start with `" + keyword + " (`, e.g. `" + keyword + " ( kind table );`"; };
    std::string_view rest = text_.substr(pos_);
    bool keyword_matches = !keyword_.empty() && rest.starts_with(keyword_) &&
                           (rest.size() == keyword_.size() || IsWhitespace(rest[keyword_.size()]) ||
                            rest[keyword_.size()] == '(');
    if (!keyword_matches) {
      bool comment = rest.starts_with("--") || rest.starts_with("/*");
      Fail("SLU-HEADER-001", pos_, "expected the header `" + keyword + " ( ... );` here",
           comment ? "comments are not allowed before `" + keyword + " (`; move them after `);`"
                   : "the file must " + example() + " (only whitespace may precede it)");
    }
    size_t at = pos_ + keyword_.size();
    while (at < text_.size() && IsWhitespace(text_[at])) ++at;
    if (at >= text_.size() || text_[at] != '(') {
      Fail("SLU-HEADER-001", at, "expected `(` after `" + keyword + "`", "the header must " + example());
    }
    return at;
  }

  // Skips whitespace, `-- …` line comments and `/* … */` block comments.
  void SkipTrivia() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (IsWhitespace(c)) {
        ++pos_;
      } else if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '-') {
        size_t newline = text_.find('\n', pos_);
        pos_ = newline == std::string_view::npos ? text_.size() : newline + 1;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '*') {
        size_t close = text_.find("*/", pos_ + 2);
        if (close == std::string_view::npos) {
          Fail("SLU-HEADER-002", pos_, "unterminated `/*` comment",
               "close the comment with `*/`");
        }
        pos_ = close + 2;
      } else {
        return;
      }
    }
  }

  // Parses a map whose `(` is at `open_at`, through its closing `)`.
  HeaderMap ParseMap(size_t open_at) {
    Nesting nesting(*this, open_at);
    pos_ = open_at + 1;
    HeaderMap map;
    map.reserve(4);  // most maps are small: one allocation instead of growing 1, 2, 4
    // Duplicate keys: a small map (every model header) is scanned; past kScannedKeys keys they are indexed.
    constexpr size_t kScannedKeys = 16;
    std::unordered_map<std::string_view, size_t> key_offsets;
    auto first_offset_of = [&](std::string_view key, size_t key_at) -> std::optional<size_t> {
      if (map.size() < kScannedKeys) {
        for (const HeaderEntry& entry : map) {
          if (entry.key == key) return entry.key_offset;
        }
        return std::nullopt;
      }
      if (key_offsets.empty()) {
        for (const HeaderEntry& entry : map)
          key_offsets.emplace(text_.substr(entry.key_offset, entry.key.size()), entry.key_offset);
      }
      auto [previous, inserted] = key_offsets.emplace(key, key_at);
      return inserted ? std::nullopt : std::optional<size_t>(previous->second);
    };
    while (true) {
      SkipTrivia();
      if (pos_ >= text_.size()) FailUnclosed();
      char c = text_[pos_];
      if (c == ')') {
        ++pos_;
        return map;
      }
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == ']') FailMismatchedClose();
      if (IsQuote(c) || c == '(' || c == '[') {
        std::string what = IsQuote(c) ? "a string" : c == '(' ? "a map" : "a list";
        Fail("SLU-HEADER-008", pos_, "expected a key, found " + what,
             std::string("keys are bare words; ") + kKeyValueHint);
      }
      size_t key_at = pos_;
      std::string_view key = ReadBareWord();
      if (std::optional<size_t> previous = first_offset_of(key, key_at)) {
        Fail("SLU-HEADER-009", key_at, "duplicate key " + Shown(key) + " (first set at " + Where(*previous) + ")",
             "each key may appear once per map; remove or merge one of them");
      }
      SkipTrivia();
      if (pos_ >= text_.size()) FailUnclosed();
      c = text_[pos_];
      if (c == ')' || c == ',') {
        Fail("SLU-HEADER-005", key_at, "key " + Shown(key) + " has no value",
             std::string(kKeyValueHint) + "; quote a value that contains spaces or symbols");
      }
      if (c == ']') FailMismatchedClose();
      HeaderEntry entry;
      entry.key = std::string(key);
      entry.key_offset = key_at;
      entry.value = ParseValue();
      map.push_back(std::move(entry));
    }
  }

  // Parses a list whose `[` is at `open_at`, through its closing `]`.
  HeaderList ParseList(size_t open_at) {
    Nesting nesting(*this, open_at);
    pos_ = open_at + 1;
    HeaderList list;
    list.reserve(4);
    while (true) {
      SkipTrivia();
      if (pos_ >= text_.size()) FailUnclosed();
      char c = text_[pos_];
      if (c == ']') {
        ++pos_;
        return list;
      }
      if (c == ',') {
        ++pos_;
        continue;
      }
      if (c == ')') FailMismatchedClose();
      list.push_back(ParseValue());
    }
  }

  // Parses one value at pos_ (after trivia; the caller has ruled out `)`, `]`, `,` and the end).
  HeaderValue ParseValue() {
    HeaderValue value;
    value.offset = pos_;
    char c = text_[pos_];
    if (IsQuote(c)) {
      value.value = ReadString();
      value.quoted = true;
      return value;
    }
    if (c == '[') {
      value.value = ParseList(pos_);
      return value;
    }
    if (c == '(') {
      value.value = ParseMap(pos_);
      return value;
    }
    std::string_view word = ReadBareWord();
    SkipTrivia();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      // `word ( … )` is the single-key map {word: {…}}.
      HeaderEntry entry;
      entry.key = std::string(word);
      entry.key_offset = value.offset;
      entry.value.offset = pos_;
      entry.value.value = ParseMap(pos_);
      value.value = HeaderMap{std::move(entry)};
      return value;
    }
    ClassifyWord(word, value);
    return value;
  }

  void ClassifyWord(std::string_view word, HeaderValue& value) {
    if (word == "true" || word == "false") {
      value.value = word == "true";
    } else if (word == "null") {
      value.value = HeaderNull{};
    } else if (IsIntegerWord(word)) {
      std::string_view digits = word[0] == '+' ? word.substr(1) : word;
      int64_t number = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
      if (error != std::errc() || end != digits.data() + digits.size()) FailOutOfRange(word, value.offset);
      value.value = number;
    } else if (IsFloatWord(word)) {
      std::string_view digits = word[0] == '+' ? word.substr(1) : word;
      double number = 0;
      auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
      if (error != std::errc() || end != digits.data() + digits.size()) FailOutOfRange(word, value.offset);
      value.value = number;
    } else {
      value.value = std::string(word);
    }
  }

  // Reads a bare word at pos_: it runs until whitespace, a symbol or the end.
  std::string_view ReadBareWord() {
    size_t start = pos_;
    if (text_[pos_] == ';') {
      Fail("SLU-HEADER-002", pos_,
           "unterminated header: `;` before " + OpenerName(open_.back()) + " at " +
               Where(open_.back()) + " is closed",
           "close every `(` and `[` before the `;` that ends the header");
    }
    while (pos_ < text_.size() && !IsWhitespace(text_[pos_]) && !IsSymbol(text_[pos_])) {
      char c = text_[pos_];
      if (c == ':') {
        Fail("SLU-HEADER-003", pos_, "`:` is not allowed in a header",
             std::string(kKeyValueHint) + "; quote a value that contains `:`");
      }
      if (c == '{' || c == '}') {
        Fail("SLU-HEADER-004", pos_, std::string("`") + c + "` is not allowed in a header",
             "use ( ) for maps, e.g. `settings (index_granularity 8192)`");
      }
      if (IsQuote(c)) {
        Fail("SLU-HEADER-007", pos_,
             "quote inside the bare word " + Shown(text_.substr(start, pos_ - start)),
             "quote the whole value, e.g. `\"ab'c\"`, or remove the quote");
      }
      ++pos_;
    }
    return text_.substr(start, pos_ - start);
  }

  // Reads a quoted string at pos_; a backslash keeps the next character and is itself dropped.
  std::string ReadString() {
    size_t start = pos_;
    char quote = text_[pos_++];
    std::string result;
    while (pos_ < text_.size()) {
      size_t run_end = pos_;
      while (run_end < text_.size() && text_[run_end] != quote && text_[run_end] != '\\') ++run_end;
      result.append(text_.substr(pos_, run_end - pos_));
      pos_ = run_end;
      if (pos_ >= text_.size()) break;
      if (text_[pos_] == quote) {
        ++pos_;
        return result;
      }
      if (pos_ + 1 >= text_.size()) break;  // a backslash keeps the next character
      result += text_[pos_ + 1];
      pos_ += 2;
    }
    Fail("SLU-HEADER-006", start, "unterminated string",
         std::string("close the string with `") + quote + "`; write `\\" + quote +
             "` for a quote inside it");
  }

  [[noreturn]] void FailUnclosed() const {
    size_t open_at = open_.back();
    char closer = text_[open_at] == '(' ? ')' : ']';
    Fail("SLU-HEADER-002", open_at,
         "unterminated header: " + OpenerName(open_at) + " is never closed",
         std::string("add the matching `") + closer + "`; the header ends with `);`");
  }

  // A `]` closing a map or a `)` closing a list.
  [[noreturn]] void FailMismatchedClose() const {
    size_t open_at = open_.back();
    char closer = text_[open_at] == '(' ? ')' : ']';
    Fail("SLU-HEADER-010", pos_,
         std::string("unexpected `") + text_[pos_] + "`: " + OpenerName(open_at) + " at " +
             Where(open_at) + " is still open",
         std::string("close it with `") + closer + "`; maps use ( ) and lists use [ ]");
  }

  [[noreturn]] void FailOutOfRange(std::string_view word, size_t at) const {
    Fail("SLU-HEADER-012", at, "number " + Shown(word) + " is out of range",
         "integers must fit in 64 bits and floats in a double; quote the value to keep it as text");
  }

  std::string OpenerName(size_t open_at) const {
    return text_[open_at] == '(' ? "the map opened by `(`" : "the list opened by `[`";
  }

  std::string Where(size_t at) const {
    SourceLocation location = LocationAt(file_, std::string(text_), at);
    return std::to_string(location.line) + ":" + std::to_string(location.column);
  }

  [[noreturn]] void Fail(const char* code, size_t at, std::string message, std::string hint) const {
    std::string text(text_);
    throw Error(MakeDiagnostic(code, std::move(message), LocationAt(file_, text, at), std::move(hint), text));
  }

  std::string_view text_;
  std::string_view keyword_;
  const std::string& file_;
  size_t pos_ = 0;
  std::vector<size_t> open_;
};

}  // namespace

HeaderBlock ParseHeaderBlock(std::string_view text, size_t offset, std::string_view keyword,
                             const std::string& file) {
  return HeaderParser(text, keyword, file).Parse(offset);
}

const HeaderEntry* FindEntry(const HeaderMap& map, std::string_view key) {
  for (const HeaderEntry& entry : map) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

std::string DescribeHeaderValue(const HeaderValue& value) {
  struct Describe {
    bool quoted;
    std::string operator()(const HeaderNull&) const { return "null"; }
    std::string operator()(bool) const { return "boolean"; }
    std::string operator()(int64_t) const { return "integer"; }
    std::string operator()(double) const { return "float"; }
    std::string operator()(const std::string&) const { return quoted ? "string" : "bare word"; }
    std::string operator()(const HeaderList&) const { return "list"; }
    std::string operator()(const HeaderMap&) const { return "map"; }
  };
  return std::visit(Describe{value.quoted}, value.value);
}

}  // namespace sluice
