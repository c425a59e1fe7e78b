#include "cli/usage_error.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>

namespace sluice::cli {

namespace {

// `text` for a message: as typed, cut after 24 bytes so a 300-digit value stays readable.
std::string Shown(std::string_view text) {
  constexpr size_t kShownBytes = 24;
  if (text.size() <= kShownBytes) return std::string(text);
  return std::string(text.substr(0, kShownBytes)) + "… (" + std::to_string(text.size()) + " characters)";
}

bool IsInteger(std::string_view text) {
  std::string_view digits = !text.empty() && text.front() == '-' ? text.substr(1) : text;
  return !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

int ParseIntegerFlag(std::string_view flag, std::string_view text, int min, int max) {
  const std::string subject = "`" + std::string(flag) + "`: `" + Shown(text) + "`";
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  if (!IsInteger(text)) {
    throw UsageError(Diagnostic{"SLU-CLI-003",
                                subject + " is not a number",
                                {},
                                std::string(flag) + " takes a whole number from " + range,
                                {}});
  }
  int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    throw UsageError(Diagnostic{"SLU-CLI-003", subject + " is out of range (" + range + ")", {}, "", {}});
  }
  return static_cast<int>(value);
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

bool IsAboutArguments(const Error& error) {
  return std::all_of(error.diagnostics().begin(), error.diagnostics().end(), [](const Diagnostic& d) {
    if (d.code.starts_with("SLU-SELECT-")) return true;
    return d.code.starts_with("SLU-PARTITION-") && d.code != "SLU-PARTITION-004";
  });
}

}  // namespace sluice::cli
