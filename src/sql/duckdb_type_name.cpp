#include "sql/duckdb_type_name.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace sluice::sql {

namespace {

// DuckDB 1.4's built-in scalar types and their aliases (SELECT type_name FROM duckdb_types(), without the
// composite, ENUM, NULL and VARIANT ones), lower case.
constexpr std::string_view kNames[] = {
    "bigint",    "int8",      "int64",        "long",        "oid",          "bignum",       "varint",      "bit",
    "bitstring", "binary",    "blob",         "bytea",       "varbinary",    "bool",         "boolean",     "logical",
    "date",      "dec",       "decimal",      "numeric",     "double",       "float8",       "float",       "float4",
    "real",      "hugeint",   "int128",       "int",         "int32",        "int4",         "integer",     "integral",
    "signed",    "interval",  "smallint",     "int16",       "int2",         "short",        "time",        "timetz",
    "datetime",  "timestamp", "timestamp_us", "timestamptz", "timestamp_ms", "timestamp_ns", "timestamp_s", "time_ns",
    "tinyint",   "int1",      "ubigint",      "uint64",      "uhugeint",     "uint128",      "uinteger",    "uint32",
    "usmallint", "uint16",    "utinyint",     "uint8",       "uuid",         "guid",         "json",        "bpchar",
    "char",      "character", "nvarchar",     "string",      "text",         "varchar"};

// Multi-word names: a first word and the words that may follow it, in order.
constexpr std::array<std::array<std::string_view, 4>, 6> kMultiWordNames = {{
    {"double", "precision", "", ""},
    {"character", "varying", "", ""},
    {"timestamp", "with", "time", "zone"},
    {"timestamp", "without", "time", "zone"},
    {"time", "with", "time", "zone"},
    {"time", "without", "time", "zone"},
}};

constexpr std::string_view kDecimalNames[] = {"dec", "decimal", "numeric"};
constexpr std::string_view kLengthNames[] = {"varchar", "char",     "character", "character varying",
                                             "bpchar",  "nvarchar", "string",    "text"};

constexpr int64_t kMaxDecimalWidth = 38;

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = Lower(c);
  return out;
}

bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

template <size_t N>
bool Contains(const std::string_view (&names)[N], std::string_view name) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

class TypeReader {
 public:
  explicit TypeReader(std::string_view text) : text_(text) {}

  std::optional<TypeNameProblem> Read() {
    SkipSpace();
    if (at_ == text_.size()) return Problem("expected a type name, e.g. BIGINT, VARCHAR or DECIMAL(12,2)");
    const size_t name_begin = at_;
    std::string_view first = Word();
    if (first.empty()) return Unexpected("expected a type name");
    std::string name = Lowercase(first);
    if (!Contains(kNames, name)) {
      return TypeNameProblem{name_begin, "`" + std::string(first) + "` is not a DuckDB type name"};
    }
    ExtendMultiWordName(name);
    name_ = std::string(text_.substr(name_begin, at_ - name_begin));
    SkipSpace();
    if (Peek('(')) {
      if (auto problem = Arguments(name)) return problem;
    }
    SkipSpace();
    while (Peek('[')) {
      ++at_;
      SkipSpace();
      if (IsDigit(Current())) {
        const size_t size_at = at_;
        if (Integer() < 1) return TypeNameProblem{size_at, "an array size must be at least 1"};
        SkipSpace();
      }
      if (!Peek(']')) return Unexpected("expected `]`");
      ++at_;
      SkipSpace();
    }
    if (at_ < text_.size()) return Unexpected("expected the end of the type");
    return std::nullopt;
  }

 private:
  char Current() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  bool Peek(char c) const { return Current() == c; }
  void SkipSpace() {
    while (at_ < text_.size() && IsSpace(text_[at_])) ++at_;
  }

  std::string_view Word() {
    const size_t begin = at_;
    if (!IsLetter(Current())) return {};
    while (at_ < text_.size() && (IsLetter(text_[at_]) || IsDigit(text_[at_]))) ++at_;
    return text_.substr(begin, at_ - begin);
  }

