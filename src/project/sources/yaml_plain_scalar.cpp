#include "project/sources/yaml_plain_scalar.hpp"

#include <cstddef>

namespace sluice {

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsDigitOrUnderscore(char c) { return IsDigit(c) || c == '_'; }
bool IsBinaryOrUnderscore(char c) { return c == '0' || c == '1' || c == '_'; }
bool IsOctalOrUnderscore(char c) { return (c >= '0' && c <= '7') || c == '_'; }
bool IsHexOrUnderscore(char c) { return IsDigitOrUnderscore(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// A read position in the scalar; every Take* consumes what it matched and nothing when it fails.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}

  bool AtEnd() const { return at_ == text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[at_]; }

  bool Take(char c) {
    if (AtEnd() || text_[at_] != c) return false;
    ++at_;
    return true;
  }
  bool TakeSign() { return Take('-') || Take('+'); }
  bool TakeWord(std::string_view word) {
    if (text_.substr(at_, word.size()) != word) return false;
    at_ += word.size();
    return true;
  }
  // Consumes the longest run of characters satisfying `accept`; returns its length.
  template <typename Predicate>
  size_t TakeWhile(Predicate accept) {
    size_t begin = at_;
    while (!AtEnd() && accept(text_[at_])) ++at_;
    return at_ - begin;
  }

 private:
  std::string_view text_;
  size_t at_ = 0;
};

// `(:[0-5]?[0-9])+`: one or more base-60 groups. Digits never include ':', so the greedy run is the match.
bool TakeSexagesimalGroups(Cursor& cursor) {
  size_t groups = 0;
  while (cursor.Peek() == ':') {
    cursor.Take(':');
    Cursor start = cursor;
    size_t digits = cursor.TakeWhile(IsDigit);
    if (digits == 2 && start.Peek() > '5') return false;
    if (digits < 1 || digits > 2) return false;
    ++groups;
  }
  return groups > 0;
}

// `([eE][-+][0-9]+)?` followed by the end.
bool TakeExponentThenEnd(Cursor& cursor) {
  if (cursor.Take('e') || cursor.Take('E')) {
    if (!cursor.TakeSign() || cursor.TakeWhile(IsDigit) == 0) return false;
  }
  return cursor.AtEnd();
}

bool IsBool(std::string_view text) {
  for (std::string_view word : {"yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False",
                                "FALSE", "on", "On", "ON", "off", "Off", "OFF"}) {
    if (text == word) return true;
  }
  return false;
}

// [-+]?0b[0-1_]+ | [-+]?0[0-7_]+ | [-+]?(0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+ | [-+]?[1-9][0-9_]*(:[0-5]?[0-9])+
bool IsInt(std::string_view text) {
  Cursor cursor(text);
  cursor.TakeSign();
  if (cursor.Take('0')) {
    if (cursor.AtEnd()) return true;
    if (cursor.Take('b')) return cursor.TakeWhile(IsBinaryOrUnderscore) > 0 && cursor.AtEnd();
    if (cursor.Take('x')) return cursor.TakeWhile(IsHexOrUnderscore) > 0 && cursor.AtEnd();
    return cursor.TakeWhile(IsOctalOrUnderscore) > 0 && cursor.AtEnd();
  }
  if (!IsDigit(cursor.Peek())) return false;
  cursor.TakeWhile(IsDigitOrUnderscore);
  if (cursor.AtEnd()) return true;
  return TakeSexagesimalGroups(cursor) && cursor.AtEnd();
}

// [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)?
// | [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]* | [-+]?\.(inf|Inf|INF) | \.(nan|NaN|NAN)
bool IsFloat(std::string_view text) {
  Cursor cursor(text);
  bool signed_ = cursor.TakeSign();
  if (cursor.Take('.')) {
    for (std::string_view word : {"inf", "Inf", "INF"}) {
      Cursor inf = cursor;
      if (inf.TakeWord(word) && inf.AtEnd()) return true;
    }
    if (signed_) return false;
    for (std::string_view word : {"nan", "NaN", "NAN"}) {
      Cursor nan = cursor;
      if (nan.TakeWord(word) && nan.AtEnd()) return true;
    }
    return cursor.TakeWhile(IsDigitOrUnderscore) > 0 && TakeExponentThenEnd(cursor);
  }
  if (!IsDigit(cursor.Peek())) return false;
  cursor.TakeWhile(IsDigitOrUnderscore);
  if (cursor.Take('.')) {
    cursor.TakeWhile(IsDigitOrUnderscore);
    return TakeExponentThenEnd(cursor);
  }
  if (!TakeSexagesimalGroups(cursor) || !cursor.Take('.')) return false;
  cursor.TakeWhile(IsDigitOrUnderscore);
  return cursor.AtEnd();
}

// [0-9]{4}-[0-9]{2}-[0-9]{2}
// | [0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?
//   ([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?
bool IsTimestamp(std::string_view text) {
  Cursor cursor(text);
  auto digits = [&cursor](size_t least, size_t most) {
    size_t count = cursor.TakeWhile(IsDigit);
    return count >= least && count <= most;
  };
  if (!digits(4, 4) || !cursor.Take('-')) return false;
  Cursor month = cursor;
  size_t month_digits = month.TakeWhile(IsDigit);
  if (!digits(1, 2) || !cursor.Take('-')) return false;
  Cursor day = cursor;
  size_t day_digits = day.TakeWhile(IsDigit);
  if (!digits(1, 2)) return false;
  if (cursor.AtEnd()) return month_digits == 2 && day_digits == 2;
  if (!cursor.Take('T') && !cursor.Take('t') && cursor.TakeWhile(IsBlank) == 0) return false;
  if (!digits(1, 2) || !cursor.Take(':') || !digits(2, 2) || !cursor.Take(':') || !digits(2, 2)) return false;
  if (cursor.Take('.')) cursor.TakeWhile(IsDigit);
  if (cursor.AtEnd()) return true;
  cursor.TakeWhile(IsBlank);
  if (cursor.Take('Z')) return cursor.AtEnd();
  if (!cursor.TakeSign() || !digits(1, 2)) return false;
  if (cursor.Take(':') && !digits(2, 2)) return false;
  return cursor.AtEnd();
}

}  // namespace

PlainScalarType ResolvePlainScalar(std::string_view text) {
  if (IsBool(text)) return PlainScalarType::kBool;
  if (IsInt(text)) return PlainScalarType::kInt;
  if (IsFloat(text)) return PlainScalarType::kFloat;
  if (IsTimestamp(text)) return PlainScalarType::kTimestamp;
  return PlainScalarType::kString;
}

}  // namespace sluice
