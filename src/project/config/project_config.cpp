#include "project/config/project_config.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <sstream>
#include <utility>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "project/config/project_config_internal.hpp"

namespace sluice {

// ---- The allowed shape of each file -------------------------------------------------------------------

namespace {

KeyShape Leaf() { return {}; }
KeyShape FreeMap() { return {KeyShape::Kind::kFreeMap, {}, nullptr}; }
KeyShape Table(std::map<std::string, KeyShape> children) {
  return {KeyShape::Kind::kTable, std::move(children), nullptr};
}
KeyShape NamedTables(KeyShape each) {
  return {KeyShape::Kind::kTable, {}, std::make_shared<KeyShape>(std::move(each))};
}

const std::map<std::string, KeyShape>& ConnectionKeys() {
  // dbname and sslmode: PostgreSQL's (docs/postgres.md).
  static const std::map<std::string, KeyShape> keys = {{"host", Leaf()},        {"port", Leaf()},
                                                       {"username", Leaf()},    {"password", Leaf()},
                                                       {"settings", FreeMap()}, {"path", Leaf()},
                                                       // BigQuery (docs/bigquery.md)
                                                       {"project", Leaf()},     {"location", Leaf()},
                                                       {"credentials", Leaf()}, {"api_url", Leaf()},
                                                       {"token_url", Leaf()},
                                                       {"max_concurrent_jobs_per_table", Leaf()},
                                                       // PostgreSQL (docs/postgres.md)
                                                       {"dbname", Leaf()},      {"sslmode", Leaf()}};
  return keys;
}

KeyShape SensorsShape() { return Table({{"enabled", Leaf()}, {"tick_retention_days", Leaf()}}); }
KeyShape AuditsShape() { return Table({{"severity", Leaf()}, {"every", Leaf()}, {"warmup", Leaf()}}); }
KeyShape ReplayOnChangeShape() { return Table({{"breaking", Leaf()}, {"non_breaking", Leaf()}}); }

KeyShape TargetShape(bool with_build) {
  std::map<std::string, KeyShape> keys = {{"database", Leaf()},
                                          {"connection", Table(ConnectionKeys())},
                                          {"vars", FreeMap()},
                                          {"audit_scheduler", Table({{"enabled", Leaf()}})},
                                          {"sensors", SensorsShape()}};
  if (with_build) keys.emplace("build", Table({{"max_pipelines", Leaf()}}));
  return Table(std::move(keys));
}

KeyShape ProjectShape() {
  return Table({
      {"name", Leaf()},
      {"adapter", Leaf()},
      {"default_target", Leaf()},
      {"vars", FreeMap()},
      {"connection", Table(ConnectionKeys())},
      {"targets", NamedTables(TargetShape(true))},
      {"defaults",
       Table({{"managed_source_ttl", Leaf()},
              {"model_ttl", Leaf()},
              {"kafka_broker_list", Leaf()},
              {"pipeline_mode", Leaf()},
              {"replay_on_change", ReplayOnChangeShape()},
              {"bounded_replay_fallback", Leaf()},
              {"freshness", Table({{"warn_after", Leaf()}, {"error_after", Leaf()}})},
              {"audits", AuditsShape()},
              {"deployment_readiness", Table({{"maximum_lag", Leaf()}, {"minimum_staged_row_ratio", Leaf()}})},
              {"run_presumed_failed_after", Leaf()},
              {"sources", Table({{"kafka", Table({{"naming_macro", Leaf()}})}})}})},
      {"naming", Table({{"pipeline_prefix", Leaf()},
                        {"pipeline_naming_macro", Leaf()},
                        {"table_prefix", Leaf()},
                        {"view_prefix", Leaf()}})},
      {"settings", Table({{"virtual_environments", Leaf()}})},
      {"audit_scheduler", Table({{"enabled", Leaf()}})},
      {"sensors", SensorsShape()},
      {"build", Table({{"max_pipelines", Leaf()}})},
      {"state", Table({{"url", Leaf()}})},
  });
}

KeyShape LocalShape() {
  return Table({{"target", Leaf()},
                {"adapter", Leaf()},
                {"defaults", Table({{"pipeline_mode", Leaf()}})},
                {"connection", Table(ConnectionKeys())},
                {"vars", FreeMap()},
                {"targets", NamedTables(TargetShape(false))}});
}

}  // namespace

KeyShape PipelineShape() {
  return Table({
      {"mode", Leaf()},
      {"database", Leaf()},
      {"replay_on_change", ReplayOnChangeShape()},
      {"bounded_replay_fallback", Leaf()},
      {"naming", Table({{"table_prefix", Leaf()}, {"view_prefix", Leaf()}})},
      {"protection", Table({{"warning", Leaf()}, {"confirmation", Leaf()}})},
      {"audit_defaults", AuditsShape()},
      {"execution", Table({{"replay", Table({{"settings", FreeMap()}})}})},
  });
}

// ---- A parsed document and located failures ------------------------------------------------------------

namespace {

SourceLocation At(const TomlDocument& doc, const toml::source_region& region) {
  return {doc.file, static_cast<int>(region.begin.line), static_cast<int>(region.begin.column)};
}

ValueOrigin OriginOf(const TomlDocument& doc, const toml::source_region& region) {
  return OriginIn(At(doc, region), doc.text);
}

}  // namespace

[[noreturn]] void Fail(const TomlDocument& doc, const toml::source_region& region, std::string code,
                       std::string message, std::string hint) {
  throw Error(MakeDiagnostic(std::move(code), std::move(message), At(doc, region), std::move(hint), doc.text));
}

TomlDocument ReadToml(const std::filesystem::path& root, const std::string& relative) {
  return {relative, ReadFileInside(root, relative)};
}

toml::table ParseToml(const TomlDocument& doc) {
  try {
    return toml::parse(doc.text, doc.file);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw Error(MakeDiagnostic("SLU-CONFIG-001", "malformed TOML: " + std::string(e.description()),
                               {doc.file, static_cast<int>(begin.line), static_cast<int>(begin.column)},
                               "see https://toml.io for the syntax", doc.text));
  }
}

namespace {

void CheckLiteralKey(const TomlDocument& doc, const toml::key& key, const std::string& full) {
  if (key.str().find("${") != std::string_view::npos) {
    Fail(doc, key.source(), "SLU-TEMPLATE-006", "'" + full + "' is a mapping key containing '${'",
         "mapping keys are never interpolated; write the key literally");
  }
}

// Keys of free maps may be anything except templates, at any depth.
void CheckLiteralKeys(const TomlDocument& doc, const toml::node& node, const std::string& path) {
  if (const toml::table* table = node.as_table()) {
    for (auto&& [key, child] : *table) {
      std::string full = path + "." + std::string(key.str());
      CheckLiteralKey(doc, key, full);
      CheckLiteralKeys(doc, child, full);
    }
  } else if (const toml::array* array = node.as_array()) {
    for (const toml::node& item : *array) CheckLiteralKeys(doc, item, path);
  }
}

}  // namespace

void CheckShape(const TomlDocument& doc, const toml::table& table, const KeyShape& shape, const std::string& path) {
  for (auto&& [key, node] : table) {
    std::string name(key.str());
    std::string full = path.empty() ? name : path + "." + name;
    CheckLiteralKey(doc, key, full);
    const KeyShape* child = nullptr;
    if (auto it = shape.children.find(name); it != shape.children.end()) {
      child = &it->second;
    } else if (shape.any_key_shape) {
      child = shape.any_key_shape.get();
    }
    if (child == nullptr) {
      std::string known;
      for (const auto& [k, v] : shape.children) known += (known.empty() ? "" : ", ") + k;
      Fail(doc, key.source(), "SLU-CONFIG-002", "unknown key '" + full + "' in " + doc.file,
           known.empty() ? "remove it" : "known keys here: " + known);
    }
    if (child->kind == KeyShape::Kind::kLeaf) {
      CheckLiteralKeys(doc, node, full);
      continue;
    }
    const toml::table* nested = node.as_table();
    if (nested == nullptr) {
      Fail(doc, node.source(), "SLU-CONFIG-003", "'" + full + "' must be a table", "write it as [" + full + "]");
    }
    if (child->kind == KeyShape::Kind::kTable) {
      CheckShape(doc, *nested, *child, full);
    } else {
      CheckLiteralKeys(doc, node, full);
    }
  }
}

// ---- Values ------------------------------------------------------------------------------------------

namespace {

// `prefix` is the dotted path of the table holding `key` ("" at the top, else ending in ".").
std::string Field(const std::string& prefix, const std::string& key) { return prefix + key; }

}  // namespace

nlohmann::json ToJson(const toml::node& node) {
  if (const toml::table* table = node.as_table()) {
    nlohmann::json object = nlohmann::json::object();
    for (auto&& [key, child] : *table) object[std::string(key.str())] = ToJson(child);
    return object;
  }
  if (const toml::array* array = node.as_array()) {
    nlohmann::json list = nlohmann::json::array();
    for (const toml::node& item : *array) list.push_back(ToJson(item));
    return list;
  }
  if (auto s = node.value_exact<std::string>()) return *s;
  if (auto i = node.value_exact<int64_t>()) return *i;
  if (auto d = node.value_exact<double>()) return *d;
  if (auto b = node.value_exact<bool>()) return *b;
  std::ostringstream text;  // dates and times: their TOML text
  if (const auto* date = node.as_date()) text << date->get();
  if (const auto* time = node.as_time()) text << time->get();
  if (const auto* date_time = node.as_date_time()) text << date_time->get();
  return text.str();
}

namespace {

ConfigValue ValueOf(const TomlDocument& doc, const toml::node& node) {
  return {ToJson(node), OriginOf(doc, node.source())};
}

}  // namespace

[[noreturn]] void FailType(const TomlDocument& doc, const toml::node& node, const std::string& field,
                           const std::string& expected, const std::string& hint) {
  Fail(doc, node.source(), "SLU-CONFIG-003", "'" + field + "' must be " + expected, hint);
}

std::optional<std::string> OptionalString(const TomlDocument& doc, const toml::table& table, const std::string& key,
                                          const std::string& prefix) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  if (auto value = node->value_exact<std::string>()) return *value;
  FailType(doc, *node, Field(prefix, key), "a string", "quote the value, e.g. " + key + " = \"...\"");
}

