// Usage errors: the command was typed wrong (an unknown command, a flag value that is not valid, a selection or
// partition key that names nothing). main.cpp renders them like any sluice::Error but exits 2 instead of 1.
// Thread-safety: values and pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.hpp"

namespace sluice::cli {

class UsageError : public Error {
 public:
  using Error::Error;
};

// The value of an integer flag, e.g. `--threads`. Throws UsageError SLU-CLI-003: "`--threads`: `abc` is not a
// number" for anything but an optional '-' and decimal digits; "`--threads`: `-1` is out of range (0 to 99)"
// for a number outside [min, max], however many digits it has.
int ParseIntegerFlag(std::string_view flag, std::string_view text, int min, int max);

// The value of a decimal flag, e.g. `--wait-timeout 1.5`: like ParseIntegerFlag, with an optional fraction
// (digits, '.', digits). Exponents, "inf" and "nan" are not numbers here.
double ParseDecimalFlag(std::string_view flag, std::string_view text, int min, int max);

// SLU-CLI-002: `word` is not one of `commands` (empty `word`: no command was given). Lists the commands.
UsageError UnknownCommand(const std::string& word, const std::vector<std::string>& commands);

// Whether each of `error`'s diagnostics is about what was typed: a selection (SLU-SELECT-*), a partition key
// (SLU-PARTITION-*, except -004: a model with no complete partition yet is the project's, whatever was typed) or
// `--vars` (SLU-CONFIG-008).
bool IsAboutArguments(const Error& error);

// Calls `f` and returns its result; an Error it throws that IsAboutArguments is rethrown as a UsageError.
template <typename F>
auto CheckingArguments(F&& f) {
  try {
    return f();
  } catch (const UsageError&) {
    throw;
  } catch (const Error& error) {
    if (IsAboutArguments(error)) throw UsageError(error.diagnostics());
    throw;
  }
}

}  // namespace sluice::cli
