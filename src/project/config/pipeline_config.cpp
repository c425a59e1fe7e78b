// pipeline.toml (LoadPipelineConfig) and where replay policies may be set (CheckProjectReplayPolicy,
// CheckModelReplayPolicy).
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "core/asset_key.hpp"
#include "core/diagnostic.hpp"
#include "project/header_grammar.hpp"
#include "project/config/project_config.hpp"
#include "project/config/project_config_internal.hpp"
#include "project/relation_name.hpp"

namespace sluice {

namespace {

bool IsConfirmationToken(const std::string& text) {
  if (text.empty() || !std::isalnum(static_cast<unsigned char>(text[0]))) return false;
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '_' || c == ':' || c == '-'; });
}

std::string DefaultConfirmation(const std::string& pipeline) {
  if (IsConfirmationToken(pipeline)) return pipeline;
  std::string sanitized = pipeline;
  for (char& c : sanitized) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != ':' && c != '-') c = '_';
  }
  return "CONFIRM_" + sanitized;
}

bool IsIdentifierText(const std::string& text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

[[noreturn]] void FailDirectPolicy(const ValueOrigin& origin, const std::string& where, const std::string& key,
                                   const std::string& pipeline) {
  FailAt(origin, "SLU-CONFIG-010", where + " sets " + key + " but pipeline '" + pipeline + "' is direct",
         "replay policies apply to virtual pipelines: set mode = \"virtual\" in its pipeline.toml, or remove " + key);
}

}  // namespace

PipelineConfig LoadPipelineConfig(const std::filesystem::path& root, const std::string& pipeline,
                                  const std::optional<std::string>& relative_file, const TargetSettings& target) {
  PipelineConfig config;
  config.name = pipeline;
  config.mode = target.default_pipeline_mode;
  if (!relative_file) return config;
  TomlDocument doc = ReadToml(root, *relative_file);
  toml::table table = ParseToml(doc);
  CheckShape(doc, table, PipelineShape(), "");
  config.file = doc.file;
  if (auto mode = OptionalPipelineMode(doc, table, "mode", "")) config.mode = mode->value;
  config.database = OptionalString(doc, table, "database", "");
  if (config.database && !IsIdentifier(*config.database)) {
    Fail(doc, table.get("database")->source(), "SLU-CONFIG-007",
         "'database' \"" + *config.database + "\" is not an identifier",
         "the database is the namespace (a schema) of the pipeline's models: use [A-Za-z_][A-Za-z0-9_]*");
  }
  if (const toml::table* naming = table["naming"].as_table()) {
    for (const char* key : {"table_prefix", "view_prefix"}) {
      std::optional<std::string> prefix = OptionalString(doc, *naming, key, "naming.");
      if (prefix && !IsAllowedRelationPrefix(*prefix)) {
        Fail(doc, naming->get(key)->source(), "SLU-CONFIG-007",
             "'naming." + std::string(key) + "' \"" + *prefix + "\" cannot start a relation name",
             std::string(kRelationPrefixRule));
      }
      (std::string_view(key) == "table_prefix" ? config.table_prefix : config.view_prefix) = std::move(prefix);
    }
  }
  if (auto policy = ParseReplayOnChange(doc, table, "")) {
    if (config.mode == PipelineMode::kDirect) FailDirectPolicy(policy->origin, doc.file, "replay_on_change", pipeline);
    config.replay_on_change = policy->value;
  }
  if (auto fallback = ParseFallback(doc, table, "")) {
    if (config.mode == PipelineMode::kDirect) {
      FailDirectPolicy(fallback->origin, doc.file, "bounded_replay_fallback", pipeline);
    }
    config.bounded_replay_fallback = fallback->value;
  }
  if (const toml::table* protection = table["protection"].as_table()) {
    if (config.mode == PipelineMode::kVirtual) {
      Fail(doc, table.get("protection")->source(), "SLU-CONFIG-011",
           "pipeline '" + pipeline + "' is virtual; [protection] applies to direct pipelines only",
           "a virtual pipeline is published only after its audits; remove [protection] or set mode = \"direct\"");
    }
    PipelineProtection result{
        "Pipeline '" + pipeline + "' is protected. Confirm its operational impact before building.",
        DefaultConfirmation(pipeline)};
    for (const char* key : {"warning", "confirmation"}) {
      std::optional<std::string> value = OptionalString(doc, *protection, key, "protection.");
      if (!value) continue;
      if (Trim(*value).empty()) {
        Fail(doc, protection->get(key)->source(), "SLU-CONFIG-007",
             "'protection." + std::string(key) + "' must be a non-empty string", "remove it to use the default");
      }
      (std::string(key) == "warning" ? result.warning : result.confirmation) = *value;
    }
    if (!IsConfirmationToken(result.confirmation)) {
      Fail(doc, protection->get("confirmation")->source(), "SLU-CONFIG-007",
           "'protection.confirmation' must start with a letter or digit and contain only letters, digits, '.', '_', "
           "':' or '-'",
           "e.g. confirmation = \"" + DefaultConfirmation(pipeline) + "\"");
    }
    config.protection = result;
  }
  config.audit_defaults = ParseAuditDefaults(doc, table["audit_defaults"].as_table(), "audit_defaults.");
  if (const toml::table* replay = table["execution"]["replay"].as_table()) {
    if (const toml::table* settings = (*replay)["settings"].as_table()) {
      if (settings->empty()) {
        Fail(doc, replay->get("settings")->source(), "SLU-CONFIG-007", "'execution.replay.settings' must not be empty",
             "list at least one setting, e.g. max_threads = 4, or remove the table");
      }
      for (auto&& [key, node] : *settings) {
        std::string name(key.str());
        if (!IsIdentifierText(name)) {
          Fail(doc, key.source(), "SLU-CONFIG-007", "'execution.replay.settings." + name + "' is not a setting name",
               "setting names match [A-Za-z_][A-Za-z0-9_]*");
        }
        nlohmann::json value = ToJson(node);
        if (value.is_structured()) {
          FailType(doc, node, "execution.replay.settings." + name, "a string, number or boolean",
                   "e.g. max_threads = 4");
        }
        config.replay_settings[name] = value.is_string() ? value.get<std::string>() : value.dump();
      }
    }
  }
  return config;
}

