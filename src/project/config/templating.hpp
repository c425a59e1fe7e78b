// `${…}` templating of configuration values (StreamBuild reference §2.6).
//
//   ${name}       a project variable (vars: project < target < local target < local < --vars)
//   ${ENV:NAME}   an environment variable
//
// A token is `${` + one or more characters other than `{` `}` + `}`; anything else (`${}`, a lone `${`)
// is literal text. Any other `ns:` prefix is an error. A string that is exactly one token takes the
// value's type (`"${port}"` with port = 8123 is the integer 8123); tokens embedded in text are rendered as
// text (`null`, `true`/`false`, numbers as written), and a list or map cannot be embedded. Lists and maps
// are expanded element by element; a mapping key may not contain `${`.
//
// Variables may reference variables (a cycle is an error naming it, `a -> b -> a`). An unknown variable or
// namespace inside vars is an error even when unused. A missing environment variable inside vars is
// deferred: the variable is left out of `variables()` and using it from a field is the error.
//
// Whether a variable's value is taken from the environment is a property of the variable, decided by its
// definition and not by the environment: a variable that reads `${ENV:…}`, directly or through other
// variables, anywhere in its value (a list or map counts as a whole), is listed by `environment_sources()`,
// set or not. Such values may be secrets; macros are not given them (project/macros).
//
// Errors (located at the value being expanded, with its line for the caret):
//   SLU-TEMPLATE-001  unknown project variable
//   SLU-TEMPLATE-002  unsupported namespace (only ENV: exists)
//   SLU-TEMPLATE-003  missing environment variable (directly, or through a deferred variable)
//   SLU-TEMPLATE-004  variable cycle
//   SLU-TEMPLATE-005  a list or map embedded into text
//   SLU-TEMPLATE-006  `${` in a mapping key
//   SLU-TEMPLATE-007  a field's expanded value has the wrong type (e.g. must resolve to a string)
// Messages name fields, variables and environment variables, never values (they may be secrets).
// Thread-safety: a TemplateScope is immutable after construction; share it freely. The environment lookup
// it holds must be safe to call from the threads that use the scope.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/diagnostic.hpp"
#include "core/environment.hpp"

namespace sluice {

// Where a configuration value was written: its location and that line's text (for the caret snippet).
// A value from the command line has an empty location.
struct ValueOrigin {
  SourceLocation at;
  std::string line;
};

// The origin of a value at `at` in a file whose full text is `file_text`.
ValueOrigin OriginIn(const SourceLocation& at, const std::string& file_text);

// A raw (unexpanded) configuration value and where it was written.
struct ConfigValue {
  nlohmann::json value;
  ValueOrigin origin;
};

// Throws Error(code, message, hint) located at `origin`.
[[noreturn]] void FailAt(const ValueOrigin& origin, std::string code, std::string message, std::string hint);

// Throws SLU-TEMPLATE-006 when a key of `value` (at any depth) contains `${`; `field` names it in messages.
void CheckTemplateKeys(const nlohmann::json& value, const std::string& field, const ValueOrigin& origin);

class TemplateScope {
 public:
  // No variables, the process environment.
  TemplateScope();

  // Resolves every variable of `variables` (the merged raw values, name → value) against each other and
  // `environment` (empty: the process environment). Throws SLU-TEMPLATE-001/-002/-004/-005/-006, located at
  // the variable that fails.
  TemplateScope(const std::map<std::string, ConfigValue>& variables, EnvironmentLookup environment);

  // The resolved variables, an object: what macros see as ctx.variables. Deferred variables are absent.
  const nlohmann::json& variables() const { return values_; }

  // Variables left unresolved because an environment variable is unset: name → that environment variable.
  const std::map<std::string, std::string>& deferred() const { return deferred_; }

  // Every variable whose value is taken from the environment (resolved or deferred): name → the first
  // environment variable its expansion reads, in text order, following variables it uses.
  const std::map<std::string, std::string>& environment_sources() const { return environment_sources_; }

  const EnvironmentLookup& environment() const { return environment_; }

  // Expands every string of `value` (strings inside lists and maps too) for `field` (a dotted key path used
  // in messages, e.g. "targets.dev.database"). Returns the expanded value; throws SLU-TEMPLATE-001…006.
  nlohmann::json Expand(const nlohmann::json& value, const std::string& field, const ValueOrigin& origin) const;

  // Expand() for a field that must be a string: throws SLU-TEMPLATE-007 when the result is not one (e.g.
  // `"${n}"` where n is a number).
  std::string ExpandString(const std::string& text, const std::string& field, const ValueOrigin& origin) const;

  // ExpandString as a callback for loaders that report only a location (e.g. SourceLoadOptions::expand);
  // messages then say "this value". The callback holds a copy of this scope.
  std::function<std::string(const std::string& text, const SourceLocation& at)> StringExpander() const;

 private:
  struct Resolution;
  nlohmann::json ExpandValue(const nlohmann::json& value, const std::string& field, const ValueOrigin& origin,
                             Resolution* resolution) const;
  nlohmann::json ExpandText(const std::string& text, const std::string& field, const ValueOrigin& origin,
                            Resolution* resolution) const;
  nlohmann::json TokenValue(const std::string& token, const std::string& field, const ValueOrigin& origin,
                            Resolution* resolution) const;
  void ResolveVariable(const std::string& name, const std::string& field, const ValueOrigin& origin,
                       Resolution& resolution) const;

  std::map<std::string, ValueOrigin> origins_;  // where each variable was written, for hints
  nlohmann::json values_ = nlohmann::json::object();
  std::map<std::string, std::string> deferred_;
  std::map<std::string, std::string> environment_sources_;
  EnvironmentLookup environment_;
};

}  // namespace sluice
