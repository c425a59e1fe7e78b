// End-to-end tests of `sluice compile` and of project errors: each malformed project yields exactly one
// located error, exit code 1, and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

TEST(CompileE2E, DiscoverPrintsEachPipelineWithItsModelsAndWritesNothing) {
  ScratchProject project("shop");
  ProcessResult result = project.Run({"discover"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "project shop, target test (duckdb)\n"
            "pipeline core: namespace core, direct, source events\n"
            "  clean_events  table\n"
            "  daily_totals  table, daily from 2026-03-01\n"
            "  top_users     view\n"
            "  user_totals   table\n"
            "pipeline people: namespace raw, direct, source users\n"
            "  dim_users  table\n"
            "sources\n"
            "  events  seed, raw.events\n"
            "  users   seed, raw.users\n"
            "2 pipeline(s), 5 model(s), 2 source(s)\n");
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target"));
}

TEST(CompileE2E, DiscoverJsonIsStreamBuildsArrayOfPipelineNames) {
  ScratchProject project("shop");
  ProcessResult result = project.Run({"discover", "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, "[\"core\",\"people\"]\n");
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target"));
}

TEST(CompileE2E, WritesManifestAndDagDeterministically) {
  ScratchProject project("shop");
  ProcessResult result = project.Run({"compile"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("2 pipeline(s), 5 model(s), 2 source(s)"), std::string::npos) << result.out;
  std::string manifest_text = project.Read("target/manifest.json");
  std::string dag_text = project.Read("target/streambuild_dag.json");
  ASSERT_EQ(project.Run({"compile"}).exit_code, 0);
  EXPECT_EQ(project.Read("target/manifest.json"), manifest_text);
  EXPECT_EQ(project.Read("target/streambuild_dag.json"), dag_text);
  EXPECT_EQ(manifest_text.back(), '\n');

  json manifest = json::parse(manifest_text);
  EXPECT_EQ(manifest["metadata"]["tool"], "sluice");
  EXPECT_EQ(manifest["metadata"]["manifest_version"], 1);
  EXPECT_EQ(manifest["artifacts"],
            json::array({"manifest.json", "streambuild_dag.json", "compiled/models/core/clean_events.sql",
                         "compiled/models/core/daily_totals.sql", "compiled/models/core/top_users.sql",
                         "compiled/models/core/user_totals.sql", "compiled/models/people/dim_users.sql",
                         "compiled/workflows/core/steps/0001_create_schema_core.sql",
                         "compiled/workflows/core/steps/0002_replace_table_clean_events.sql",
                         "compiled/workflows/core/steps/0003_replace_table_daily_totals.sql",
                         "compiled/workflows/core/steps/0004_replace_table_user_totals_table.sql",
                         "compiled/workflows/core/steps/0005_replace_view_top_users.sql",
                         "compiled/workflows/core/workflow.json", "compiled/workflows/core/workflow.sql",
                         "compiled/workflows/people/steps/0001_create_schema_raw.sql",
                         "compiled/workflows/people/steps/0002_replace_table_dim_users.sql",
                         "compiled/workflows/people/workflow.json", "compiled/workflows/people/workflow.sql"}));
  for (const json& path : manifest["artifacts"]) {
    EXPECT_TRUE(std::filesystem::exists(project.root() / "target" / path.get<std::string>())) << path;
  }
  EXPECT_EQ(project.Read("target/compiled/models/core/user_totals.sql"),
            "SELECT\n  CAST(e.user_id AS BIGINT) AS user_id,\n  CAST(u.user_name AS VARCHAR) AS user_name,\n"
            "  CAST(sum(e.amount) AS BIGINT) AS amount\nFROM clean_events AS e\n"
            "JOIN dim_users AS u ON u.user_id = e.user_id\nGROUP BY e.user_id, u.user_name\n");
  EXPECT_EQ(manifest["models"]["user_totals"]["query_path"], "compiled/models/core/user_totals.sql");
  for (const char* key : {"artifacts", "metadata", "macros", "pipelines", "sources", "models", "audits", "tests"}) {
    EXPECT_TRUE(manifest.contains(key)) << key;
  }
  const json& model = manifest["models"]["user_totals"];
  EXPECT_EQ(model["logical_key"], "model:user_totals");
  EXPECT_EQ(model["pipeline"], "core");
  EXPECT_EQ(model["relation_name"], "user_totals_table");
  EXPECT_EQ(model["source"], "events");
  EXPECT_EQ(model["refs"].size(), 2u);
  EXPECT_EQ(model["refs"][1]["ref_type"], "reference");
  EXPECT_EQ(manifest["models"]["top_users"]["spec"], nullptr);
  EXPECT_EQ(manifest["pipelines"]["core"]["source_name"], "events");
  EXPECT_EQ(manifest["pipelines"]["core"]["resolved_database"], "core");
  EXPECT_EQ(manifest["pipelines"]["people"]["source_name"], "users");
  EXPECT_EQ(manifest["sources"]["events"]["logical_key"], "source:events");
  EXPECT_EQ(manifest["sluice"]["partitions"]["daily_totals"]["column"], "event_date");
  EXPECT_EQ(manifest["sluice"]["seeds"]["events"]["path"], "seeds/events.csv");

  json dag = json::parse(dag_text);
  EXPECT_EQ(dag["metadata"]["tool"], "sluice");
  EXPECT_EQ(dag["metadata"]["dag_version"], 1);
  ASSERT_EQ(dag["nodes"].size(), 7u);
  EXPECT_EQ(dag["nodes"][0]["id"], "source:events");
  EXPECT_EQ(dag["nodes"][2]["id"], "model:clean_events");
  json expected_edges = json::array({
      {{"edge_type", "driving_input"}, {"from_id", "model:clean_events"}, {"to_id", "model:daily_totals"}},
      {{"edge_type", "driving_input"}, {"from_id", "model:clean_events"}, {"to_id", "model:user_totals"}},
      {{"edge_type", "driving_input"}, {"from_id", "source:events"}, {"to_id", "model:clean_events"}},
      {{"edge_type", "driving_input"}, {"from_id", "source:users"}, {"to_id", "model:dim_users"}},
      {{"edge_type", "reference"}, {"from_id", "model:dim_users"}, {"to_id", "model:user_totals"}},
      {{"edge_type", "reference"}, {"from_id", "model:user_totals"}, {"to_id", "model:top_users"}},
  });
  EXPECT_EQ(dag["edges"], expected_edges);
}

TEST(CompileE2E, AFailedCompileKeepsThePreviousArtifactsAndRunFolder) {
  ScratchProject project("shop");
  ASSERT_EQ(project.Run({"compile"}).exit_code, 0);
  std::string manifest = project.Read("target/manifest.json");
  std::string model = project.Read("target/compiled/models/core/clean_events.sql");
  project.Write("target/run/tests/evidence.txt", "kept");
  project.Write("pipelines/core/clean_events.sql", "MODEL (kind table);\nSELECT * FROM __source(\"events\")\n");
  ProcessResult failed = project.Run({"compile"});
  EXPECT_EQ(failed.exit_code, 1);
  EXPECT_NE(failed.err.find("SLU-MODEL-104"), std::string::npos) << failed.err;
  EXPECT_EQ(project.Read("target/manifest.json"), manifest);
  EXPECT_EQ(project.Read("target/compiled/models/core/clean_events.sql"), model);
  EXPECT_EQ(project.Read("target/run/tests/evidence.txt"), "kept");
  for (const auto& entry : std::filesystem::directory_iterator(project.root() / "target")) {
    bool staging = entry.is_directory() && entry.path().filename().string().rfind(".sluice-", 0) == 0;
    EXPECT_FALSE(staging) << "no staging folder left behind: " << entry.path();
  }
}

// The files under `folder` (recursively) whose bytes contain `needle`; none when the folder does not exist.
std::vector<std::string> FilesContaining(const std::filesystem::path& folder, const std::string& needle) {
  std::vector<std::string> found;
  if (!std::filesystem::exists(folder)) return found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(folder)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.find(needle) != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

TEST(CompileE2E, AValueFromTheEnvironmentNeverReachesAnArtifactThroughAMacro) {
  const std::string secret = "sk-live-e2e-31337";
  const std::map<std::string, std::string> environment = {{"SLUICE_E2E_API_KEY", secret}};
  ScratchProject project("shop");
  project.Write("streambuild_project.toml",
                "name = \"shop\"\nadapter = \"duckdb\"\ndefault_target = \"test\"\n\n"
                "[naming]\ntable_prefix = \"\"\nview_prefix = \"\"\n\n"
                "[vars]\napi_key = \"${ENV:SLUICE_E2E_API_KEY}\"\nauth = \"Bearer ${api_key}\"\nregion = \"eu\"\n\n"
                "[targets.test]\ndatabase = \"raw\"\n\n"
                "[targets.test.connection]\npath = \"warehouse.duckdb\"\npassword = \"${api_key}\"\n");
  project.Write("macros/auth.py",
                "from streambuild.compiler.macros.models import MacroContext\n\n\n"
                "def auth_header(ctx: MacroContext) -> str:\n"
                "    return \"'\" + ctx.variables['auth'] + \"'\"\n\n\n"
                "def region(ctx: MacroContext) -> str:\n"
                "    return repr(ctx.variables['region'])\n");
  auto write_model = [&](const std::string& call) {
    project.Write("pipelines/core/top_users.sql",
                  "MODEL (\n  kind view,\n);\n\nSELECT\n  CAST(user_name AS VARCHAR) AS user_name,\n  CAST(" + call +
                      " AS VARCHAR) AS extra\nFROM __ref(\"user_totals\")\n");
  };
  write_model("@auth_header()");

  // Set or unset, reading the variable in a macro is the same located error: compile never depends on it.
  for (const auto& env : {environment, std::map<std::string, std::string>{}}) {
    ProcessResult rejected = project.Run({"compile"}, env);
    EXPECT_EQ(rejected.exit_code, 1) << rejected.out << rejected.err;
    EXPECT_EQ(Count(rejected.err, "error["), 1u) << rejected.err;
    EXPECT_NE(rejected.err.find("pipelines/core/top_users.sql:7:8: error[SLU-MACRO-023]"), std::string::npos)
        << rejected.err;
    EXPECT_NE(rejected.err.find("environment variable 'SLUICE_E2E_API_KEY'"), std::string::npos) << rejected.err;
    EXPECT_EQ(rejected.out.find(secret), std::string::npos) << rejected.out;
    EXPECT_EQ(rejected.err.find(secret), std::string::npos) << rejected.err;
    EXPECT_FALSE(std::filesystem::exists(project.root() / "target"));
  }

  // The same variable in the connection settings, and other variables in macros, keep working.
  write_model("@region()");
  ProcessResult compiled = project.Run({"compile"}, environment);
  ASSERT_EQ(compiled.exit_code, 0) << compiled.err;
  EXPECT_NE(project.Read("target/compiled/models/core/top_users.sql").find("CAST('eu' AS VARCHAR) AS extra"),
            std::string::npos);
  EXPECT_EQ(FilesContaining(project.root() / "target", secret), std::vector<std::string>{});
  EXPECT_EQ(compiled.out.find(secret), std::string::npos) << compiled.out;
}

struct MalformedCase {
  std::string name;
  std::string file;
  std::string contents;
  std::string code;
  std::string location;  // "file:line:col"
};

void PrintTo(const MalformedCase& c, std::ostream* out) { *out << c.name; }

class MalformedProject : public ::testing::TestWithParam<MalformedCase> {};

TEST_P(MalformedProject, YieldsOneLocatedErrorAndWritesNothing) {
  const MalformedCase& c = GetParam();
  ScratchProject project("shop");
  project.Write(c.file, c.contents);
  for (const char* command : {"compile", "run"}) {
    ProcessResult result = project.Run({command});
    EXPECT_EQ(result.exit_code, 1) << command << "\n" << result.err;
    EXPECT_EQ(Count(result.err, "error["), 1u) << result.err;
    EXPECT_NE(result.err.find(c.location + ": error[" + c.code + "]"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("hint: "), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(project.root() / "target")) << command;
    EXPECT_FALSE(std::filesystem::exists(project.root() / "warehouse.duckdb")) << command;
    EXPECT_FALSE(std::filesystem::exists(project.root() / ".sluice")) << command;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Projects, MalformedProject,
    ::testing::Values(
        MalformedCase{"bad_toml", "streambuild_project.toml",
                      "name = \"shop\"\nadapter = \"duckdb\"\ndefault_target = = \"test\"\n", "SLU-CONFIG-001",
                      "streambuild_project.toml:3:18"},
        MalformedCase{"unknown_project_key", "streambuild_project.toml",
                      "name = \"shop\"\nadapter = \"duckdb\"\ndefault_target = \"test\"\ncolour = \"blue\"\n"
                      "[targets.test]\ndatabase = \"raw\"\n",
                      "SLU-CONFIG-002", "streambuild_project.toml:4:1"},
        MalformedCase{"bad_header", "pipelines/core/clean_events.sql",
                      "MODEL (\n  kind: table\n);\nSELECT CAST(1 AS INT) AS x FROM __source(\"events\")\n",
                      "SLU-HEADER-003", "pipelines/core/clean_events.sql:2:7"},
        MalformedCase{"unknown_model_key", "pipelines/core/clean_events.sql",
                      "MODEL (\n  kind table,\n  materialized \"incremental\",\n);\n"
                      "SELECT CAST(1 AS INT) AS x FROM __source(\"events\")\n",
                      "SLU-MODEL-001", "pipelines/core/clean_events.sql:3:3"},
        MalformedCase{"unknown_ref", "pipelines/core/daily_totals.sql",
                      "MODEL ();\nSELECT CAST(1 AS INT) AS x\nFROM __ref(\"clean_event\")\n", "SLU-GRAPH-002",
                      "pipelines/core/daily_totals.sql:3:6"},
        MalformedCase{"cycle", "pipelines/core/clean_events.sql",
                      "MODEL ();\nSELECT CAST(1 AS INT) AS x\nFROM __ref(\"user_totals\")\n", "SLU-GRAPH-001",
                      "pipelines/core/user_totals.sql:9:6"},
        MalformedCase{"two_sources_one_pipeline", "pipelines/core/more_users.sql",
                      "MODEL ();\nSELECT CAST(user_id AS BIGINT) AS user_id\nFROM __source(\"users\")\n",
                      "SLU-GRAPH-003", "pipelines/core/more_users.sql:3:6"},
        MalformedCase{"unknown_source_key", "sources/seeds.yml",
                      "sources:\n  - kind: seed\n    name: events\n    path: seeds/events.csv\n    delimiter: ';'\n",
                      "SLU-SOURCE-002", "sources/seeds.yml:5:5"},
        MalformedCase{"two_driving_inputs", "pipelines/core/daily_totals.sql",
                      "MODEL ();\nSELECT CAST(1 AS INT) AS x\nFROM __ref(\"clean_events\")\nJOIN __ref(\"dim_users\") ON true\n",
                      "SLU-MODEL-011", "pipelines/core/daily_totals.sql:4:6"},
        MalformedCase{"unterminated_string", "pipelines/core/daily_totals.sql",
                      "MODEL ();\nSELECT CAST('x AS VARCHAR) AS x\nFROM __ref(\"clean_events\")\n", "SLU-SQL-001",
                      "pipelines/core/daily_totals.sql:2:13"}),
    [](const ::testing::TestParamInfo<MalformedCase>& info) { return info.param.name; });

}  // namespace
}  // namespace sluice::testing
