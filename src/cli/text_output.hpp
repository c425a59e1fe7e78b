// How the command line writes text: padded columns, counts, durations, one-line diagnostics, JSON documents.
// Thread-safety: pure functions; PrintJson writes stdout.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/diagnostic.hpp"
#include "core/text.hpp"

namespace sluice::cli {

// `text` padded with blanks to `width` (longer text is kept whole).
std::string Pad(std::string text, size_t width);

using sluice::Plural;  // core/text.hpp

// Thousands separators: 1234567 → "1,234,567".
std::string FormatCount(int64_t value);

// A duration in seconds with two decimals: 1234 → "1.23s".
std::string Seconds(int64_t milliseconds);

// A diagnostic on one line, as step and event lists show it: "file:line:col: error[CODE]: message" (as much of the
// location as is known).
std::string DiagnosticLine(const std::string& code, const std::string& message, const SourceLocation& at);

// `value` indented by two, and a newline, on stdout.
void PrintJson(const nlohmann::json& value);
void PrintJson(const nlohmann::ordered_json& value);

}  // namespace sluice::cli
