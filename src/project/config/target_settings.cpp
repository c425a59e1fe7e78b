// Resolving the target: the precedence of project, target, local and command-line layers (§2.5), then
// `${…}` templating; connection values are expanded only when a command connects (ExpandConnection).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "core/asset_key.hpp"
#include "core/diagnostic.hpp"
#include "project/config/project_config.hpp"
#include "project/relation_name.hpp"

namespace sluice {

namespace {

// What nlohmann's parse error says went wrong, without the input it quotes ("last read: '…'"), which may hold
// secrets: "syntax error while parsing object key - invalid literal; expected string literal".
std::string ParseProblem(const std::string& what) {
  size_t begin = what.find("syntax error");
  if (begin == std::string::npos) begin = what.find(": ") == std::string::npos ? 0 : what.find(": ") + 2;
  std::string problem = what.substr(begin);
  size_t last_read = problem.find("; last read:");
  if (last_read == std::string::npos) return problem;
  size_t expected = problem.find("; expected", last_read);
  return problem.substr(0, last_read) + (expected == std::string::npos ? "" : problem.substr(expected));
}

}  // namespace

std::map<std::string, ConfigValue> ParseVarsOverride(const std::string& vars_json) {
  std::map<std::string, ConfigValue> vars;
  const std::string hint = "pass one JSON object, e.g. --vars '{\"region\": \"eu\", \"batch_size\": 50}'";
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(vars_json);
  } catch (const nlohmann::json::parse_error& e) {
    // Located in the JSON text, which is not shown: it may hold secrets.
    const size_t offset = std::min(e.byte > 0 ? e.byte - 1 : 0, vars_json.size());
    throw Error(Diagnostic{"SLU-CONFIG-008", "--vars is not valid JSON: " + ParseProblem(e.what()),
                           LocationAt("--vars", vars_json, offset), hint, {}});
  }
  if (!parsed.is_object()) {
    const size_t first = std::min(vars_json.find_first_not_of(" \t\r\n"), vars_json.size());
    throw Error(Diagnostic{"SLU-CONFIG-008",
                           "--vars must be one JSON object, not " + std::string(parsed.type_name()),
                           LocationAt("--vars", vars_json, first), hint, {}});
  }
  for (auto& [name, value] : parsed.items()) vars[name] = ConfigValue{value, {}};
  return vars;
}

namespace {

std::string ExpandText(const TemplateScope& scope, const ConfigValue& value, const std::string& field) {
  return scope.ExpandString(value.value.get<std::string>(), field, value.origin);
}

std::optional<std::string> ExpandOptional(const TemplateScope& scope, const std::optional<ConfigValue>& value,
                                          const std::string& field) {
  if (!value) return std::nullopt;
  return ExpandText(scope, *value, field);
}

std::string Where(const ValueOrigin& origin) {
  return origin.at.file + (origin.at.line > 0 ? ":" + std::to_string(origin.at.line) : "");
}

}  // namespace

