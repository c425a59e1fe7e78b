// Small text helpers many layers need, in one place: ASCII lower case, trimming blanks, joining.
// ASCII only on purpose: the names, keywords and option values they serve are ASCII, and the C library's
// locale-dependent case mapping would make results depend on the machine.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// `text` with A-Z mapped to a-z; every other byte unchanged.
std::string AsciiLower(std::string_view text);

// Whether `a` and `b` are equal once A-Z are mapped to a-z.
bool EqualsIgnoringAsciiCase(std::string_view a, std::string_view b);

// `text` without leading and trailing blanks (space, \t, \n, \v, \f, \r).
std::string_view TrimBlanks(std::string_view text);

// The parts with `separator` between them.
std::string Join(const std::vector<std::string>& parts, std::string_view separator);

// "1 run", "2 runs": the count and the noun, with an s unless the count is 1.
std::string Plural(size_t count, const std::string& noun);

}  // namespace sluice
