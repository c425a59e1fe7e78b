// Project configuration: every value rule with its code and location, precedence of targets, vars,
// connection and database, both generations of the mode switch, replay-policy rules, and when connection
// values are expanded. Projects are written into temporary folders.
#include "project/config/project_config.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <random>

#include "project/project_loader.hpp"

namespace sluice {
namespace {

// Lines 1–5 of every project file below; appended text starts at line 6.
constexpr const char* kProjectHead =
    "name = \"p\"\nadapter = \"duckdb\"\ndefault_target = \"dev\"\n[targets.dev]\ndatabase = \"analytics\"\n";

class ProjectFiles {
 public:
  ProjectFiles() {
    std::random_device device;
    root_ = std::filesystem::temp_directory_path() /
            ("sluice_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
    std::filesystem::create_directories(root_);
    Project("");
    Write("sources/s.yml", "sources:\n  - kind: seed\n    name: src\n    path: seeds/src.csv\n");
    Write("seeds/src.csv", "id\n1\n");
    Write("pipelines/main/a.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __source(\"src\")\n");
  }
  ~ProjectFiles() { std::filesystem::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::trunc) << text;
  }
  // streambuild_project.toml: kProjectHead followed by `tail`.
  void Project(const std::string& tail) const { Write("streambuild_project.toml", kProjectHead + tail); }
  void Local(const std::string& text) const { Write("streambuild_local.toml", text); }

  TargetSettings Resolve(const ConfigInputs& inputs = {}) const {
    return ResolveTarget(LoadProjectConfig(root_), LoadLocalConfig(root_), inputs);
  }
  sluice::Project Load(const ConfigInputs& inputs = {}) const { return LoadProject(root_, inputs); }
  const std::filesystem::path& root() const { return root_; }