std::string Trim(const std::string& text) {
  size_t begin = text.find_first_not_of(" \t\r\n\f\v");
  if (begin == std::string::npos) return {};
  size_t end = text.find_last_not_of(" \t\r\n\f\v");
  return text.substr(begin, end - begin + 1);
}

namespace {

// A string that must not be blank; kept trimmed, as StreamBuild does.
std::optional<ConfigValue> OptionalText(const TomlDocument& doc, const toml::table& table, const std::string& key,
                                        const std::string& prefix) {
  std::optional<std::string> value = OptionalString(doc, table, key, prefix);
  if (!value) return std::nullopt;
  const toml::node& node = *table.get(key);
  std::string trimmed = Trim(*value);
  if (trimmed.empty()) {
    Fail(doc, node.source(), "SLU-CONFIG-007", "'" + Field(prefix, key) + "' must be a non-empty string",
         "remove the key or give it a value");
  }
  return ConfigValue{trimmed, OriginOf(doc, node.source())};
}

// A string that may be empty (naming prefixes).
std::optional<ConfigValue> OptionalPrefix(const TomlDocument& doc, const toml::table& table, const std::string& key,
                                          const std::string& prefix) {
  std::optional<std::string> value = OptionalString(doc, table, key, prefix);
  if (!value) return std::nullopt;
  return ConfigValue{*value, OriginOf(doc, table.get(key)->source())};
}

std::string RequiredString(const TomlDocument& doc, const toml::table& table, const std::string& key) {
  std::optional<std::string> value = OptionalString(doc, table, key, "");
  if (!value || Trim(*value).empty()) {
    throw Error(MakeDiagnostic("SLU-CONFIG-004", "'" + key + "' is required in " + doc.file, {doc.file, 1, 1},
                               "add `" + key + " = \"...\"` at the top of the file", doc.text));
  }
  return Trim(*value);
}

std::optional<bool> OptionalBool(const TomlDocument& doc, const toml::table& table, const std::string& key,
                                 const std::string& prefix) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  if (auto value = node->value_exact<bool>()) return *value;
  FailType(doc, *node, Field(prefix, key), "true or false", "write " + key + " = true");
}