TargetSettings ResolveTarget(const ProjectConfig& project, const std::optional<LocalConfig>& local,
                             const ConfigInputs& inputs) {
  TargetSettings settings;
  settings.name = inputs.target ? *inputs.target : (local && local->target) ? *local->target : project.default_target;
  settings.project_file = project.file;
  const TargetConfig* project_target = nullptr;
  const TargetConfig* local_target = nullptr;
  if (auto it = project.targets.find(settings.name); it != project.targets.end()) project_target = &it->second;
  if (local) {
    if (auto it = local->targets.find(settings.name); it != local->targets.end()) local_target = &it->second;
  }
  if (project_target == nullptr && local_target == nullptr) {
    std::set<std::string> names;
    for (const auto& [name, target] : project.targets) names.insert(name);
    if (local) {
      for (const auto& [name, target] : local->targets) names.insert(name);
    }
    std::string known;
    for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
    throw Error(Diagnostic{"SLU-CONFIG-005",
                           "unknown target '" + settings.name + "'",
                           {project.file, 0, 0},
                           known.empty() ? "define it as [targets." + settings.name + "]" : "known targets: " + known,
                           {}});
  }

  // Vars, later layers win: project < target < local target < local < --vars.
  std::map<std::string, ConfigValue> vars = project.vars;
  auto merge = [](std::map<std::string, ConfigValue>& into, const std::map<std::string, ConfigValue>& layer) {
    for (const auto& [key, value] : layer) into[key] = value;
  };
  if (project_target) merge(vars, project_target->vars);
  if (local_target) merge(vars, local_target->vars);
  if (local) merge(vars, local->vars);
  if (inputs.vars_json) merge(vars, ParseVarsOverride(*inputs.vars_json));
  settings.templates = TemplateScope(vars, inputs.environment);
  settings.variables = settings.templates.variables();
  settings.environment_variables = settings.templates.environment_sources();
  for (const auto& [name, environment] : settings.environment_variables) settings.variables.erase(name);
  const TemplateScope& scope = settings.templates;

  const std::optional<ConfigValue>& adapter = (local && local->adapter) ? local->adapter : project.adapter;
  settings.adapter = adapter ? ExpandText(scope, *adapter, "adapter") : "clickhouse";

  if (inputs.database) {
    settings.database = *inputs.database;
  } else if (local_target && local_target->database) {
    settings.database = ExpandText(scope, *local_target->database, "targets." + settings.name + ".database");
    settings.database_origin = local_target->database->origin;
  } else if (project_target && project_target->database) {
    settings.database = ExpandText(scope, *project_target->database, "targets." + settings.name + ".database");
    settings.database_origin = project_target->database->origin;
  }
  settings.database_configured = !settings.database.empty();
  if (!settings.database_configured) {
    settings.database = settings.adapter == "duckdb" ? "main" : settings.adapter == "postgres" ? "public" : "default";
  }

  // Connection values stay raw: project < target < local target < local.
  settings.raw_connection = project.connection;
  if (project_target) merge(settings.raw_connection, project_target->connection);
  if (local_target) merge(settings.raw_connection, local_target->connection);
  if (local) merge(settings.raw_connection, local->connection);
  settings.connection_flags = inputs.connection;

  if (project.naming.pipeline_prefix)
    settings.naming.pipeline_prefix = ExpandText(scope, *project.naming.pipeline_prefix, "naming.pipeline_prefix");
  settings.naming.pipeline_naming_macro =
      ExpandOptional(scope, project.naming.pipeline_naming_macro, "naming.pipeline_naming_macro");
  if (project.naming.table_prefix)
    settings.naming.table_prefix = ExpandText(scope, *project.naming.table_prefix, "naming.table_prefix");
  if (project.naming.view_prefix)
    settings.naming.view_prefix = ExpandText(scope, *project.naming.view_prefix, "naming.view_prefix");

  settings.defaults.managed_source_ttl =
      ExpandOptional(scope, project.defaults.managed_source_ttl, "defaults.managed_source_ttl");
  settings.defaults.model_ttl = ExpandOptional(scope, project.defaults.model_ttl, "defaults.model_ttl");
  settings.defaults.kafka_broker_list =
      ExpandOptional(scope, project.defaults.kafka_broker_list, "defaults.kafka_broker_list");
  settings.defaults.kafka_naming_macro =
      ExpandOptional(scope, project.defaults.kafka_naming_macro, "defaults.sources.kafka.naming_macro");

  // The mode switch, both generations: [settings] virtual_environments and [defaults] pipeline_mode.
  std::optional<bool> virtual_environments;
  if (const auto& setting = project.virtual_environments) {
    nlohmann::json value = scope.Expand(setting->value, "settings.virtual_environments", setting->origin);
    if (!value.is_boolean()) {
      FailAt(setting->origin, "SLU-TEMPLATE-007", "'settings.virtual_environments' must resolve to a boolean",
             "the template must be exactly \"${name}\" with a true/false variable");
    }
    virtual_environments = value.get<bool>();
  }
  const std::optional<Located<PipelineMode>>& mode =
      (local && local->pipeline_mode) ? local->pipeline_mode : project.defaults.pipeline_mode;
  if (mode && virtual_environments && *virtual_environments != (mode->value == PipelineMode::kVirtual)) {
    FailAt(mode->origin, "SLU-CONFIG-009",
           std::string("'defaults.pipeline_mode' is ") + PipelineModeName(mode->value) +
               " but settings.virtual_environments is " + (*virtual_environments ? "true" : "false") + " (" +
               Where(project.virtual_environments->origin) + ")",
           "use one switch: remove [settings] virtual_environments (the older form) or make both agree");
  }
  if (mode) {
    settings.default_pipeline_mode = mode->value;
    settings.default_pipeline_mode_key = "defaults.pipeline_mode";
  } else if (virtual_environments) {
    settings.default_pipeline_mode = *virtual_environments ? PipelineMode::kVirtual : PipelineMode::kDirect;
    settings.default_pipeline_mode_key = "settings.virtual_environments";
  }

  auto first = [](std::initializer_list<std::optional<bool>> layers) {
    for (const auto& layer : layers) {
      if (layer) return *layer;
    }
    return false;
  };
  settings.audit_scheduler_enabled =
      first({local_target ? local_target->audit_scheduler_enabled : std::nullopt,
             project_target ? project_target->audit_scheduler_enabled : std::nullopt, project.audit_scheduler_enabled});
  settings.sensors_enabled =
      first({local_target ? local_target->sensors.enabled : std::nullopt,
             project_target ? project_target->sensors.enabled : std::nullopt, project.sensors.enabled});
  for (const SensorSettings* layer : {local_target ? &local_target->sensors : nullptr,
                                      project_target ? &project_target->sensors : nullptr, &project.sensors}) {
    if (layer != nullptr && layer->tick_retention_days) {
      settings.sensor_tick_retention_days = *layer->tick_retention_days;
      break;
    }
  }
  if (project_target && project_target->max_pipelines) {
    settings.max_pipelines = project_target->max_pipelines->value;
  } else if (project.max_pipelines) {
    settings.max_pipelines = project.max_pipelines->value;
  }
  return settings;
}

