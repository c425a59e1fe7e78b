#include "core/diagnostic.hpp"

#include <algorithm>
#include <cstring>
#include <string_view>
#include <tuple>

#include "core/utf8.hpp"

namespace sluice {

namespace {

std::string LineOf(std::string_view text, int line) {
  if (line <= 0) return {};
  size_t begin = 0;
  for (int current = 1; current < line; ++current) {
    begin = text.find('\n', begin);
    if (begin == std::string::npos) return {};
    ++begin;
  }
  size_t end = text.find('\n', begin);
  std::string result(text.substr(begin, end == std::string::npos ? std::string::npos : end - begin));
  if (!result.empty() && result.back() == '\r') result.pop_back();
  return result;
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7F; }

// `text` safe to print on a terminal: each control byte other than those in `kept`, and each byte that is not
// part of well-formed UTF-8, becomes '?'. Calls `on_char(first_byte_index, width_in_bytes)` per output char.
template <typename OnChar>
std::string Printable(std::string_view text, std::string_view kept, OnChar on_char) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t length = Utf8SequenceLength(text, i);
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (length == 0 || (length == 1 && IsControl(c) && kept.find(text[i]) == std::string_view::npos)) {
      out += '?';
      length = 1;
    } else {
      out.append(text, i, length);
    }
    on_char(i, length);
    i += length;
  }
  return out;
}

std::string Printable(std::string_view text, std::string_view kept) {
  return Printable(text, kept, [](size_t, size_t) {});
}

// The source line and caret of a located diagnostic. A line longer than kMaxSnippetBytes is cut to a window
// around the column (marked with "…"), so an error in a huge one-line file prints one short line.
std::string Snippet(const std::string& source_line, int line, int column) {
  constexpr size_t kMaxSnippetBytes = 160;
  constexpr size_t kContextBefore = 60;
  std::string_view text = source_line;
  size_t caret = column > 0 ? static_cast<size_t>(column - 1) : 0;  // byte index of the caret in the line
  size_t begin = 0;
  size_t end = text.size();
  if (text.size() > kMaxSnippetBytes) {
    begin = std::min(caret > kContextBefore ? caret - kContextBefore : 0, text.size());
    end = std::min(begin + kMaxSnippetBytes, text.size());
    auto is_continuation = [&text](size_t i) { return (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80; };
    for (int step = 0; step < 3 && begin < end && is_continuation(begin); ++step) ++begin;
    for (int step = 0; step < 3 && end < text.size() && end > begin && is_continuation(end); ++step) --end;
  }
  std::string number = std::to_string(line);
  std::string shown = begin > 0 ? "…" : "";
  std::string pad = begin > 0 ? " " : "";
  shown += Printable(text.substr(begin, end - begin), "\t", [&](size_t at, size_t) {
    if (begin + at < caret) pad += text[begin + at] == '\t' ? '\t' : ' ';
  });
  if (end < text.size()) shown += "…";
  if (caret > end) pad += std::string(std::min(caret - end, kMaxSnippetBytes), ' ');
  return " " + number + " | " + shown + "\n " + std::string(number.size(), ' ') + " | " + pad + "^\n";
}

// `label` in the given SGR colour (e.g. "1;31", bold red) when styled, else as it is.
std::string Label(const std::string& label, const char* sgr, TextStyle style) {
  if (style == TextStyle::kPlain) return label;
  return "\x1b[" + std::string(sgr) + "m" + label + "\x1b[0m";
}

}  // namespace

void SortByLocation(std::vector<Diagnostic>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& a, const Diagnostic& b) {
    const SourceLocation& x = a.location;
    const SourceLocation& y = b.location;
    return std::tie(x.file, x.line, x.column) < std::tie(y.file, y.line, y.column);
  });
}

SourceLocation LocationAt(const std::string& file, std::string_view text, size_t offset) {
  return LocationCounter(file, text).At(offset);
}

const SourceLocation& LocationCounter::At(size_t offset) {
  offset = std::min(offset, text_.size());
  if (offset < counted_) {
    location_.line = 1;
    counted_ = line_start_ = 0;
  }
  while (counted_ < offset) {
    const void* newline = std::memchr(text_.data() + counted_, '\n', offset - counted_);
    if (newline == nullptr) {
      counted_ = offset;
      break;
    }
    ++location_.line;
    line_start_ = counted_ = static_cast<const char*>(newline) - text_.data() + 1;
  }
  location_.column = static_cast<int>(offset - line_start_) + 1;
  return location_;
}

Diagnostic MakeDiagnostic(std::string code, std::string message, SourceLocation location, std::string hint,
                          std::string_view file_text) {
  Diagnostic diagnostic{std::move(code), std::move(message), std::move(location), std::move(hint), {}};
  if (!file_text.empty()) diagnostic.source_line = LineOf(file_text, diagnostic.location.line);
  return diagnostic;
}

std::string FormatDiagnostic(const Diagnostic& diagnostic, TextStyle style) {
  std::string out;
  const SourceLocation& at = diagnostic.location;
  if (at.known()) {
    out += at.file;
    if (at.line > 0) out += ":" + std::to_string(at.line);
    if (at.line > 0 && at.column > 0) out += ":" + std::to_string(at.column);
    out += ": ";
  }
  out += Label("error[" + diagnostic.code + "]", "1;31", style) + ": " + Printable(diagnostic.message, "\n\t") + "\n";
  if (!diagnostic.source_line.empty() && at.line > 0) out += Snippet(diagnostic.source_line, at.line, at.column);
  if (!diagnostic.hint.empty()) out += "  hint: " + Printable(diagnostic.hint, "\n\t") + "\n";
  return out;
}

std::string FormatWarning(std::string_view message, TextStyle style) {
  return Label("warning", "1;33", style) + ": " + Printable(message, "\n\t") + "\n";
}

Error::Error(Diagnostic diagnostic) : Error(std::vector<Diagnostic>{std::move(diagnostic)}) {}

Error::Error(std::vector<Diagnostic> diagnostics) : diagnostics_(std::move(diagnostics)) {
  for (const Diagnostic& diagnostic : diagnostics_) {
    if (!summary_.empty()) summary_ += "; ";
    summary_ += diagnostic.code + ": " + diagnostic.message;
  }
}

}  // namespace sluice
