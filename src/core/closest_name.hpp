// The "did you mean" suggestion for a misspelt name: the candidate closest to it by edit distance.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// The Levenshtein distance between `a` and `b`, comparing bytes case-insensitively (ASCII).
size_t EditDistance(std::string_view a, std::string_view b);

// The first candidate at the smallest edit distance from `word`, when that distance is at most
// max(2, word.size() / 3): further away, a suggestion is more likely to mislead than to help.
std::optional<std::string> ClosestName(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace sluice