 private:
  std::filesystem::path root_;
};

EnvironmentLookup Environment(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

ConfigInputs WithEnvironment(std::map<std::string, std::string> values) {
  ConfigInputs inputs;
  inputs.environment = Environment(std::move(values));
  return inputs;
}

Diagnostic ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", ""};
}

std::string At(const Diagnostic& d) {
  return d.location.file + ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column);
}

// ---- Values of streambuild_project.toml --------------------------------------------------------------

struct ValueCase {
  std::string tail;  // appended to kProjectHead
  std::string code;
  std::string at;  // file:line:col
};

TEST(ProjectConfigValues, EveryInvalidValueIsALocatedError) {
  const std::string file = "streambuild_project.toml:";
  const std::vector<ValueCase> cases = {
      {"[defaults]\npipeline_mode = \"sideways\"\n", "SLU-CONFIG-007", file + "7:17"},
      {"[defaults.replay_on_change]\nbreaking = \"bounded-7w\"\n", "SLU-CONFIG-007", file + "7:12"},
      {"[defaults.replay_on_change]\nnon_breaking = \"bounded-d\"\n", "SLU-CONFIG-007", file + "7:16"},
      {"[defaults.replay_on_change]\nsometimes = \"full\"\n", "SLU-CONFIG-002", file + "7:1"},
      {"[defaults]\nbounded_replay_fallback = \"partial\"\n", "SLU-CONFIG-007", file + "7:27"},
      {"[defaults.freshness]\nwarn_after = \"2h\"\nerror_after = \"1h\"\n", "SLU-CONFIG-007", file + "7:14"},
      {"[defaults.freshness]\nwarn_after = \"15 minutes\"\n", "SLU-CONFIG-007", file + "7:14"},
      {"[defaults.freshness]\nerror_after = 60\n", "SLU-CONFIG-003", file + "7:15"},
      {"[defaults.audits]\nseverity = \"fatal\"\n", "SLU-CONFIG-007", file + "7:12"},
      {"[defaults.audits]\nevery = \"0m\"\n", "SLU-CONFIG-007", file + "7:9"},
      {"[defaults.audits]\nwarmup = 5\n", "SLU-CONFIG-003", file + "7:10"},
      {"[defaults.deployment_readiness]\nminimum_staged_row_ratio = 1.5\n", "SLU-CONFIG-007", file + "7:28"},
      {"[defaults.deployment_readiness]\nminimum_staged_row_ratio = true\n", "SLU-CONFIG-003", file + "7:28"},
      {"[defaults.deployment_readiness]\nmaximum_lag = \"soon\"\n", "SLU-CONFIG-007", file + "7:15"},
      {"[defaults]\nrun_presumed_failed_after = \"45s\"\n", "SLU-CONFIG-007", file + "7:29"},
      {"[defaults]\nrun_presumed_failed_after = \"0m\"\n", "SLU-CONFIG-007", file + "7:29"},
      {"[defaults]\nmanaged_source_ttl = \"  \"\n", "SLU-CONFIG-007", file + "7:22"},
      {"[defaults]\nkafka_broker_list = 9092\n", "SLU-CONFIG-003", file + "7:21"},
      {"[defaults.sources.kafka]\nnaming_macro = \"\"\n", "SLU-CONFIG-007", file + "7:16"},
      {"[build]\nmax_pipelines = 0\n", "SLU-CONFIG-007", file + "7:17"},
      {"[build]\nmax_pipelines = \"3\"\n", "SLU-CONFIG-003", file + "7:17"},
      {"[targets.dev.build]\nmax_pipelines = 4\n", "SLU-CONFIG-012", file + "7:17"},
      {"[sensors]\ntick_retention_days = -1\n", "SLU-CONFIG-007", file + "7:23"},
      {"[targets.dev.sensors]\nenabled = \"yes\"\n", "SLU-CONFIG-003", file + "7:11"},
      {"[audit_scheduler]\nenabled = 1\n", "SLU-CONFIG-003", file + "7:11"},
      {"[targets.dev.audit_scheduler]\nenabled = \"on\"\n", "SLU-CONFIG-003", file + "7:11"},
      {"[naming]\ntable_prefix = 3\n", "SLU-CONFIG-003", file + "7:16"},
      {"[naming]\npipeline_naming_macro = \" \"\n", "SLU-CONFIG-007", file + "7:25"},
      {"[connection]\nport = true\n", "SLU-CONFIG-003", file + "7:8"},
      {"[connection]\nhost = 1\n", "SLU-CONFIG-003", file + "7:8"},
      {"[connection.settings]\nx = [1]\n", "SLU-CONFIG-003", file + "7:5"},
      {"[vars]\n\"${k}\" = 1\n", "SLU-TEMPLATE-006", file + "7:1"},
      {"[vars.nested]\n\"a${k}\" = 1\n", "SLU-TEMPLATE-006", file + "7:1"},
      {"[settings]\nvirtual_environments = \"yes\"\n", "SLU-CONFIG-003", file + "7:24"},
      {"[targets.prod]\ndatabase = \"\"\n", "SLU-CONFIG-007", file + "7:12"},
  };
  for (const ValueCase& c : cases) {
    ProjectFiles project;
    project.Project(c.tail);
    Diagnostic d = ErrorOf([&] { project.Resolve(); });
    EXPECT_EQ(d.code, c.code) << c.tail << d.message;
    EXPECT_EQ(At(d), c.at) << c.tail << d.message;
    EXPECT_FALSE(d.source_line.empty()) << c.tail;
    EXPECT_FALSE(d.hint.empty()) << c.tail;
  }
}

TEST(ProjectConfigValues, FreshnessNeedsAThreshold) {
  ProjectFiles project;
  project.Project("[defaults.freshness]\n");
  Diagnostic d = ErrorOf([&] { project.Resolve(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-007");
  EXPECT_EQ(d.location.line, 6);
}

TEST(ProjectConfigValues, NameIsNeverInterpolated) {
  ProjectFiles project;
  project.Write("streambuild_project.toml", "name = \"${team}\"\ndefault_target = \"dev\"\n[targets.dev]\n");
  Diagnostic d = ErrorOf([&] { project.Resolve(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-007");
  EXPECT_EQ(At(d), "streambuild_project.toml:1:8");
}

TEST(ProjectConfigValues, YmlConfigsAreRejected) {
  ProjectFiles project;
  project.Write("streambuild_local.yml", "target: dev\n");
  EXPECT_EQ(ErrorOf([&] { project.Resolve(); }).code, "SLU-CONFIG-006");
}

TEST(ProjectConfigValues, AcceptsEveryStreamBuildKey) {
  ProjectFiles project;
  project.Project(R"toml(
[vars]
ttl_days = 14

[connection]
host = "localhost"
port = 8123
username = "u"
password = "${ENV:CH_PASSWORD}"
settings = { max_threads = 4, readonly = false }

[targets.dev.audit_scheduler]
enabled = true

[targets.dev.sensors]
tick_retention_days = 7

[targets.dev.build]
max_pipelines = 2

[defaults]
managed_source_ttl = "_replay_landed_at + INTERVAL ${ttl_days} DAY"
model_ttl = "ts + INTERVAL 30 DAY"
kafka_broker_list = "redpanda:9092"
pipeline_mode = "virtual"
bounded_replay_fallback = "bounded_without_history"
run_presumed_failed_after = "46s"

[defaults.replay_on_change]
breaking = "full"
non_breaking = "bounded-7d"

[defaults.freshness]
warn_after = "1h"
error_after = "1h"

[defaults.audits]
severity = "warning"
every = "15m"
warmup = "0s"

[defaults.deployment_readiness]
maximum_lag = "0s"
minimum_staged_row_ratio = 1

[defaults.sources.kafka]
naming_macro = "topic_name"

[naming]
pipeline_prefix = ""
pipeline_naming_macro = "pipeline_name"
table_prefix = "t_"
view_prefix = "v_"

[audit_scheduler]
enabled = false

[sensors]
enabled = true
tick_retention_days = 0

[build]
max_pipelines = 5
)toml");
  ProjectConfig config = LoadProjectConfig(project.root());
  const ProjectDefaults& d = config.defaults;
  ASSERT_TRUE(d.replay_on_change);
  EXPECT_FALSE(d.replay_on_change->value.breaking->bounded);
  EXPECT_EQ(d.replay_on_change->value.non_breaking->lookback_seconds, 7 * 86400);
  EXPECT_EQ(d.bounded_replay_fallback->value, BoundedReplayFallback::kBoundedWithoutHistory);
  EXPECT_EQ(d.freshness->warn_after, "1h");
  EXPECT_EQ(d.freshness->error_after_seconds, 3600);
  EXPECT_EQ(d.audits.severity, AuditSeverity::kWarning);
  EXPECT_EQ(d.audits.every_seconds, 900);
  EXPECT_EQ(d.audits.warmup_seconds, 0);
  EXPECT_EQ(d.deployment_readiness.maximum_lag_seconds, 0);
  EXPECT_EQ(d.deployment_readiness.minimum_staged_row_ratio, 1.0);
  EXPECT_EQ(d.run_presumed_failed_after_seconds, 46);

  TargetSettings target = project.Resolve();
  EXPECT_EQ(target.defaults.managed_source_ttl, "_replay_landed_at + INTERVAL 14 DAY");
  EXPECT_EQ(target.defaults.kafka_naming_macro, "topic_name");
  EXPECT_EQ(target.naming.pipeline_prefix, "");
  EXPECT_EQ(target.naming.pipeline_naming_macro, "pipeline_name");
  EXPECT_EQ(target.naming.table_prefix, "t_");
  EXPECT_EQ(target.default_pipeline_mode, PipelineMode::kVirtual);
  EXPECT_TRUE(target.audit_scheduler_enabled);  // target over project
  EXPECT_TRUE(target.sensors_enabled);          // project, the target sets none
  EXPECT_EQ(target.sensor_tick_retention_days, 7);
  EXPECT_EQ(target.max_pipelines, 2);
}

TEST(ProjectConfigValues, DefaultsWhenUnset) {
  ProjectFiles project;
  ProjectConfig config = LoadProjectConfig(project.root());
  EXPECT_EQ(config.defaults.run_presumed_failed_after_seconds, 600);
  EXPECT_EQ(config.defaults.deployment_readiness.maximum_lag_seconds, 30);
  EXPECT_EQ(config.defaults.deployment_readiness.minimum_staged_row_ratio, 0.5);
  TargetSettings target = project.Resolve();
  EXPECT_EQ(target.naming.pipeline_prefix, "pl__");
  EXPECT_EQ(target.naming.table_prefix, "tbl__");
  EXPECT_EQ(target.naming.view_prefix, "view__");
  EXPECT_EQ(target.default_pipeline_mode, PipelineMode::kDirect);
  EXPECT_FALSE(target.max_pipelines);
  EXPECT_FALSE(target.audit_scheduler_enabled);
}

TEST(ProjectConfigValues, LocalOnlyTargetsInheritTheProjectBuildLimit) {
  ProjectFiles project;
  project.Project("[build]\nmax_pipelines = 3\n[targets.prod.build]\nmax_pipelines = 9\n");
  project.Local("[targets.mine]\ndatabase = \"me\"\n");
  EXPECT_EQ(project.Resolve().max_pipelines, 3);
  ConfigInputs prod;
  prod.target = "prod";
  EXPECT_EQ(project.Resolve(prod).max_pipelines, 9);
  ConfigInputs mine;
  mine.target = "mine";
  TargetSettings local_only = project.Resolve(mine);
  EXPECT_EQ(local_only.max_pipelines, 3);
  EXPECT_EQ(local_only.database, "me");
  project.Local("[targets.mine.build]\nmax_pipelines = 1\n");
  Diagnostic d = ErrorOf([&] { project.Resolve(mine); });
  EXPECT_EQ(d.code, "SLU-CONFIG-002");  // local targets have no build limit of their own
  EXPECT_EQ(d.location.file, "streambuild_local.toml");
}

TEST(ProjectConfigValues, LocalPipelineModeIsChecked) {
  ProjectFiles project;
  project.Local("target = \"dev\"\n[defaults]\npipeline_mode = \"fast\"\n");
  Diagnostic d = ErrorOf([&] { project.Resolve(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-007");
  EXPECT_EQ(At(d), "streambuild_local.toml:3:17");
}

// ---- Precedence ----------------------------------------------------------------------------------------

TEST(ProjectConfigPrecedence, TargetIsCliThenLocalThenDefault) {
  ProjectFiles project;
  project.Project("[targets.prod]\ndatabase = \"prod_db\"\n");
  EXPECT_EQ(project.Resolve().name, "dev");
  project.Local("target = \"prod\"\n[targets.scratch]\ndatabase = \"s\"\n");
  EXPECT_EQ(project.Resolve().name, "prod");
  ConfigInputs cli;
  cli.target = "scratch";  // defined only in the local file
  EXPECT_EQ(project.Resolve(cli).database, "s");
  cli.target = "nowhere";
  Diagnostic d = ErrorOf([&] { project.Resolve(cli); });
  EXPECT_EQ(d.code, "SLU-CONFIG-005");
  EXPECT_NE(d.hint.find("scratch"), std::string::npos);
}

TEST(ProjectConfigPrecedence, VarsLaterLayersWin) {
  ProjectFiles project;
  project.Project(
      "[vars]\na = \"project\"\nb = \"project\"\nc = \"project\"\nd = \"project\"\ne = \"project\"\n"
      "[targets.dev.vars]\nb = \"target\"\nc = \"target\"\nd = \"target\"\ne = \"target\"\n");
  project.Local(
      "[vars]\nd = \"local\"\ne = \"local\"\n"
      "[targets.dev.vars]\nc = \"local target\"\nd = \"local target\"\ne = \"local target\"\n");
  ConfigInputs inputs;
  inputs.vars_json = R"({"e": "cli", "f": [1, 2]})";
  TargetSettings target = project.Resolve(inputs);
  EXPECT_EQ(
      target.variables,
      nlohmann::json(
          {{"a", "project"}, {"b", "target"}, {"c", "local target"}, {"d", "local"}, {"e", "cli"}, {"f", {1, 2}}}));
}

TEST(ProjectConfigPrecedence, VarsJsonMustBeOneObject) {
  ProjectFiles project;
  ConfigInputs inputs;
  inputs.vars_json = R"({"password": "hunter2",)";
  Diagnostic bad = ErrorOf([&] { project.Resolve(inputs); });
  EXPECT_EQ(bad.code, "SLU-CONFIG-008");
  EXPECT_EQ(bad.message.find("hunter2"), std::string::npos) << bad.message;
  EXPECT_NE(bad.hint.find("--vars"), std::string::npos);
  inputs.vars_json = "[1, 2]";
  EXPECT_EQ(ErrorOf([&] { project.Resolve(inputs); }).code, "SLU-CONFIG-008");
}

TEST(ProjectConfigPrecedence, ConnectionFilesThenEnvironmentThenFlags) {
  ProjectFiles project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\ndefault_target = \"dev\"\n"
                "[connection]\nhost = \"project\"\nport = 1\nusername = \"project\"\npassword = \"project\"\n"
                "path = \"project.db\"\nsettings = { x = 1, y = \"project\" }\n"
                "[targets.dev]\ndatabase = \"analytics\"\n"
                "[targets.dev.connection]\nhost = \"target\"\nport = 2\nusername = \"target\"\npassword = \"target\"\n"
                "settings = { y = \"target\" }\n");
  project.Local(
      "[connection]\nusername = \"local\"\nhost = \"local\"\n"
      "[targets.dev.connection]\npassword = \"local target\"\nusername = \"local target\"\nhost = \"local target\"\n");
  ConfigInputs inputs =
      WithEnvironment({{"STREAMBUILD_CLICKHOUSE_PORT", "9000"}, {"STREAMBUILD_CLICKHOUSE_HOST", "env"}});
  inputs.connection.host = "flag";
  std::map<std::string, std::string> connection = ExpandConnection(project.Resolve(inputs));
  EXPECT_EQ(connection.at("host"), "flag");              // flag > environment > files
  EXPECT_EQ(connection.at("port"), "9000");              // environment > files
  EXPECT_EQ(connection.at("username"), "local");         // local > local target
  EXPECT_EQ(connection.at("password"), "local target");  // local target > target > project
  EXPECT_EQ(connection.at("settings.y"), "target");      // target > project (the whole settings table)
  EXPECT_EQ(connection.count("settings.x"), 0u);
  EXPECT_EQ(connection.at("path"), "project.db");  // project only

  inputs.connection.port = 7000;
  inputs.connection.password = "flag secret";
  inputs.connection.username = "flag user";
  connection = ExpandConnection(project.Resolve(inputs));
  EXPECT_EQ(connection.at("port"), "7000");
  EXPECT_EQ(connection.at("password"), "flag secret");
  EXPECT_EQ(connection.at("username"), "flag user");
}

TEST(ProjectConfigState, StateUrlIsExpandedOnlyWhenAskedForWithVariablesAndTheEnvironment) {
  ProjectFiles project;
  EXPECT_EQ(ExpandStateUrl(LoadProjectConfig(project.root()), project.Resolve()), std::nullopt);
  project.Project(
      "[vars]\nstate_host = \"db.internal\"\n"
      "[state]\nurl = \"postgresql://sluice:${ENV:STATE_PASSWORD}@${state_host}:5432/runs\"\n");
  ProjectConfig config = LoadProjectConfig(project.root());
  ASSERT_TRUE(config.state_url);
  EXPECT_EQ(config.state_url->origin.at.line, 9);
  EXPECT_EQ(ExpandStateUrl(config, project.Resolve(WithEnvironment({{"STATE_PASSWORD", "s3cret"}}))),
            "postgresql://sluice:s3cret@db.internal:5432/runs");
  // Loading and resolving never expand it: a missing variable fails only the command that opens the store.
  TargetSettings without = project.Resolve(WithEnvironment({}));
  Diagnostic missing = ErrorOf([&] { ExpandStateUrl(config, without); });
  EXPECT_EQ(missing.code, "SLU-TEMPLATE-003");
  EXPECT_NE(missing.message.find("STATE_PASSWORD"), std::string::npos) << missing.message;
}

TEST(ProjectConfigState, StateTakesOnlyAUrl) {
  ProjectFiles project;
  project.Project("[state]\nhost = \"db\"\n");
  EXPECT_EQ(ErrorOf([&] { LoadProjectConfig(project.root()); }).code, "SLU-CONFIG-002");
  project.Project("[state]\nurl = \"  \"\n");
  EXPECT_EQ(ErrorOf([&] { LoadProjectConfig(project.root()); }).code, "SLU-CONFIG-007");
}

TEST(ProjectConfigPrecedence, ClickHouseEnvironmentIsIgnoredForDuckDb) {
  ProjectFiles project;
  project.Project("[connection]\npath = \"w.duckdb\"\n");
  ConfigInputs inputs = WithEnvironment({{"STREAMBUILD_CLICKHOUSE_HOST", "env"}, {"STREAMBUILD_CLICKHOUSE_PORT", "x"}});
  std::map<std::string, std::string> connection = ExpandConnection(project.Resolve(inputs));
  EXPECT_EQ(connection, (std::map<std::string, std::string>{{"path", "w.duckdb"}}));
}

TEST(ProjectConfigPrecedence, EnvironmentPortMustBeAnInteger) {
  ProjectFiles project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\ndefault_target = \"dev\"\n[targets.dev]\ndatabase = \"a\"\n");
  ConfigInputs inputs = WithEnvironment({{"STREAMBUILD_CLICKHOUSE_PORT", "eighty"}});
  Diagnostic d = ErrorOf([&] { ExpandConnection(project.Resolve(inputs)); });
  EXPECT_EQ(d.code, "SLU-CONFIG-007");
  EXPECT_NE(d.message.find("STREAMBUILD_CLICKHOUSE_PORT"), std::string::npos);
}

TEST(ProjectConfigPrecedence, DatabaseIsCliThenLocalTargetThenProjectTarget) {
  ProjectFiles project;
  EXPECT_EQ(project.Resolve().database, "analytics");
  project.Local("[targets.dev]\ndatabase = \"mine\"\n");
  EXPECT_EQ(project.Resolve().database, "mine");
  ConfigInputs inputs;
  inputs.database = "from_cli";
  TargetSettings target = project.Resolve(inputs);
  EXPECT_EQ(target.database, "from_cli");
  EXPECT_TRUE(target.database_configured);
}

TEST(ProjectConfigPrecedence, ConnectingWithoutADatabaseFailsExceptOnDuckDb) {
  ProjectFiles project;
  project.Write("streambuild_project.toml", "name = \"p\"\ndefault_target = \"dev\"\n[targets.dev]\n");
  TargetSettings clickhouse = project.Resolve();
  EXPECT_EQ(clickhouse.adapter, "clickhouse");
  EXPECT_EQ(clickhouse.database, "default");
  EXPECT_FALSE(clickhouse.database_configured);
  EXPECT_EQ(ErrorOf([&] { ExpandConnection(clickhouse); }).code, "SLU-CONFIG-013");
  EXPECT_EQ(ErrorOf([&] { ExpandConnection(clickhouse); }).location.file, "streambuild_project.toml");
  project.Local("adapter = \"duckdb\"\n");
  TargetSettings duckdb = project.Resolve();
  EXPECT_EQ(duckdb.database, "main");
  EXPECT_EQ(ExpandConnection(duckdb).size(), 0u);
}

TEST(ProjectConfigPrecedence, AdapterDatabaseNamingAndDefaultsAreTemplated) {
  ProjectFiles project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\nadapter = \"${engine}\"\ndefault_target = \"dev\"\n"
                "[vars]\nengine = \"duckdb\"\nenv = \"dev\"\n"
                "[targets.dev]\ndatabase = \"analytics_${env}\"\n"
                "[naming]\ntable_prefix = \"${env}_\"\n"
                "[defaults]\nkafka_broker_list = \"${ENV:BROKERS}\"\nmodel_ttl = \"ts + INTERVAL ${days} DAY\"\n"
                "[targets.dev.vars]\ndays = 3\n");
  TargetSettings target = project.Resolve(WithEnvironment({{"BROKERS", "k:9092"}}));
  EXPECT_EQ(target.adapter, "duckdb");
  EXPECT_EQ(target.database, "analytics_dev");
  EXPECT_EQ(target.naming.table_prefix, "dev_");
  EXPECT_EQ(target.defaults.kafka_broker_list, "k:9092");
  EXPECT_EQ(target.defaults.model_ttl, "ts + INTERVAL 3 DAY");
  Diagnostic d = ErrorOf([&] { project.Resolve(WithEnvironment({})); });
  EXPECT_EQ(d.code, "SLU-TEMPLATE-003");
  EXPECT_EQ(At(d), "streambuild_project.toml:12:21");
}

TEST(ProjectConfigPrecedence, TemplatedStringFieldsMustResolveToStrings) {
  ProjectFiles project;
  project.Project("[vars]\nn = 5\n[targets.prod]\ndatabase = \"${n}\"\n");
  ConfigInputs inputs;
  inputs.target = "prod";
  Diagnostic d = ErrorOf([&] { project.Resolve(inputs); });
  EXPECT_EQ(d.code, "SLU-TEMPLATE-007");
  EXPECT_EQ(At(d), "streambuild_project.toml:9:12");
}

// ---- Compile time versus run time ----------------------------------------------------------------------

TEST(ProjectConfigConnection, ValuesExpandOnlyWhenConnecting) {
  ProjectFiles project;
  project.Project(
      "[vars]\nsecret = \"${ENV:CH_PASSWORD}\"\n"
      "[connection]\npath = \"${ENV:DUCKDB_FILE}\"\n[targets.dev.connection]\npath = \"w_${ENV:WHO}.duckdb\"\n");
  ConfigInputs unset = WithEnvironment({});
  sluice::Project loaded = project.Load(unset);  // what `sluice compile` does: no connection needed
  EXPECT_EQ(loaded.target.raw_connection.at("path").value, "w_${ENV:WHO}.duckdb");
  EXPECT_EQ(loaded.target.templates.deferred().at("secret"), "CH_PASSWORD");
  Diagnostic d = ErrorOf([&] { ExpandConnection(loaded.target); });
  EXPECT_EQ(d.code, "SLU-TEMPLATE-003");
  EXPECT_EQ(At(d), "streambuild_project.toml:11:8");
  EXPECT_NE(d.message.find("'connection.path'"), std::string::npos);
  EXPECT_NE(d.message.find("'WHO'"), std::string::npos);

  sluice::Project connected = project.Load(WithEnvironment({{"WHO", "ann"}}));
  EXPECT_EQ(ExpandConnection(connected.target).at("path"), "w_ann.duckdb");
}

TEST(ProjectConfigConnection, DeferredVariableFailsOnlyTheConnectionThatUsesIt) {
  ProjectFiles project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\ndefault_target = \"dev\"\n[vars]\nsecret = \"${ENV:CH_PASSWORD}\"\n"
                "[connection]\nhost = \"h\"\npassword = \"${secret}\"\n[targets.dev]\ndatabase = \"a\"\n");
  TargetSettings target = project.Resolve(WithEnvironment({}));
  Diagnostic d = ErrorOf([&] { ExpandConnection(target); });
  EXPECT_EQ(d.code, "SLU-TEMPLATE-003");
  EXPECT_EQ(At(d), "streambuild_project.toml:7:12");
  EXPECT_NE(d.message.find("CH_PASSWORD"), std::string::npos);
  // Overridden by a flag or the fixed environment variable: the template is never expanded.
  ConfigInputs flag = WithEnvironment({});
  flag.connection.password = "from flag";
  EXPECT_EQ(ExpandConnection(project.Resolve(flag)).at("password"), "from flag");
  ConfigInputs environment = WithEnvironment({{"STREAMBUILD_CLICKHOUSE_PASSWORD", "from env"}});
  EXPECT_EQ(ExpandConnection(project.Resolve(environment)).at("password"), "from env");
  EXPECT_EQ(ExpandConnection(project.Resolve(WithEnvironment({{"CH_PASSWORD", "pw"}}))).at("password"), "pw");
}

TEST(ProjectConfigConnection, ErrorsNameTheKeyNeverTheSecret) {
  ProjectFiles project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\ndefault_target = \"dev\"\n[vars]\npw = [\"s3cr3t-value\"]\nport = \"http\"\n"
                "[connection]\npassword = \"${pw}\"\nport = \"${port}\"\n[targets.dev]\ndatabase = \"a\"\n");
  TargetSettings target = project.Resolve(WithEnvironment({}));
  Diagnostic d = ErrorOf([&] { ExpandConnection(target); });
  EXPECT_TRUE(d.code == "SLU-TEMPLATE-007" || d.code == "SLU-CONFIG-003") << d.code;
  EXPECT_EQ(d.message.find("s3cr3t"), std::string::npos);
  EXPECT_EQ(d.message.find("http"), std::string::npos);
  EXPECT_EQ(d.hint.find("s3cr3t"), std::string::npos);
}

TEST(ProjectConfigConnection, PortMayBeATemplateResolvingToAnInteger) {
  ProjectFiles project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\ndefault_target = \"dev\"\n[connection]\nport = \"${ENV:CH_PORT}\"\n"
                "settings = { max_threads = \"${threads}\" }\n[vars]\nthreads = 4\n[targets.dev]\ndatabase = \"a\"\n");
  std::map<std::string, std::string> connection =
      ExpandConnection(project.Resolve(WithEnvironment({{"CH_PORT", "8123"}})));
  EXPECT_EQ(connection.at("port"), "8123");
  EXPECT_EQ(connection.at("settings.max_threads"), "4");
  Diagnostic d = ErrorOf([&] { ExpandConnection(project.Resolve(WithEnvironment({{"CH_PORT", "x1"}}))); });
  EXPECT_EQ(d.code, "SLU-CONFIG-003");
  EXPECT_EQ(At(d), "streambuild_project.toml:4:8");
}

TEST(ProjectConfigConnection, VariablesFromTheEnvironmentAreKeptApartFromMacroVariables) {
  ProjectFiles project;
  project.Project(
      "[vars]\nregion = \"eu\"\nkey = \"${ENV:API_KEY}\"\ndsn = \"token=${key}\"\nhome = \"${ENV:UNSET_HOME}\"\n"
      "[connection]\npassword = \"${key}\"\n");
  ConfigInputs inputs = WithEnvironment({{"API_KEY", "sk-live-1"}});
  TargetSettings target = project.Resolve(inputs);
  EXPECT_EQ(target.variables, nlohmann::json({{"region", "eu"}}));
  EXPECT_EQ(target.environment_variables,
            (std::map<std::string, std::string>{{"dsn", "API_KEY"}, {"home", "UNSET_HOME"}, {"key", "API_KEY"}}));
  EXPECT_EQ(ExpandConnection(target).at("password"), "sk-live-1") << "connections still read them";
  // --vars replaces the definition, so the value no longer comes from the environment.
  inputs.vars_json = R"({"key": "plain"})";
  TargetSettings overridden = project.Resolve(inputs);
  EXPECT_EQ(overridden.variables, nlohmann::json({{"region", "eu"}, {"key", "plain"}, {"dsn", "token=plain"}}));
  EXPECT_EQ(overridden.environment_variables, (std::map<std::string, std::string>{{"home", "UNSET_HOME"}}));
}

TEST(ProjectConfigConnection, VariablesReachTheLoadedProject) {
  ProjectFiles project;
  project.Project("[vars]\nregion = \"eu\"\nbatch = 50\n");
  ConfigInputs inputs;
  inputs.vars_json = R"({"batch": 10})";
  sluice::Project loaded = project.Load(inputs);
  EXPECT_EQ(loaded.target.variables, nlohmann::json({{"region", "eu"}, {"batch", 10}}));
}

// ---- The mode switch, both generations -----------------------------------------------------------------

TEST(ProjectConfigModes, SettingsVirtualEnvironmentsSetsTheDefaultMode) {
  ProjectFiles project;
  project.Project("[settings]\nvirtual_environments = true\n");
  TargetSettings target = project.Resolve();
  EXPECT_EQ(target.default_pipeline_mode, PipelineMode::kVirtual);
  EXPECT_EQ(target.default_pipeline_mode_key, "settings.virtual_environments");
  EXPECT_EQ(LoadPipelineConfig(project.root(), "main", std::nullopt, target).mode, PipelineMode::kVirtual);
  project.Project("[settings]\nvirtual_environments = false\n");
  EXPECT_EQ(project.Resolve().default_pipeline_mode, PipelineMode::kDirect);
}

TEST(ProjectConfigModes, SettingsVirtualEnvironmentsMayBeATemplatedBoolean) {
  ProjectFiles project;
  project.Project("[settings]\nvirtual_environments = \"${ve}\"\n[vars]\nve = true\n");
  EXPECT_EQ(project.Resolve().default_pipeline_mode, PipelineMode::kVirtual);
  ConfigInputs inputs;
  inputs.vars_json = R"({"ve": "yes"})";
  Diagnostic d = ErrorOf([&] { project.Resolve(inputs); });
  EXPECT_EQ(d.code, "SLU-TEMPLATE-007");
  EXPECT_EQ(At(d), "streambuild_project.toml:7:24");
}

TEST(ProjectConfigModes, DefaultsPipelineModeWithLocalOverride) {
  ProjectFiles project;
  project.Project("[defaults]\npipeline_mode = \"virtual\"\n");
  EXPECT_EQ(project.Resolve().default_pipeline_mode, PipelineMode::kVirtual);
  project.Local("[defaults]\npipeline_mode = \"direct\"\n");
  TargetSettings target = project.Resolve();
  EXPECT_EQ(target.default_pipeline_mode, PipelineMode::kDirect);
  EXPECT_EQ(target.default_pipeline_mode_key, "defaults.pipeline_mode");
}

TEST(ProjectConfigModes, DisagreeingSwitchesAreAnError) {
  ProjectFiles project;
  project.Project("[settings]\nvirtual_environments = true\n[defaults]\npipeline_mode = \"direct\"\n");
  Diagnostic d = ErrorOf([&] { project.Resolve(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-009");
  EXPECT_EQ(At(d), "streambuild_project.toml:9:17");
  EXPECT_NE(d.message.find("streambuild_project.toml:7"), std::string::npos);
  project.Project("[settings]\nvirtual_environments = true\n[defaults]\npipeline_mode = \"virtual\"\n");
  EXPECT_EQ(project.Resolve().default_pipeline_mode, PipelineMode::kVirtual);
  // The local override is the effective pipeline_mode, so it must agree too.
  project.Local("[defaults]\npipeline_mode = \"direct\"\n");
  d = ErrorOf([&] { project.Resolve(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-009");
  EXPECT_EQ(At(d), "streambuild_local.toml:2:17");
}

TEST(ProjectConfigModes, PipelineTomlModeWinsOverTheDefault) {
  ProjectFiles project;
  project.Project("[defaults]\npipeline_mode = \"virtual\"\n");
  project.Write("pipelines/main/pipeline.toml", "mode = \"direct\"\n");
  TargetSettings target = project.Resolve();
  PipelineConfig config = LoadPipelineConfig(project.root(), "main", "pipelines/main/pipeline.toml", target);
  EXPECT_EQ(config.mode, PipelineMode::kDirect);
  EXPECT_EQ(config.file, "pipelines/main/pipeline.toml");
}

// ---- pipeline.toml -------------------------------------------------------------------------------------

TEST(PipelineConfigValues, EveryInvalidValueIsALocatedError) {
  const std::string file = "pipelines/main/pipeline.toml:";
  const std::vector<ValueCase> cases = {
      {"bounded_replay_fallback = \"full\"\n", "SLU-CONFIG-010", file + "1:27"},
      {"mode = \"virtual\"\nbounded_replay_fallback = \"sometimes\"\n", "SLU-CONFIG-007", file + "2:27"},
      {"mode = \"virtual\"\n[replay_on_change]\nbreaking = \"bounded-\"\n", "SLU-CONFIG-007", file + "3:12"},
      {"mode = \"virtual\"\n[protection]\nwarning = \"careful\"\n", "SLU-CONFIG-011", file + "2:1"},
      {"[protection]\nconfirmation = \"-drop\"\n", "SLU-CONFIG-007", file + "2:16"},
      {"[protection]\nwarning = \"  \"\n", "SLU-CONFIG-007", file + "2:11"},
      {"[protection]\nconfirmation = 7\n", "SLU-CONFIG-003", file + "2:16"},
      {"[execution.replay.settings]\n", "SLU-CONFIG-007", file + "1:1"},
      {"[execution.replay.settings]\n\"max-threads\" = 4\n", "SLU-CONFIG-007", file + "2:1"},
      {"[execution.replay.settings]\nmax_threads = [4]\n", "SLU-CONFIG-003", file + "2:15"},
      {"[audit_defaults]\nwarmup = \"-1m\"\n", "SLU-CONFIG-007", file + "2:10"},
      {"[audit_defaults]\nseverity = \"info\"\n", "SLU-CONFIG-007", file + "2:12"},
      {"[naming]\nview_prefix = false\n", "SLU-CONFIG-003", file + "2:15"},
  };
  for (const ValueCase& c : cases) {
    ProjectFiles project;
    project.Write("pipelines/main/pipeline.toml", c.tail);
    Diagnostic d = ErrorOf([&] { project.Load(); });
    EXPECT_EQ(d.code, c.code) << c.tail << d.message;
    EXPECT_EQ(At(d), c.at) << c.tail << d.message;
    EXPECT_FALSE(d.source_line.empty()) << c.tail;
    EXPECT_FALSE(d.hint.empty()) << c.tail;
  }
}

TEST(PipelineConfigValues, KeepsEveryKey) {
  ProjectFiles project;
  project.Write("pipelines/main/pipeline.toml",
                "mode = \"virtual\"\ndatabase = \"silver\"\nbounded_replay_fallback = \"full\"\n"
                "[replay_on_change]\nbreaking = \"bounded-12h\"\n[naming]\ntable_prefix = \"\"\n"
                "[audit_defaults]\nseverity = \"error\"\nevery = \"1h\"\nwarmup = \"10m\"\n"
                "[execution.replay.settings]\nmax_threads = 4\nmax_memory_usage = \"10G\"\nasync = true\n");
  PipelineConfig config = LoadPipelineConfig(project.root(), "main", "pipelines/main/pipeline.toml", project.Resolve());
  EXPECT_EQ(config.mode, PipelineMode::kVirtual);
  EXPECT_EQ(config.database, "silver");
  EXPECT_EQ(config.replay_on_change->breaking->lookback_seconds, 12 * 3600);
  EXPECT_FALSE(config.replay_on_change->non_breaking);
  EXPECT_EQ(config.bounded_replay_fallback, BoundedReplayFallback::kFull);
  EXPECT_EQ(config.table_prefix, "");
  EXPECT_EQ(config.audit_defaults.severity, AuditSeverity::kError);
  EXPECT_EQ(config.audit_defaults.warmup_seconds, 600);
  EXPECT_EQ(config.replay_settings,
            (std::map<std::string, std::string>{{"async", "true"}, {"max_memory_usage", "10G"}, {"max_threads", "4"}}));
}

TEST(PipelineConfigValues, ProtectionDefaultsOnDirectPipelines) {
  ProjectFiles project;
  project.Write("pipelines/main/pipeline.toml", "[protection]\n");
  PipelineConfig config = LoadPipelineConfig(project.root(), "main", "pipelines/main/pipeline.toml", project.Resolve());
  ASSERT_TRUE(config.protection);
  EXPECT_EQ(config.protection->confirmation, "main");
  EXPECT_NE(config.protection->warning.find("'main' is protected"), std::string::npos);
  PipelineConfig odd =
      LoadPipelineConfig(project.root(), "_odd name", "pipelines/main/pipeline.toml", project.Resolve());
  EXPECT_EQ(odd.protection->confirmation, "CONFIRM__odd_name");
  project.Write("pipelines/main/pipeline.toml", "[protection]\nconfirmation = \"DROP:orders-v2.1\"\n");
  EXPECT_EQ(LoadPipelineConfig(project.root(), "main", "pipelines/main/pipeline.toml", project.Resolve())
                .protection->confirmation,
            "DROP:orders-v2.1");
}

// ---- Replay policies -----------------------------------------------------------------------------------

TEST(ReplayPolicies, ProjectPolicyNeedsAVirtualPipeline) {
  ProjectFiles project;
  project.Project("[defaults.replay_on_change]\nnon_breaking = \"bounded-1d\"\n");
  Diagnostic d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-010");
  EXPECT_EQ(d.location.file, "streambuild_project.toml");
  EXPECT_EQ(d.location.line, 6);
  // One virtual pipeline makes the project-level policy legitimate.
  project.Write("pipelines/other/pipeline.toml", "mode = \"virtual\"\n");
  project.Write("pipelines/other/o.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __source(\"src\")\n");
  EXPECT_NO_THROW(project.Load());

  ProjectFiles fallback;
  fallback.Project("[defaults]\npipeline_mode = \"virtual\"\nbounded_replay_fallback = \"full\"\n");
  EXPECT_NO_THROW(fallback.Load());
  fallback.Write("pipelines/main/pipeline.toml", "mode = \"direct\"\n");
  d = ErrorOf([&] { fallback.Load(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-010");
  EXPECT_EQ(At(d), "streambuild_project.toml:8:27");
  EXPECT_NE(d.message.find("every pipeline"), std::string::npos);
}

TEST(ReplayPolicies, PipelinePolicyOnADirectPipelineIsAnError) {
  ProjectFiles project;
  project.Write("pipelines/main/pipeline.toml", "database = \"x\"\n[replay_on_change]\nbreaking = \"full\"\n");
  Diagnostic d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-010");
  EXPECT_EQ(d.location.file, "pipelines/main/pipeline.toml");
  EXPECT_EQ(d.location.line, 2);
  project.Project("[settings]\nvirtual_environments = true\n");
  EXPECT_NO_THROW(project.Load());
}

TEST(ReplayPolicies, ModelPolicyOnADirectPipelineIsLocatedInTheModel) {
  ProjectFiles project;
  project.Write("pipelines/main/b.sql",
                "MODEL (\n  kind table,\n  bounded_replay_fallback full,\n);\n"
                "SELECT CAST(id AS INT) AS id FROM __ref(\"a\")\n");
  Diagnostic d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-010");
  EXPECT_EQ(At(d), "pipelines/main/b.sql:3:3");
  EXPECT_EQ(d.source_line, "  bounded_replay_fallback full,");
  project.Write("pipelines/main/pipeline.toml", "mode = \"virtual\"\n");
  EXPECT_NO_THROW(project.Load());

  PipelineConfig direct;
  direct.name = "main";
  Diagnostic explicit_offset = ErrorOf([&] {
    CheckModelReplayPolicy(direct, "pipelines/main/c.sql", "MODEL (\n  replay_on_change (breaking full)\n);",
                           ModelReplayPolicy{"replay_on_change", 10});
  });
  EXPECT_EQ(At(explicit_offset), "pipelines/main/c.sql:2:3");
  EXPECT_NO_THROW(CheckModelReplayPolicy(direct, "pipelines/main/c.sql", "MODEL ();", std::nullopt));
}

}  // namespace
}  // namespace sluice
