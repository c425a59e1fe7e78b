#include "project/config/templating.hpp"

#include <cstdlib>
#include <vector>

namespace sluice {

namespace {

constexpr const char* kEnvironmentPrefix = "ENV:";

// The text of `token` for `${token}` in `text` at `begin` (which points at `$`), or nullopt when no
// token starts there: a token is `${`, one or more characters other than `{` `}`, then `}`.
std::optional<std::string> TokenAt(const std::string& text, size_t begin, size_t* end) {
  if (begin + 1 >= text.size() || text[begin] != '$' || text[begin + 1] != '{') return std::nullopt;
  size_t at = begin + 2;
  while (at < text.size() && text[at] != '{' && text[at] != '}') ++at;
  if (at >= text.size() || text[at] != '}' || at == begin + 2) return std::nullopt;
  *end = at + 1;
  return text.substr(begin + 2, at - begin - 2);
}

std::string ScalarText(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  return value.dump();  // null, true/false, numbers as JSON writes them
}

// How messages name the value being expanded.
std::string Subject(const std::string& field) { return field.empty() ? "this value" : "'" + field + "'"; }

std::string KnownNames(const std::map<std::string, ValueOrigin>& origins) {
  std::string names;
  for (const auto& [name, origin] : origins) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

ValueOrigin OriginIn(const SourceLocation& at, const std::string& file_text) {
  return {at, MakeDiagnostic({}, {}, at, {}, file_text).source_line};
}

void FailAt(const ValueOrigin& origin, std::string code, std::string message, std::string hint) {
  throw Error(Diagnostic{std::move(code), std::move(message), origin.at, std::move(hint), origin.line});
}

void CheckTemplateKeys(const nlohmann::json& value, const std::string& field, const ValueOrigin& origin) {
  if (value.is_object()) {
    for (const auto& [key, item] : value.items()) {
      if (key.find("${") != std::string::npos) {
        FailAt(origin, "SLU-TEMPLATE-006", Subject(field) + " has a mapping key containing '${'",
               "mapping keys are never interpolated; write the key literally");
      }
      CheckTemplateKeys(item, field + "." + key, origin);
    }
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i)
      CheckTemplateKeys(value[i], field + "[" + std::to_string(i) + "]", origin);
  }
}

// Variable resolution in progress (constructor only): the raw values, the chain of variables being
// resolved (for cycles), and, for the current variable, the first unset environment variable and the first
// environment variable it reads (set or not). The results are written through `values`, `deferred` and
// `environment_sources`, which point at the scope under construction.
struct TemplateScope::Resolution {
  const std::map<std::string, ConfigValue>& raw;
  nlohmann::json& values;
  std::map<std::string, std::string>& deferred;
  std::map<std::string, std::string>& environment_sources;
  std::vector<std::string> stack;
  std::optional<std::string> missing_environment;
  std::optional<std::string> read_environment;
};

TemplateScope::TemplateScope() : environment_(ProcessEnvironment()) {}

TemplateScope::TemplateScope(const std::map<std::string, ConfigValue>& variables, EnvironmentLookup environment)
    : environment_(environment ? std::move(environment) : ProcessEnvironment()) {
  for (const auto& [name, variable] : variables) {
    origins_.emplace(name, variable.origin);
    CheckTemplateKeys(variable.value, "vars." + name, variable.origin);
  }
  Resolution resolution{variables, values_, deferred_, environment_sources_, {}, std::nullopt, std::nullopt};
  for (const auto& [name, variable] : variables) {
    if (!values_.contains(name) && !deferred_.count(name)) {
      ResolveVariable(name, "vars." + name, variable.origin, resolution);
    }
  }
}

void TemplateScope::ResolveVariable(const std::string& name, const std::string& field, const ValueOrigin& origin,
                                    Resolution& resolution) const {
  auto it = resolution.raw.find(name);
  if (it == resolution.raw.end()) {
    FailAt(origin, "SLU-TEMPLATE-001", Subject(field) + " references unknown project variable '" + name + "'",
           origins_.empty() ? "define it under [vars] or pass it with --vars"
                            : "known variables: " + KnownNames(origins_));
  }
  std::optional<std::string> outer_missing = std::move(resolution.missing_environment);
  std::optional<std::string> outer_read = std::move(resolution.read_environment);
  resolution.missing_environment.reset();
  resolution.read_environment.reset();
  resolution.stack.push_back(name);
  nlohmann::json value = ExpandValue(it->second.value, "vars." + name, it->second.origin, &resolution);
  resolution.stack.pop_back();
  if (resolution.read_environment) resolution.environment_sources[name] = *resolution.read_environment;
  if (resolution.missing_environment) {
    resolution.deferred[name] = *resolution.missing_environment;
  } else {
    resolution.values[name] = std::move(value);
  }
  resolution.missing_environment = std::move(outer_missing);
  resolution.read_environment = std::move(outer_read);
}

nlohmann::json TemplateScope::Expand(const nlohmann::json& value, const std::string& field,
                                     const ValueOrigin& origin) const {
  CheckTemplateKeys(value, field, origin);
  return ExpandValue(value, field, origin, nullptr);
}

std::string TemplateScope::ExpandString(const std::string& text, const std::string& field,
                                        const ValueOrigin& origin) const {
  nlohmann::json value = ExpandValue(text, field, origin, nullptr);
  if (!value.is_string()) {
    FailAt(origin, "SLU-TEMPLATE-007",
           Subject(field) + " must resolve to a string, not " + std::string(value.type_name()),
           "a value that is exactly \"${name}\" takes the variable's type; embed it in text or make the variable a "
           "string");
  }
  return value.get<std::string>();
}

std::function<std::string(const std::string&, const SourceLocation&)> TemplateScope::StringExpander() const {
  return [scope = *this](const std::string& text, const SourceLocation& at) {
    return scope.ExpandString(text, "", ValueOrigin{at, {}});
  };
}

nlohmann::json TemplateScope::ExpandValue(const nlohmann::json& value, const std::string& field,
                                          const ValueOrigin& origin, Resolution* resolution) const {
  if (value.is_string()) return ExpandText(value.get<std::string>(), field, origin, resolution);
  if (value.is_array()) {
    nlohmann::json result = nlohmann::json::array();
    for (size_t i = 0; i < value.size(); ++i) {
      result.push_back(ExpandValue(value[i], field + "[" + std::to_string(i) + "]", origin, resolution));
    }
    return result;
  }
  if (value.is_object()) {
    nlohmann::json result = nlohmann::json::object();
    for (const auto& [key, item] : value.items())
      result[key] = ExpandValue(item, field + "." + key, origin, resolution);
    return result;
  }
  return value;
}

nlohmann::json TemplateScope::ExpandText(const std::string& text, const std::string& field, const ValueOrigin& origin,
                                         Resolution* resolution) const {
  size_t end = 0;
  if (std::optional<std::string> whole = TokenAt(text, 0, &end); whole && end == text.size()) {
    return TokenValue(*whole, field, origin, resolution);
  }
  std::string rendered;
  for (size_t at = 0; at < text.size();) {
    std::optional<std::string> token = TokenAt(text, at, &end);
    if (!token) {
      rendered += text[at++];
      continue;
    }
    nlohmann::json value = TokenValue(*token, field, origin, resolution);
    if (value.is_structured()) {
      FailAt(origin, "SLU-TEMPLATE-005",
             Subject(field) + " cannot interpolate a list or map into text (${" + *token + "})",
             "use the token as the whole value (\"${" + *token + "}\") or read the variable in a macro");
    }
    rendered += ScalarText(value);
    at = end;
  }
  return rendered;
}

nlohmann::json TemplateScope::TokenValue(const std::string& token, const std::string& field, const ValueOrigin& origin,
                                         Resolution* resolution) const {
  if (token.rfind(kEnvironmentPrefix, 0) == 0) {
    std::string name = token.substr(std::string(kEnvironmentPrefix).size());
    if (!name.empty()) {
      if (resolution != nullptr && !resolution->read_environment) resolution->read_environment = name;
      if (std::optional<std::string> value = environment_(name)) return *value;
      if (resolution != nullptr) {  // inside vars: deferred until a field uses the variable
        if (!resolution->missing_environment) resolution->missing_environment = name;
        return nullptr;
      }
    }
    FailAt(origin, "SLU-TEMPLATE-003", Subject(field) + " references missing environment variable '" + name + "'",
           name.empty() ? "write ${ENV:NAME}" : "set " + name + " in the environment");
  }
  if (size_t colon = token.find(':'); colon != std::string::npos) {
    FailAt(origin, "SLU-TEMPLATE-002",
           Subject(field) + " uses unsupported interpolation namespace '" + token.substr(0, colon) + "'",
           "write ${name} for a project variable or ${ENV:NAME} for an environment variable");
  }
  if (resolution != nullptr) {
    for (size_t i = 0; i < resolution->stack.size(); ++i) {
      if (resolution->stack[i] != token) continue;
      std::string cycle;
      for (size_t j = i; j < resolution->stack.size(); ++j) cycle += resolution->stack[j] + " -> ";
      FailAt(origin, "SLU-TEMPLATE-004", "variable interpolation cycle: " + cycle + token,
             "a variable cannot depend on itself; replace one reference with a value");
    }
    if (!resolution->values.contains(token) && !resolution->deferred.count(token)) {
      ResolveVariable(token, field, origin, *resolution);
    }
    if (auto it = resolution->environment_sources.find(token);
        it != resolution->environment_sources.end() && !resolution->read_environment) {
      resolution->read_environment = it->second;
    }
    if (auto it = resolution->deferred.find(token); it != resolution->deferred.end()) {
      if (!resolution->missing_environment) resolution->missing_environment = it->second;
      return nullptr;
    }
    return resolution->values.at(token);
  }
  if (auto it = deferred_.find(token); it != deferred_.end()) {
    std::string where = origins_.count(token) && origins_.at(token).at.known()
                            ? " (vars." + token + " at " + origins_.at(token).at.file + ":" +
                                  std::to_string(origins_.at(token).at.line) + ")"
                            : "";
    FailAt(origin, "SLU-TEMPLATE-003",
           Subject(field) + " uses variable '" + token + "', which references missing environment variable '" +
               it->second + "'" + where,
           "set " + it->second + " in the environment, or override " + token + " with --vars");
  }
  if (!values_.contains(token)) {
    FailAt(origin, "SLU-TEMPLATE-001", Subject(field) + " references unknown project variable '" + token + "'",
           origins_.empty() ? "define it under [vars] or pass it with --vars"
                            : "known variables: " + KnownNames(origins_));
  }
  return values_.at(token);
}

}  // namespace sluice
