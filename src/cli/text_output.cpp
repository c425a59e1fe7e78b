#include "cli/text_output.hpp"

#include <cstdio>

namespace sluice::cli {

std::string Pad(std::string text, size_t width) {
  if (text.size() < width) text.resize(width, ' ');
  return text;
}

std::string Plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
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

void PrintJson(const nlohmann::json& value) { std::printf("%s\n", value.dump(2).c_str()); }
void PrintJson(const nlohmann::ordered_json& value) { std::printf("%s\n", value.dump(2).c_str()); }

}  // namespace sluice::cli