void CheckTargetNames(const ProjectConfig& project, const TargetSettings& target) {
  if (!IsIdentifier(target.database)) {
    const bool flag = !target.database_origin.at.known();
    FailAt(target.database_origin, "SLU-CONFIG-007",
           (flag ? std::string("--database") : "'targets." + target.name + ".database'") + " \"" + target.database +
               "\" is not an identifier",
           "the database is the namespace (a schema) of the project's assets: use [A-Za-z_][A-Za-z0-9_]*");
  }
  auto check_prefix = [&](const std::optional<ConfigValue>& written, const std::string& value, const char* key) {
    if (!written || IsAllowedRelationPrefix(value)) return;
    FailAt(written->origin, "SLU-CONFIG-007",
           "'naming." + std::string(key) + "' \"" + value + "\" cannot start a relation name",
           std::string(kRelationPrefixRule));
  };
  check_prefix(project.naming.table_prefix, target.naming.table_prefix, "table_prefix");
  check_prefix(project.naming.view_prefix, target.naming.view_prefix, "view_prefix");
}

std::optional<std::string> ExpandStateUrl(const ProjectConfig& project, const TargetSettings& target) {
  if (!project.state_url) return std::nullopt;
  return ExpandText(target.templates, *project.state_url, "state.url");
}

std::map<std::string, std::string> ExpandConnection(const TargetSettings& target) {
  if (!target.database_configured && target.adapter != "duckdb") {
    throw Error(Diagnostic{"SLU-CONFIG-013",
                           "target '" + target.name + "' has no database",
                           {target.project_file, 0, 0},
                           "set database under [targets." + target.name + "] or pass --database",
                           {}});
  }
  // Overrides first, so an overridden value is never expanded (its ${ENV:…} may be unset).
  std::map<std::string, std::string> overrides;
  if (target.adapter == "clickhouse") {
    const EnvironmentLookup& environment = target.templates.environment();
    for (const char* key : {"host", "port", "username", "password"}) {
      std::string name = "STREAMBUILD_CLICKHOUSE_" + std::string(key);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
      std::optional<std::string> value = environment(name);
      if (!value) continue;
      if (std::string(key) == "port" &&
          (value->empty() ||
           !std::all_of(value->begin(), value->end(), [](unsigned char c) { return std::isdigit(c); }))) {
        throw Error(Diagnostic{"SLU-CONFIG-007", name + " must be an integer", {}, "e.g. " + name + "=8123", {}});
      }
      overrides[key] = *value;
    }
  }
  const ConnectionFlags& flags = target.connection_flags;
  if (flags.host) overrides["host"] = *flags.host;
  if (flags.port) overrides["port"] = std::to_string(*flags.port);
  if (flags.username) overrides["username"] = *flags.username;
  if (flags.password) overrides["password"] = *flags.password;

  std::map<std::string, std::string> connection;
  for (const auto& [key, raw] : target.raw_connection) {
    if (overrides.count(key)) continue;
    const std::string field = "connection." + key;
    nlohmann::json value = target.templates.Expand(raw.value, field, raw.origin);
    if (key == "settings") {
      for (const auto& [name, setting] : value.items()) {
        if (setting.is_structured()) {
          FailAt(raw.origin, "SLU-TEMPLATE-007", "'" + field + "." + name + "' must resolve to a scalar",
                 "connection settings are strings, numbers or booleans");
        }
        connection["settings." + name] = setting.is_string() ? setting.get<std::string>() : setting.dump();
      }
    } else if (key == "port") {
      std::string text = value.is_number_integer() ? value.dump() : value.is_string() ? value.get<std::string>() : "";
      if (text.empty() || !std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); })) {
        FailAt(raw.origin, "SLU-CONFIG-003", "'" + field + "' must resolve to an integer", "e.g. port = 8123");
      }
      connection[key] = text;
    } else if (value.is_string()) {
      connection[key] = value.get<std::string>();
    } else if (key == "max_concurrent_jobs_per_table" && value.is_number_integer()) {
      connection[key] = value.dump();  // BigQuery's; its backend checks the number
    } else {
      FailAt(raw.origin, "SLU-TEMPLATE-007", "'" + field + "' must resolve to a string",
             "a value that is exactly \"${name}\" takes the variable's type");
    }
  }
  for (auto& [key, value] : overrides) connection[key] = std::move(value);
  return connection;
}

}  // namespace sluice
