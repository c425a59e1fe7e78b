// The type PyYAML's safe_load resolves an untagged plain YAML scalar to (its implicit resolvers for bool,
// int, float and timestamp; anything else is a string). StreamBuild reads sources with safe_load, so a
// value it rejects for its type is rejected here too: a plain `2024` is an int, `yes` a bool, `2024-01-01` a
// timestamp.
//
// Hand-written scanners rather than std::regex: libstdc++'s regex executor recurses once per character and
// overflows the stack on a long scalar. Each resolver is one left-to-right pass, O(n) time, O(1) stack.
// Thread-safety: pure functions.
#pragma once

#include <string_view>

namespace sluice {

enum class PlainScalarType { kBool, kInt, kFloat, kTimestamp, kString };

// The type of `text` as an untagged plain scalar; kString when no implicit resolver matches.
PlainScalarType ResolvePlainScalar(std::string_view text);

}  // namespace sluice