// An integer ≥ minimum (bool is not an integer in TOML).
std::optional<Located<int64_t>> OptionalInteger(const TomlDocument& doc, const toml::table& table,
                                                const std::string& key, const std::string& prefix, int64_t minimum) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  std::string what = minimum > 0 ? "a positive integer" : "a non-negative integer";
  auto value = node->value_exact<int64_t>();
  if (!value)
    FailType(doc, *node, Field(prefix, key), what,
             "write " + key + " = " + std::to_string(std::max<int64_t>(minimum, 1)));
  if (*value < minimum) {
    Fail(doc, node->source(), "SLU-CONFIG-007", "'" + Field(prefix, key) + "' must be " + what,
         "write " + key + " = " + std::to_string(std::max<int64_t>(minimum, 1)));
  }
  return Located<int64_t>{*value, OriginOf(doc, node->source())};
}

template <typename T>
std::optional<Located<T>> OptionalChoice(const TomlDocument& doc, const toml::table& table, const std::string& key,
                                         const std::string& prefix,
                                         const std::vector<std::pair<const char*, T>>& choices) {
  std::optional<std::string> value = OptionalString(doc, table, key, prefix);
  if (!value) return std::nullopt;
  const toml::node& node = *table.get(key);
  std::string shown;
  for (const auto& [text, choice] : choices) {
    if (*value == text) return Located<T>{choice, OriginOf(doc, node.source())};
    shown += (shown.empty() ? "" : " | ") + std::string(text);
  }
  Fail(doc, node.source(), "SLU-CONFIG-007", "'" + Field(prefix, key) + "' is \"" + *value + "\"; expected " + shown,
       "use one of: " + shown);
}

