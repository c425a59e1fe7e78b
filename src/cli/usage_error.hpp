// Usage errors: the command was typed wrong (an unknown command, a flag value that is not valid, a selection or
// partition key that names nothing). main.cpp renders them like any sluice::Error but exits 2 instead of 1.
// Thread-safety: values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"
#include "service/request_error.hpp"

namespace sluice::cli {

// A RequestError the command line found itself (a flag's form, an unknown command).
class UsageError : public service::RequestError {
 public:
  using service::RequestError::RequestError;
};

using service::AsRequestError;
using service::CheckingArguments;
using service::IsAboutArguments;

// The value of an integer flag, e.g. `--threads`. Throws UsageError SLU-CLI-003: "`--threads`: `abc` is not a
// number" for anything but an optional '-' and decimal digits; "`--threads`: `-1` is out of range (0 to 99)"
// for a number outside [min, max], however many digits it has.
int ParseIntegerFlag(std::string_view flag, std::string_view text, int min, int max);

// The value of a decimal flag, e.g. `--wait-timeout 1.5`: like ParseIntegerFlag, with an optional fraction
// (digits, '.', digits). Exponents, "inf" and "nan" are not numbers here.
double ParseDecimalFlag(std::string_view flag, std::string_view text, int min, int max);

// SLU-CLI-002: `word` is not one of `commands` (empty `word`: no command was given). Lists the commands.
UsageError UnknownCommand(const std::string& word, const std::vector<std::string>& commands);

}  // namespace sluice::cli
