// RequestError: an operation refused the values it was given (a flag combination, a key that names nothing, a
// malformed id) before doing anything. Faces render it like any sluice::Error; the CLI exits 2 for it (a usage
// error), the web UI answers 400.
// Thread-safety: a value.
#pragma once

#include "core/diagnostic.hpp"

namespace sluice::service {

class RequestError : public Error {
 public:
  using Error::Error;
};

// Whether each of `error`'s diagnostics is about the request's values: a selection (SLU-SELECT-*), a partition key
// (SLU-PARTITION-*, except -004: a model with no complete partition yet is the project's, whatever was asked) or
// `--vars` (SLU-CONFIG-008).
bool IsAboutArguments(const Error& error);

// Calls `f` and returns its result; an Error it throws that IsAboutArguments is rethrown as a RequestError.
template <typename F>
auto CheckingArguments(F&& f) {
  try {
    return f();
  } catch (const RequestError&) {
    throw;
  } catch (const Error& error) {
    if (IsAboutArguments(error)) throw RequestError(error.diagnostics());
    throw;
  }
}

// Calls `f`; any Error it throws is about the request's values (an argument's form), so it becomes a RequestError.
template <typename F>
auto AsRequestError(F&& f) {
  try {
    return f();
  } catch (const RequestError&) {
    throw;
  } catch (const Error& error) {
    throw RequestError(error.diagnostics());
  }
}

}  // namespace sluice::service