const std::vector<std::pair<const char*, PipelineMode>>& ModeChoices() {
  static const std::vector<std::pair<const char*, PipelineMode>> choices = {{"direct", PipelineMode::kDirect},
                                                                            {"virtual", PipelineMode::kVirtual}};
  return choices;
}

}  // namespace

std::optional<Located<PipelineMode>> OptionalPipelineMode(const TomlDocument& doc, const toml::table& table,
                                                          const std::string& key, const std::string& prefix) {
  return OptionalChoice(doc, table, key, prefix, ModeChoices());
}

namespace {

// `<int><d|h|m|s>` in seconds, or nullopt when `text` has another shape.
std::optional<int64_t> DurationSeconds(const std::string& text) {
  if (text.size() < 2 || text.size() > 16) return std::nullopt;
  int64_t amount = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
    amount = amount * 10 + (text[i] - '0');
  }
  switch (text.back()) {
    case 'd':
      return amount * 86400;
    case 'h':
      return amount * 3600;
    case 'm':
      return amount * 60;
    case 's':
      return amount;
    default:
      return std::nullopt;
  }
}

std::optional<Located<int64_t>> OptionalDuration(const TomlDocument& doc, const toml::table& table,
                                                 const std::string& key, const std::string& prefix, bool allow_zero) {
  const toml::node* node = table.get(key);
  if (node == nullptr) return std::nullopt;
  const std::string field = Field(prefix, key);
  const std::string hint = "write a whole number and a unit (s, m, h or d), e.g. " + key + " = \"30m\"";
  auto text = node->value_exact<std::string>();
  if (!text) FailType(doc, *node, field, "a duration string such as \"30s\", \"5m\", \"2h\" or \"1d\"", hint);
  std::optional<int64_t> seconds = DurationSeconds(*text);
  if (!seconds) {
    Fail(doc, node->source(), "SLU-CONFIG-007",
         "'" + field + "' is \"" + *text + "\"; expected a duration such as \"30s\", \"5m\", \"2h\" or \"1d\"", hint);
  }
  if (*seconds == 0 && !allow_zero) {
    Fail(doc, node->source(), "SLU-CONFIG-007", "'" + field + "' must be greater than zero", hint);
  }
  return Located<int64_t>{*seconds, OriginOf(doc, node->source())};
}

}  // namespace