void CheckProjectReplayPolicy(const ProjectConfig& project, const TargetSettings& target, bool any_virtual_pipeline) {
  if (any_virtual_pipeline) return;
  std::string reason =
      target.default_pipeline_mode == PipelineMode::kVirtual
          ? "every pipeline sets mode = \"direct\""
          : (target.default_pipeline_mode_key.empty() ? "the default pipeline mode is direct"
                                                      : target.default_pipeline_mode_key + " is direct");
  if (target.default_pipeline_mode_key == "settings.virtual_environments" &&
      target.default_pipeline_mode == PipelineMode::kDirect) {
    reason = "settings.virtual_environments is false";
  }
  auto fail = [&](const ValueOrigin& origin, const std::string& key) {
    FailAt(origin, "SLU-CONFIG-010", "'defaults." + key + "' needs a virtual pipeline, but " + reason,
           "replay policies apply to virtual pipelines: set [defaults] pipeline_mode = \"virtual\" (or a pipeline's "
           "mode), or remove " +
               key);
  };
  if (project.defaults.replay_on_change) fail(project.defaults.replay_on_change->origin, "replay_on_change");
  if (project.defaults.bounded_replay_fallback) {
    fail(project.defaults.bounded_replay_fallback->origin, "bounded_replay_fallback");
  }
}

void CheckModelReplayPolicy(const PipelineConfig& pipeline, const std::string& model_file,
                            const std::string& model_text, const std::optional<ModelReplayPolicy>& policy) {
  if (!policy || pipeline.mode == PipelineMode::kVirtual) return;
  FailDirectPolicy(OriginIn(LocationAt(model_file, model_text, policy->offset), model_text),
                   "the MODEL header of " + model_file, policy->key, pipeline.name);
}

void CheckModelReplayPolicy(const PipelineConfig& pipeline, const std::string& model_file,
                            const std::string& model_text) {
  if (pipeline.mode == PipelineMode::kVirtual) return;
  HeaderBlock header = ParseHeaderBlock(model_text, 0, "MODEL", model_file);
  for (const char* key : {"replay_on_change", "bounded_replay_fallback"}) {
    if (const HeaderEntry* entry = FindEntry(header.entries, key)) {
      CheckModelReplayPolicy(pipeline, model_file, model_text, ModelReplayPolicy{key, entry->key_offset});
    }
  }
}

}  // namespace sluice
