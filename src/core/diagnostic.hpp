// Diagnostics and the one exception type that ends a command.
//
// A Diagnostic is plain data: a stable code (`SLU-<AREA>-NNN`), a message, where it happened and a hint.
// `Error` carries one or more diagnostics; only cli/ (and later ui/) catch it and render it.
// Thread-safety: values; safe to copy across threads.
#pragma once

#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// A position in a file. line and column are 1-based; 0 means "unknown" (the whole file).
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return !file.empty(); }
  bool operator==(const SourceLocation&) const = default;
};

struct Diagnostic {
  std::string code;     // stable, e.g. "SLU-PROJECT-003"
  std::string message;  // what is wrong, one sentence
  SourceLocation location;
  std::string hint;         // what to do about it; may be empty
  std::string source_line;  // the offending line's text, for the caret snippet; may be empty
};

// How rendered text marks its labels: plain, or coloured with ANSI escape codes for a terminal. The caller
// decides which its stream takes (the CLI: cli/color_choice.hpp).
enum class TextStyle { kPlain, kColor };

// Renders `file:line:col: error[CODE]: message`, a caret snippet when the line is known, and the hint.
// Safe to print whatever the input file held: control bytes (other than newline and tab) and bytes that are
// not well-formed UTF-8 are shown as '?', and a source line over 160 bytes is cut to a window around the
// column, so a huge one-line file still renders a one-line snippet. Columns stay byte-based; the caret is
// padded per character. With TextStyle::kColor the `error[CODE]` label is bold red; nothing else changes.
std::string FormatDiagnostic(const Diagnostic& diagnostic, TextStyle style = TextStyle::kPlain);

// Renders `warning: message` and a newline, for something that does not stop the command; the message is made
// printable as FormatDiagnostic's is. With TextStyle::kColor the `warning` label is bold yellow.
std::string FormatWarning(std::string_view message, TextStyle style = TextStyle::kPlain);

// Builds a located diagnostic from the full text of the file it points into (fills source_line).
Diagnostic MakeDiagnostic(std::string code, std::string message, SourceLocation location, std::string hint,
                          std::string_view file_text = {});

// Orders diagnostics by file, then line, then column (an unknown line or column first); equal locations keep
// their order. How diagnostics of several independent files are reported together.
void SortByLocation(std::vector<Diagnostic>& diagnostics);

// Converts a byte offset in `text` into a 1-based line/column location in `file`.
SourceLocation LocationAt(const std::string& file, std::string_view text, size_t offset);

// LocationAt for many offsets of one text: lines are counted on from the previous offset, so offsets given in
// increasing order cost one pass over the text (a smaller offset counts again from the start).
class LocationCounter {
 public:
  LocationCounter(const std::string& file, std::string_view text) : text_(text), location_{file, 1, 1} {}
  const SourceLocation& At(size_t offset);

 private:
  std::string_view text_;
  SourceLocation location_;
  size_t counted_ = 0;     // text_[0, counted_) is counted into location_.line
  size_t line_start_ = 0;  // where the line of counted_ starts
};

class Error : public std::exception {
 public:
  explicit Error(Diagnostic diagnostic);
  explicit Error(std::vector<Diagnostic> diagnostics);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  const char* what() const noexcept override { return summary_.c_str(); }

 private:
  std::vector<Diagnostic> diagnostics_;
  std::string summary_;
};

}  // namespace sluice
