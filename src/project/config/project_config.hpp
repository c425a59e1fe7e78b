// Project configuration: `streambuild_project.toml`, the optional `streambuild_local.toml` and each
// pipeline's optional `pipeline.toml` (StreamBuild reference §2.2–§2.6), plus Sluice's `[connection] path`
// (the DuckDB file) and pipeline.toml `database` (the pipeline's namespace).
//
// Loading checks every key against the known set at every level and every value (types, enumerations,
// durations `<int><d|h|m|s>`, ranges, patterns); the first problem is one located error with a hint.
// ResolveTarget then applies the precedence rules (§2.5) and `${…}` templating (§2.6, templating.hpp) to
// give the settings one command works with. Connection values are kept raw until a command connects
// (ExpandConnection), so `compile` works with connection variables unset. Variables whose values are taken
// from the environment are kept apart from the ones macros may read (TargetSettings::environment_variables).
//
// Errors:
//   SLU-CONFIG-001  malformed TOML
//   SLU-CONFIG-002  unknown key
//   SLU-CONFIG-003  wrong value type
//   SLU-CONFIG-004  missing required key
//   SLU-CONFIG-005  unknown target
//   SLU-CONFIG-006  a `.yml` project or local config
//   SLU-CONFIG-007  invalid value (enumeration, duration, range, pattern, empty, interpolated `name`, a database
//                   that is not an identifier, a naming prefix that cannot start a relation name, …)
//   SLU-CONFIG-008  `--vars` is not one JSON object (located at line:column of the JSON text, file `--vars`; the
//                   text is not shown)
//   SLU-CONFIG-009  `settings.virtual_environments` disagrees with `defaults.pipeline_mode`
//   SLU-CONFIG-010  a replay policy (`replay_on_change` / `bounded_replay_fallback`) that no virtual
//                   pipeline uses: in `[defaults]` when no pipeline is virtual, in the pipeline.toml or a
//                   MODEL header of a direct pipeline
//   SLU-CONFIG-011  `[protection]` on a virtual pipeline (protection is for direct pipelines)
//   SLU-CONFIG-012  `targets.<t>.build.max_pipelines` without a project-level `build.max_pipelines`
//   SLU-CONFIG-013  a connecting command on a non-DuckDB target that has no database
//   SLU-TEMPLATE-*  templating errors (templating.hpp)
// Messages name keys, never connection values (they may be secrets).
// Thread-safety: pure functions over files; the results are immutable values.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "definitions/checks.hpp"
#include "definitions/definitions.hpp"
#include "project/config/templating.hpp"

