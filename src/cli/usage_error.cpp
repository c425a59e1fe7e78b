#include "cli/usage_error.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <type_traits>

namespace sluice::cli {

namespace {

// `text` for a message: as typed, cut after 24 bytes so a 300-digit value stays readable.
std::string Shown(std::string_view text) {
  constexpr size_t kShownBytes = 24;
  if (text.size() <= kShownBytes) return std::string(text);
  return std::string(text.substr(0, kShownBytes)) + "… (" + std::to_string(text.size()) + " characters)";
}

bool IsDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An optional '-', then digits; with `fraction`, optionally '.' and more digits.
bool IsNumber(std::string_view text, bool fraction) {
  if (!text.empty() && text.front() == '-') text.remove_prefix(1);
  size_t dot = fraction ? text.find('.') : std::string_view::npos;
  if (dot == std::string_view::npos) return IsDigits(text);
  return IsDigits(text.substr(0, dot)) && IsDigits(text.substr(dot + 1));
}

// Reads `text` as a number of type T in [min, max], or throws SLU-CLI-003 naming the flag.
template <typename T>
T ParseNumberFlag(std::string_view flag, std::string_view text, int min, int max, bool fraction) {
  const std::string subject = "`" + std::string(flag) + "`: `" + Shown(text) + "`";
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  if (!IsNumber(text, fraction)) {
    throw UsageError(
        Diagnostic{"SLU-CLI-003",
                   subject + " is not a number",
                   {},
                   std::string(flag) + " takes a " + (fraction ? "number" : "whole number") + " from " + range,
                   {}});
  }
  std::conditional_t<std::is_integral_v<T>, int64_t, double> value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    throw UsageError(Diagnostic{"SLU-CLI-003", subject + " is out of range (" + range + ")", {}, "", {}});
  }
  return static_cast<T>(value);
}

}  // namespace

int ParseIntegerFlag(std::string_view flag, std::string_view text, int min, int max) {
  return ParseNumberFlag<int>(flag, text, min, max, false);
}

double ParseDecimalFlag(std::string_view flag, std::string_view text, int min, int max) {
  return ParseNumberFlag<double>(flag, text, min, max, true);
}

UsageError UnknownCommand(const std::string& word, const std::vector<std::string>& commands) {
  std::string list;
  for (const std::string& command : commands) list += (list.empty() ? "" : ", ") + command;
  return UsageError(Diagnostic{"SLU-CLI-002",
                               word.empty() ? "no command given" : "unknown command `" + word + "`",
                               {},
                               "the commands are " + list + "; `sluice --help` describes them",
                               {}});
}

}  // namespace sluice::cli