// ---- Shared sections -----------------------------------------------------------------------------------

std::optional<Located<ReplayOnChange>> ParseReplayOnChange(const TomlDocument& doc, const toml::table& parent,
                                                           const std::string& prefix) {
  const toml::table* table = parent["replay_on_change"].as_table();
  if (table == nullptr) return std::nullopt;
  ReplayOnChange policy;
  for (const char* kind : {"breaking", "non_breaking"}) {
    std::string inner = prefix + "replay_on_change.";
    std::optional<std::string> value = OptionalString(doc, *table, kind, inner);
    if (!value) continue;
    ReplayRule rule;
    if (*value != "full") {
      std::optional<int64_t> seconds =
          value->rfind("bounded-", 0) == 0 ? DurationSeconds(value->substr(8)) : std::nullopt;
      if (!seconds) {
        Fail(doc, table->get(kind)->source(), "SLU-CONFIG-007",
             "'" + inner + kind + "' is \"" + *value + "\"; expected full or bounded-<N><d|h|m|s>",
             "e.g. " + std::string(kind) + " = \"bounded-7d\"");
      }
      rule = ReplayRule{true, *seconds};
    }
    (std::string(kind) == "breaking" ? policy.breaking : policy.non_breaking) = rule;
  }
  return Located<ReplayOnChange>{policy, OriginOf(doc, parent.get("replay_on_change")->source())};
}

std::optional<Located<BoundedReplayFallback>> ParseFallback(const TomlDocument& doc, const toml::table& table,
                                                            const std::string& prefix) {
  return OptionalChoice<BoundedReplayFallback>(
      doc, table, "bounded_replay_fallback", prefix,
      {{"full", BoundedReplayFallback::kFull},
       {"bounded_without_history", BoundedReplayFallback::kBoundedWithoutHistory}});
}

AuditDefaults ParseAuditDefaults(const TomlDocument& doc, const toml::table* table, const std::string& prefix) {
  AuditDefaults audits;
  if (table == nullptr) return audits;
  if (auto severity = OptionalChoice<AuditSeverity>(
          doc, *table, "severity", prefix, {{"error", AuditSeverity::kError}, {"warning", AuditSeverity::kWarning}})) {
    audits.severity = severity->value;
  }
  if (auto every = OptionalDuration(doc, *table, "every", prefix, false)) audits.every_seconds = every->value;
  if (auto warmup = OptionalDuration(doc, *table, "warmup", prefix, true)) audits.warmup_seconds = warmup->value;
  return audits;
}