namespace sluice {

enum class PipelineMode { kDirect, kVirtual };

// "direct" | "virtual".
const char* PipelineModeName(PipelineMode mode);

// A parsed value with where it was written.
template <typename T>
struct Located {
  T value;
  ValueOrigin origin;
};

// ReplayRule, ReplayOnChange and BoundedReplayFallback: definitions/definitions.hpp (pipelines carry them).

// `[defaults.freshness]` (sources fall back to it): the thresholds as written (`<int>[smhd]`) and in
// seconds. At least one is set, and warn_after ≤ error_after.
struct FreshnessDefaults {
  std::optional<std::string> warn_after;
  std::optional<std::string> error_after;
  std::optional<int64_t> warn_after_seconds;
  std::optional<int64_t> error_after_seconds;
};

// `[defaults.audits]` / pipeline.toml `[audit_defaults]`: every > 0, warmup ≥ 0.
struct AuditDefaults {
  std::optional<AuditSeverity> severity;
  std::optional<int64_t> every_seconds;
  std::optional<int64_t> warmup_seconds;
};

struct DeploymentReadiness {
  int64_t maximum_lag_seconds = 30;
  double minimum_staged_row_ratio = 0.5;  // 0..1
};

// `[sensors]` at the project or a target; unset fields inherit.
struct SensorSettings {
  std::optional<bool> enabled;
  std::optional<int64_t> tick_retention_days;  // ≥ 0 (StreamBuild accepts 0)
};

// `[targets.<t>]` of either file. Templated values are kept raw until the target is resolved.
struct TargetConfig {
  std::optional<ConfigValue> database;
  std::map<std::string, ConfigValue> connection;
  std::map<std::string, ConfigValue> vars;
  std::optional<bool> audit_scheduler_enabled;
  SensorSettings sensors;
  std::optional<Located<int64_t>> max_pipelines;  // [targets.<t>.build]; project file only
};

struct ProjectDefaults {
  // Templated text, expanded into TargetSettings::defaults.
  std::optional<ConfigValue> managed_source_ttl;
  std::optional<ConfigValue> model_ttl;
  std::optional<ConfigValue> kafka_broker_list;
  std::optional<ConfigValue> kafka_naming_macro;  // [defaults.sources.kafka] naming_macro
  std::optional<Located<PipelineMode>> pipeline_mode;
  std::optional<Located<ReplayOnChange>> replay_on_change;
  std::optional<Located<BoundedReplayFallback>> bounded_replay_fallback;
  std::optional<FreshnessDefaults> freshness;
  AuditDefaults audits;
  DeploymentReadiness deployment_readiness;
  int64_t run_presumed_failed_after_seconds = 600;  // > 45
};

// `[naming]` as written (templated); TargetSettings::naming holds the expanded values and the defaults.
struct NamingTemplates {
  std::optional<ConfigValue> pipeline_prefix;
  std::optional<ConfigValue> pipeline_naming_macro;
  std::optional<ConfigValue> table_prefix;
  std::optional<ConfigValue> view_prefix;
};

struct ProjectConfig {
  std::string file;                    // path relative to the project root, for diagnostics
  std::string name;                    // a literal, never interpolated
  std::optional<ConfigValue> adapter;  // default "clickhouse"
  std::string default_target;
  std::map<std::string, ConfigValue> vars;
  std::map<std::string, ConfigValue> connection;
  std::map<std::string, TargetConfig> targets;
  ProjectDefaults defaults;
  NamingTemplates naming;
  // [settings] virtual_environments, the older mode switch: a boolean, or a template resolving to one.
  std::optional<ConfigValue> virtual_environments;
  std::optional<bool> audit_scheduler_enabled;
  SensorSettings sensors;
  std::optional<Located<int64_t>> max_pipelines;  // [build]
  // [state] url: where the project keeps its run history (state/open_state_store.hpp), templated like [connection]
  // values and kept raw until a command opens the store (ExpandStateUrl); SLUICE_STATE_URL wins over it.
  std::optional<ConfigValue> state_url;
};

struct LocalConfig {
  std::string file;
  std::optional<std::string> target;
  std::optional<ConfigValue> adapter;
  std::optional<Located<PipelineMode>> pipeline_mode;  // [defaults] pipeline_mode: overrides the project's
  std::map<std::string, ConfigValue> vars;
  std::map<std::string, ConfigValue> connection;
  std::map<std::string, TargetConfig> targets;  // no `build`: local-only targets use the project limit
};

// --host / --port / --username / --password.
struct ConnectionFlags {
  std::optional<std::string> host;
  std::optional<int> port;
  std::optional<std::string> username;
  std::optional<std::string> password;
};

// What the command line adds to the files (StreamBuild §2.5). Every field is optional.
struct ConfigInputs {
  std::optional<std::string> target;     // --target: wins over the local `target` and default_target
  std::optional<std::string> vars_json;  // --vars: one JSON object; its keys override every file's vars
  std::optional<std::string> database;   // --database: wins over both files' target database
  ConnectionFlags connection;            // win over STREAMBUILD_CLICKHOUSE_* and every file
  EnvironmentLookup environment;         // ${ENV:…} and STREAMBUILD_CLICKHOUSE_*; empty: the process's
  // The keys of code assets deployed with the project (a code program's, sdk/): its models may name them in
  // __ref()/__source() like sources. One part: the target database.
  std::vector<std::vector<std::string>> code_asset_keys;
};

struct NamingConfig {
  std::string pipeline_prefix = "pl__";  // may be ""
  std::optional<std::string> pipeline_naming_macro;
  std::string table_prefix = "tbl__";
  std::string view_prefix = "view__";
};

// The templated `[defaults]` strings, expanded.
struct DefaultTexts {
  std::optional<std::string> managed_source_ttl;
  std::optional<std::string> model_ttl;
  std::optional<std::string> kafka_broker_list;
  std::optional<std::string> kafka_naming_macro;
};

// The resolved target a command works against.
struct TargetSettings {
  std::string name;
  std::string project_file;  // where the target is configured: the location of errors about it as a whole
  std::string adapter;  // expanded; local > project > "clickhouse"
  // --database > local target > project target (expanded); else "main" for DuckDB, "default" otherwise.
  std::string database;
  bool database_configured = false;  // false when `database` is that fallback
  ValueOrigin database_origin;       // where the database was written; no location for --database and the fallback
  // Resolved vars (project < target < local target < local < --vars) whose values are not taken from the
  // environment: macros' ctx.variables.
  nlohmann::json variables = nlohmann::json::object();
  // The vars whose values are taken from ${ENV:…} (TemplateScope::environment_sources): name → environment
  // variable. Withheld from macros whether the environment variable is set or not.
  std::map<std::string, std::string> environment_variables;
  // The same variables and environment, to expand further values (e.g. source YAML strings).
  TemplateScope templates;
  // Merged project < target < local target < local, NOT expanded: connecting commands call ExpandConnection.
  std::map<std::string, ConfigValue> raw_connection;
  ConnectionFlags connection_flags;
  NamingConfig naming;
  DefaultTexts defaults;
  // The mode of pipelines whose pipeline.toml sets none: local defaults.pipeline_mode > project
  // defaults.pipeline_mode > settings.virtual_environments > direct.
  PipelineMode default_pipeline_mode = PipelineMode::kDirect;
  std::string default_pipeline_mode_key;  // the key that decided it, "" for the built-in default
  bool audit_scheduler_enabled = false;   // local target > project target > project
  bool sensors_enabled = false;           // likewise
  int64_t sensor_tick_retention_days = 0;
  std::optional<int64_t> max_pipelines;  // project target > project
};

struct PipelineProtection {
  std::string warning;
  std::string confirmation;  // [A-Za-z0-9][A-Za-z0-9._:-]*; default the pipeline name or CONFIRM_<sanitized>
};

struct PipelineConfig {
  std::string name;
  std::string file;                           // relative pipeline.toml path; "" when the pipeline has none
  PipelineMode mode = PipelineMode::kDirect;  // effective: `mode` > TargetSettings::default_pipeline_mode
  std::optional<std::string> database;        // Sluice: the namespace of the pipeline's models
  std::optional<std::string> table_prefix;
  std::optional<std::string> view_prefix;
  std::optional<ReplayOnChange> replay_on_change;  // virtual pipelines only
  std::optional<BoundedReplayFallback> bounded_replay_fallback;
  std::optional<PipelineProtection> protection;  // direct pipelines only
  AuditDefaults audit_defaults;
  std::map<std::string, std::string> replay_settings;  // [execution.replay.settings], values as text
};

// `root` is the project folder; paths in diagnostics are relative to it.
ProjectConfig LoadProjectConfig(const std::filesystem::path& root);
std::optional<LocalConfig> LoadLocalConfig(const std::filesystem::path& root);

// Target: inputs.target > local `target` > default_target; the target must exist in either file.
// Resolves vars, the mode switch, database, naming and defaults (templated). Does not touch connection
// values. Throws SLU-CONFIG-005/-007/-008/-009 and SLU-TEMPLATE-*.
TargetSettings ResolveTarget(const ProjectConfig& project, const std::optional<LocalConfig>& local,
                             const ConfigInputs& inputs);

// The variables of `--vars`: one JSON object, each key a variable. Throws SLU-CONFIG-008 located at the line and
// column of the JSON text where it stops being one (file `--vars`), without quoting the text. The CLI calls it
// before anything else, so a mistyped --vars is a usage error.
std::map<std::string, ConfigValue> ParseVarsOverride(const std::string& vars_json);

// The target's names that Sluice uses as namespaces or writes unquoted into compile artifacts: `database` must
// be an identifier and naming.table_prefix / view_prefix allowed relation prefixes (relation_name.hpp);
// SLU-CONFIG-007 located at the value that set each. Called by the project load, not by ResolveTarget, so
// commands that read only the settings (runs, logs) work with a bad value.
void CheckTargetNames(const ProjectConfig& project, const TargetSettings& target);

// The connection of a command that connects: each raw value expanded now, then per key the environment's
// STREAMBUILD_CLICKHOUSE_HOST|PORT|USERNAME|PASSWORD (ignored for adapter duckdb), then the CLI flags; a
// value that is overridden is never expanded. Scalars as text, `settings.<name>` for each connection
// setting. Throws SLU-TEMPLATE-* (e.g. a missing ${ENV:…}), SLU-CONFIG-003/-007 (a port that is not an
// integer) and SLU-CONFIG-013.
std::map<std::string, std::string> ExpandConnection(const TargetSettings& target);

// The project's [state] url with its `${…}` templates expanded against the target's variables and environment, or
// nullopt when it sets none. Throws SLU-TEMPLATE-* (e.g. a missing ${ENV:…}).
std::optional<std::string> ExpandStateUrl(const ProjectConfig& project, const TargetSettings& target);

// One pipeline's settings: `relative_file` is its pipeline.toml, or nullopt (all defaults). Throws
// SLU-CONFIG-001…003/-007 (-007 also for a `database` that is not an identifier and a naming prefix that is not
// an allowed relation prefix, relation_name.hpp), -010 (a replay policy on a direct pipeline), -011 (protection
// on a virtual one).
PipelineConfig LoadPipelineConfig(const std::filesystem::path& root, const std::string& pipeline,
                                  const std::optional<std::string>& relative_file, const TargetSettings& target);

// `[defaults]` replay_on_change / bounded_replay_fallback apply to virtual pipelines only: SLU-CONFIG-010
// when none of the project's pipelines is virtual. Call once, after every pipeline's config is loaded.
void CheckProjectReplayPolicy(const ProjectConfig& project, const TargetSettings& target, bool any_virtual_pipeline);

// Where a MODEL header sets `replay_on_change` or `bounded_replay_fallback`.
struct ModelReplayPolicy {
  std::string key;
  size_t offset = 0;  // byte offset of the key in the model file
};

// SLU-CONFIG-010, located in the model file, when `policy` is set and the model's pipeline is direct.
void CheckModelReplayPolicy(const PipelineConfig& pipeline, const std::string& model_file,
                            const std::string& model_text, const std::optional<ModelReplayPolicy>& policy);

// The same, finding the keys in the model's (already validated) MODEL header; parses nothing for
// virtual pipelines.
void CheckModelReplayPolicy(const PipelineConfig& pipeline, const std::string& model_file,
                            const std::string& model_text);

}  // namespace sluice
