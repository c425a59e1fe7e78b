// UTF-8 well-formedness (Unicode §3.9, table 3-7): the one check that project files are text, and what the
// diagnostic renderer uses to show malformed bytes as '?'; and the one encoder of a code point (string escapes of
// SQL, macro arguments and Python literals).
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace sluice {

// The length (1 to 4) of the well-formed UTF-8 sequence starting at text[at], or 0 when the bytes there are not
// one: a stray continuation byte, an overlong or surrogate form, a code point past U+10FFFF, a truncated
// sequence, or `at` past the end.
size_t Utf8SequenceLength(std::string_view text, size_t at);

// The offset of the first byte of `text` that does not start a well-formed sequence; npos when `text` is
// well-formed UTF-8 (the empty text included). Linear; ASCII runs are skipped eight bytes at a time.
size_t FindInvalidUtf8(std::string_view text);

// Appends the UTF-8 encoding of `code_point` (at most U+10FFFF; callers check the range) to `out`.
void AppendUtf8(std::string& out, uint32_t code_point);

}  // namespace sluice
