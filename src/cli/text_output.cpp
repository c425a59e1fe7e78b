#include "cli/text_output.hpp"

#include <cstdio>

namespace sluice::cli {

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

std::string FormatCount(int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string DiagnosticLine(const std::string& code, const std::string& message, const SourceLocation& at) {
  std::string where;
  if (at.known()) {
    where = at.file;
    if (at.line > 0) where += ":" + std::to_string(at.line);
    if (at.line > 0 && at.column > 0) where += ":" + std::to_string(at.column);
    where += ": ";
  }
  return where + "error[" + code + "]: " + message;
}

std::string Seconds(int64_t milliseconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fs", static_cast<double>(milliseconds) / 1000.0);
  return text;
}

void PrintJson(const nlohmann::json& value) { std::printf("%s\n", value.dump(2).c_str()); }
void PrintJson(const nlohmann::ordered_json& value) { std::printf("%s\n", value.dump(2).c_str()); }

}  // namespace sluice::cli