namespace {

SensorSettings ParseSensors(const TomlDocument& doc, const toml::table* table, const std::string& prefix) {
  SensorSettings sensors;
  if (table == nullptr) return sensors;
  sensors.enabled = OptionalBool(doc, *table, "enabled", prefix);
  if (auto days = OptionalInteger(doc, *table, "tick_retention_days", prefix, 0))
    sensors.tick_retention_days = days->value;
  return sensors;
}

std::optional<bool> ParseAuditScheduler(const TomlDocument& doc, const toml::table* table, const std::string& prefix) {
  return table == nullptr ? std::nullopt : OptionalBool(doc, *table, "enabled", prefix);
}

std::optional<Located<int64_t>> ParseBuild(const TomlDocument& doc, const toml::table* table,
                                           const std::string& prefix) {
  return table == nullptr ? std::nullopt : OptionalInteger(doc, *table, "max_pipelines", prefix, 1);
}

// Raw connection values, type-checked; templates are expanded only by ExpandConnection.
std::map<std::string, ConfigValue> ParseConnection(const TomlDocument& doc, const toml::table* table,
                                                   const std::string& path) {
  std::map<std::string, ConfigValue> result;
  if (table == nullptr) return result;
  for (auto&& [key, node] : *table) {
    std::string name(key.str());
    std::string field = path + "." + name;
    if (name == "settings") {
      for (auto&& [setting, value] : *node.as_table()) {
        if (!value.is_string() && !value.is_integer() && !value.is_floating_point() && !value.is_boolean()) {
          FailType(doc, value, field + "." + std::string(setting.str()), "a string, number or boolean",
                   "connection settings are scalars");
        }
      }
    } else if (name == "port") {
      if (!node.is_integer() && !node.is_string()) FailType(doc, node, field, "an integer", "write port = 8123");
    } else if (name == "max_concurrent_jobs_per_table") {
      if (!node.is_integer() && !node.is_string()) FailType(doc, node, field, "an integer", "write " + name + " = 2");
    } else if (!node.is_string()) {
      FailType(doc, node, field, "a string", "quote the value, e.g. " + name + " = \"...\"");
    }
    result.emplace(name, ValueOf(doc, node));
  }
  return result;
}

std::map<std::string, ConfigValue> ParseVars(const TomlDocument& doc, const toml::table* table) {
  std::map<std::string, ConfigValue> vars;
  if (table == nullptr) return vars;
  for (auto&& [key, node] : *table) vars.emplace(std::string(key.str()), ValueOf(doc, node));
  return vars;
}

std::map<std::string, TargetConfig> ParseTargets(const TomlDocument& doc, const toml::table& root) {
  std::map<std::string, TargetConfig> targets;
  const toml::table* table = root["targets"].as_table();
  if (table == nullptr) return targets;
  for (auto&& [key, node] : *table) {
    std::string name(key.str());
    std::string prefix = "targets." + name + ".";
    const toml::table& target = *node.as_table();
    TargetConfig config;
    config.database = OptionalText(doc, target, "database", prefix);
    config.connection = ParseConnection(doc, target["connection"].as_table(), "targets." + name + ".connection");
    config.vars = ParseVars(doc, target["vars"].as_table());
    config.audit_scheduler_enabled =
        ParseAuditScheduler(doc, target["audit_scheduler"].as_table(), prefix + "audit_scheduler.");
    config.sensors = ParseSensors(doc, target["sensors"].as_table(), prefix + "sensors.");
    config.max_pipelines = ParseBuild(doc, target["build"].as_table(), prefix + "build.");
    targets.emplace(name, std::move(config));
  }
  return targets;
}

ProjectDefaults ParseDefaults(const TomlDocument& doc, const toml::table* table) {
  ProjectDefaults defaults;
  if (table == nullptr) return defaults;
  const std::string prefix = "defaults.";
  defaults.managed_source_ttl = OptionalText(doc, *table, "managed_source_ttl", prefix);
  defaults.model_ttl = OptionalText(doc, *table, "model_ttl", prefix);
  defaults.kafka_broker_list = OptionalText(doc, *table, "kafka_broker_list", prefix);
  if (const toml::table* kafka = (*table)["sources"]["kafka"].as_table()) {
    defaults.kafka_naming_macro = OptionalText(doc, *kafka, "naming_macro", "defaults.sources.kafka.");
  }
  defaults.pipeline_mode = OptionalPipelineMode(doc, *table, "pipeline_mode", prefix);
  defaults.replay_on_change = ParseReplayOnChange(doc, *table, prefix);
  defaults.bounded_replay_fallback = ParseFallback(doc, *table, prefix);
  if (const toml::table* freshness = (*table)["freshness"].as_table()) {
    FreshnessDefaults policy;
    auto warn = OptionalDuration(doc, *freshness, "warn_after", "defaults.freshness.", true);
    auto error = OptionalDuration(doc, *freshness, "error_after", "defaults.freshness.", true);
    if (!warn && !error) {
      Fail(doc, table->get("freshness")->source(), "SLU-CONFIG-007",
           "'defaults.freshness' must set at least one of warn_after or error_after", "e.g. warn_after = \"1h\"");
    }
    if (warn && error && warn->value > error->value) {
      Fail(doc, freshness->get("warn_after")->source(), "SLU-CONFIG-007",
           "'defaults.freshness.warn_after' must not exceed error_after", "warn before the error, e.g. 1h and 6h");
    }
    if (warn) {
      policy.warn_after = freshness->get("warn_after")->value_exact<std::string>();
      policy.warn_after_seconds = warn->value;
    }
    if (error) {
      policy.error_after = freshness->get("error_after")->value_exact<std::string>();
      policy.error_after_seconds = error->value;
    }
    defaults.freshness = policy;
  }
  defaults.audits = ParseAuditDefaults(doc, (*table)["audits"].as_table(), "defaults.audits.");
  if (const toml::table* readiness = (*table)["deployment_readiness"].as_table()) {
    const std::string inner = "defaults.deployment_readiness.";
    if (auto lag = OptionalDuration(doc, *readiness, "maximum_lag", inner, true)) {
      defaults.deployment_readiness.maximum_lag_seconds = lag->value;
    }
    if (const toml::node* ratio = readiness->get("minimum_staged_row_ratio")) {
      std::optional<double> value = ratio->is_integer()
                                        ? std::optional<double>(static_cast<double>(*ratio->value_exact<int64_t>()))
                                        : ratio->value_exact<double>();
      if (!value) FailType(doc, *ratio, inner + "minimum_staged_row_ratio", "a number from 0 to 1", "e.g. 0.5");
      if (!(*value >= 0.0 && *value <= 1.0)) {
        Fail(doc, ratio->source(), "SLU-CONFIG-007",
             "'" + inner + "minimum_staged_row_ratio' must be a number from 0 to 1", "e.g. 0.5");
      }
      defaults.deployment_readiness.minimum_staged_row_ratio = *value;
    }
  }
  if (auto after = OptionalDuration(doc, *table, "run_presumed_failed_after", prefix, false)) {
    if (after->value <= 45) {
      Fail(doc, table->get("run_presumed_failed_after")->source(), "SLU-CONFIG-007",
           "'defaults.run_presumed_failed_after' must be longer than 45s",
           "a run is unresponsive after 45s; presume it failed later, e.g. \"10m\"");
    }
    defaults.run_presumed_failed_after_seconds = after->value;
  }
  return defaults;
}

}  // namespace

