// Python's lexical pieces as both readers of Python literals in Sluice read them: the macro arguments of SQL models
// (project/macros/macro_arguments.cpp) and the assignments of generated Starlake modules
// (orchestrate/python_literal.cpp). Those two differ in grammar (numbers, containers, calls) and in wording; what
// they share is here: names, digits, and a string literal's body with its escapes. A failure comes back as data
// (PythonStringFailure) for the caller to word under its own error codes.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace sluice::python {

inline bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool IsDigit(char c) { return c >= '0' && c <= '9'; }
inline bool IsNameStart(char c) { return IsAsciiLetter(c) || c == '_'; }
inline bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }
inline bool IsQuote(char c) { return c == '\'' || c == '"'; }
// 0–15 for a hexadecimal digit, -1 otherwise.
int HexValue(char c);

// Where the two readers decode differently.
struct PythonStringRules {
  // \xNN appends the byte NN; otherwise the UTF-8 of code point U+00NN, as Python's str does.
  bool x_escape_is_byte = false;
  // A backslash before CR LF continues the line, as one before LF does; otherwise the backslash and CR are kept.
  bool crlf_continuation = true;
};

// One string literal's text, decoded.
struct PythonString {
  std::string value;
  bool escaped = false;      // an escape sequence changed the text: offsets inside no longer map to the source
  size_t content_start = 0;  // offset of the first byte after the opening quote(s)
  size_t end = 0;            // offset just after the closing quote(s)
};

// Why a string literal cannot be read.
struct PythonStringFailure {
  enum class Kind {
    kUnterminated,         // the text ends first (also right after a backslash)
    kLineEnds,             // a single-quoted literal meets the end of its line
    kTruncatedEscape,      // \x, \u or \U with fewer hexadecimal digits than `digits`
    kBeyondUnicode,        // an escape above U+10FFFF
    kSurrogate,            // an escape in U+D800…U+DFFF
    kNamedEscape,          // \N{…}
  };
  Kind kind;
  size_t offset = 0;  // the escape's backslash; for kUnterminated and kLineEnds, the literal's `start`
  char escape = 0;    // the letter after the backslash (x, u or U) of a kTruncatedEscape
  int digits = 0;     // the hexadecimal digits it needs
};

// Reads the string literal whose opening quote (or triple quote) is at `quote` in text[0, end). `start` is where its
// prefix begins (failures of the whole literal are located there); `raw` keeps every backslash and the character after
// it (r prefix). Escapes are Python's: \<newline>, \\ \' \" \a \b \f \n \r \t \v, \ooo, \xhh, \uhhhh, \Uhhhhhhhh;
// an unknown escape is kept as written.
std::variant<PythonString, PythonStringFailure> ReadPythonString(std::string_view text, size_t start, size_t quote,
                                                                 size_t end, bool raw, const PythonStringRules& rules);

}  // namespace sluice::python