  // Digits as a number, saturating above any limit the grammar checks.
  int64_t Integer() {
    int64_t value = 0;
    while (IsDigit(Current())) {
      value = std::min<int64_t>(value * 10 + (Current() - '0'), 1'000'000'000);
      ++at_;
    }
    return value;
  }

  // `name` followed by the words of the longest multi-word name it starts (`double precision`, `timestamp with
  // time zone`); `name` becomes that name, words joined by one space. Without the rest it stays one word.
  void ExtendMultiWordName(std::string& name) {
    size_t best_end = at_;
    std::string best = name;
    for (const auto& words : kMultiWordNames) {
      if (words[0] != name) continue;
      const size_t saved = at_;
      std::string joined = name;
      bool complete = true;
      for (size_t w = 1; w < words.size() && !words[w].empty(); ++w) {
        SkipSpace();
        if (Lowercase(Word()) != words[w]) {
          complete = false;
          break;
        }
        joined += " " + std::string(words[w]);
      }
      if (complete && at_ > best_end) {
        best_end = at_;
        best = joined;
      }
      at_ = saved;
    }
    at_ = best_end;
    name = best;
  }

  std::optional<TypeNameProblem> Arguments(const std::string& name) {
    const bool decimal = Contains(kDecimalNames, name);
    const bool length = Contains(kLengthNames, name);
    if (!decimal && !length) return Problem("`" + name_ + "` takes no arguments");
    ++at_;  // (
    SkipSpace();
    const size_t first_at = at_;
    if (!IsDigit(Current())) return Unexpected("expected a whole number");
    const int64_t first = Integer();
    SkipSpace();
    if (length) {
      if (first < 1) return TypeNameProblem{first_at, "a length must be at least 1"};
    } else {
      if (first < 1 || first > kMaxDecimalWidth) return TypeNameProblem{first_at, "a DECIMAL width must be 1 to 38"};
      if (Peek(',')) {
        ++at_;
        SkipSpace();
        const size_t scale_at = at_;
        if (!IsDigit(Current())) return Unexpected("expected a whole number (the scale)");
        if (Integer() > first) return TypeNameProblem{scale_at, "a DECIMAL scale cannot exceed its width"};
        SkipSpace();
      }
    }
    if (!Peek(')')) return Unexpected(length ? "expected `)`" : "expected `,` or `)`");
    ++at_;
    return std::nullopt;
  }

  TypeNameProblem Problem(std::string message) const { return TypeNameProblem{at_, std::move(message)}; }

  // "unexpected `x` …: <expected>" at the current byte.
  TypeNameProblem Unexpected(const std::string& expected) const {
    if (at_ >= text_.size()) return Problem(expected + " at the end");
    // One character, whole when it is ASCII; a non-ASCII byte is named by its value.
    const unsigned char c = static_cast<unsigned char>(text_[at_]);
    std::string shown = c >= 0x20 && c < 0x7F ? "`" + std::string(1, static_cast<char>(c)) + "`" : "byte " + Hex(c);
    return Problem("unexpected " + shown + (name_.empty() ? "" : " after `" + Written() + "`") + ": " + expected);
  }

  std::string Written() const {
    std::string_view written = text_.substr(0, at_);
    while (!written.empty() && IsSpace(written.back())) written.remove_suffix(1);
    while (!written.empty() && IsSpace(written.front())) written.remove_prefix(1);
    return std::string(written);
  }

  static std::string Hex(unsigned char c) {
    const char* digits = "0123456789ABCDEF";
    return std::string("0x") + digits[c >> 4] + digits[c & 15];
  }

  std::string_view text_;
  size_t at_ = 0;
  std::string name_;  // the name as written, once read
};

}  // namespace

std::optional<TypeNameProblem> CheckDuckDbTypeName(std::string_view text) { return TypeReader(text).Read(); }

}  // namespace sluice::sql