const char* PipelineModeName(PipelineMode mode) { return mode == PipelineMode::kVirtual ? "virtual" : "direct"; }

// ---- Loading the two project files ---------------------------------------------------------------------

ProjectConfig LoadProjectConfig(const std::filesystem::path& root) {
  for (const char* legacy : {"streambuild_project.yml", "streambuild_local.yml"}) {
    if (std::filesystem::exists(root / legacy)) {
      std::string toml_name = std::string(legacy).substr(0, std::string(legacy).size() - 4) + ".toml";
      throw Error(Diagnostic{"SLU-CONFIG-006",
                             std::string(legacy) + " is not supported",
                             {legacy, 0, 0},
                             "convert it to TOML as " + toml_name,
                             {}});
    }
  }
  TomlDocument doc = ReadToml(root, "streambuild_project.toml");
  toml::table table = ParseToml(doc);
  CheckShape(doc, table, ProjectShape(), "");
  ProjectConfig config;
  config.file = doc.file;
  config.name = RequiredString(doc, table, "name");
  if (config.name.find("${") != std::string::npos) {
    Fail(doc, table.get("name")->source(), "SLU-CONFIG-007", "'name' must be a literal and cannot be interpolated",
         "write the project name itself");
  }
  config.default_target = RequiredString(doc, table, "default_target");
  config.adapter = OptionalText(doc, table, "adapter", "");
  config.vars = ParseVars(doc, table["vars"].as_table());
  config.connection = ParseConnection(doc, table["connection"].as_table(), "connection");
  config.targets = ParseTargets(doc, table);
  if (const toml::table* naming = table["naming"].as_table()) {
    config.naming.pipeline_prefix = OptionalPrefix(doc, *naming, "pipeline_prefix", "naming.");
    config.naming.pipeline_naming_macro = OptionalText(doc, *naming, "pipeline_naming_macro", "naming.");
    config.naming.table_prefix = OptionalPrefix(doc, *naming, "table_prefix", "naming.");
    config.naming.view_prefix = OptionalPrefix(doc, *naming, "view_prefix", "naming.");
  }
  if (const toml::table* settings = table["settings"].as_table()) {
    if (const toml::node* node = settings->get("virtual_environments")) {
      // A boolean, or (the older generation) a template that resolves to one.
      auto text = node->value_exact<std::string>();
      if (!node->is_boolean() && !(text && text->find("${") != std::string::npos)) {
        FailType(doc, *node, "settings.virtual_environments", "true or false", "write virtual_environments = true");
      }
      config.virtual_environments = ValueOf(doc, *node);
    }
  }
  config.defaults = ParseDefaults(doc, table["defaults"].as_table());
  config.audit_scheduler_enabled = ParseAuditScheduler(doc, table["audit_scheduler"].as_table(), "audit_scheduler.");
  config.sensors = ParseSensors(doc, table["sensors"].as_table(), "sensors.");
  config.max_pipelines = ParseBuild(doc, table["build"].as_table(), "build.");
  if (const toml::table* state = table["state"].as_table()) config.state_url = OptionalText(doc, *state, "url", "state.");
  if (!config.max_pipelines) {
    for (const auto& [name, target] : config.targets) {
      if (!target.max_pipelines) continue;
      const ValueOrigin& origin = target.max_pipelines->origin;
      FailAt(origin, "SLU-CONFIG-012",
             "'targets." + name + ".build.max_pipelines' needs a project-level build.max_pipelines",
             "add [build] max_pipelines = <n> as the project default; targets may lower or raise it");
    }
  }
  return config;
}

std::optional<LocalConfig> LoadLocalConfig(const std::filesystem::path& root) {
  if (!std::filesystem::exists(root / "streambuild_local.toml")) return std::nullopt;
  TomlDocument doc = ReadToml(root, "streambuild_local.toml");
  toml::table table = ParseToml(doc);
  CheckShape(doc, table, LocalShape(), "");
  LocalConfig config;
  config.file = doc.file;
  if (auto target = OptionalText(doc, table, "target", "")) config.target = target->value.get<std::string>();
  config.adapter = OptionalText(doc, table, "adapter", "");
  if (const toml::table* defaults = table["defaults"].as_table()) {
    config.pipeline_mode = OptionalPipelineMode(doc, *defaults, "pipeline_mode", "defaults.");
  }
  config.vars = ParseVars(doc, table["vars"].as_table());
  config.connection = ParseConnection(doc, table["connection"].as_table(), "connection");
  config.targets = ParseTargets(doc, table);
  return config;
}

}  // namespace sluice
