#include "state/sql/state_connection.hpp"

#include <charconv>
#include <stdexcept>

namespace sluice {

std::string RenderPlaceholders(std::string_view sql, PlaceholderStyle style) {
  if (style == PlaceholderStyle::kQuestionMark) return std::string(sql);
  std::string out;
  out.reserve(sql.size() + 16);
  int number = 0;
  char quote = 0;  // the quote of the text being read, 0 outside quoted text
  for (char c : sql) {
    if (quote != 0) {
      if (c == quote) quote = 0;  // a doubled quote closes and reopens: the same text
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      out += '$' + std::to_string(++number);
      continue;
    }
    out += c;
  }
  return out;
}

std::optional<std::string> SqlValue::Text() const {
  if (const auto* text = std::get_if<std::string>(&value_)) return *text;
  if (const auto* number = std::get_if<int64_t>(&value_)) return std::to_string(*number);
  return std::nullopt;
}

int64_t SqlRow::Int(size_t column) const {
  const std::optional<std::string>& value = values_.at(column);
  if (!value) return 0;
  int64_t number = 0;
  auto [end, error] = std::from_chars(value->data(), value->data() + value->size(), number);
  if (error != std::errc() || end != value->data() + value->size()) {
    throw std::invalid_argument("not an integer: " + *value);
  }
  return number;
}

}  // namespace sluice
