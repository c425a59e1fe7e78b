// End-to-end tests of `sluice starlake import` and `sluice pipelines validate`: the binary reads a generated Dagster
// module or a task_deps JSON and writes its Sluice pipeline file (or with --json prints the job graph and writes
// nothing), refuses to replace a differing file without --force, exits 1 with a located error on a malformed file;
// validate reads the written folder and locates a broken file's error.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Every file under `root`, relative, so a test can tell nothing was written.
std::set<std::string> FilesUnder(const fs::path& root) {
  std::set<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) files.insert(fs::relative(entry.path(), root).string());
  return files;
}

const char* kModule =
    "options = {'run_dependencies_first': 'false', 'SL_STARLAKE_PATH': 'starlake'}\n"
    "cron = \"None\"\n"
    "dependencies = StarlakeDependencies(dependencies=\"\"\"[\n"
    "  {\"data\": {\"name\": \"kpi.revenue\", \"typ\": \"task\", \"sink\": \"kpi.revenue\"},\n"
    "   \"children\": [{\"data\": {\"name\": \"Shop.Orders\", \"typ\": \"table\", \"cron\": \"0 0 * * *\"}}]},\n"
    "  {\"data\": {\"name\": \"kpi.report\", \"typ\": \"task\"},\n"
    "   \"children\": [{\"data\": {\"name\": \"kpi.revenue\", \"typ\": \"task\"}}]}\n"
    "]\"\"\")\n";

TEST(StarlakeImportE2E, PrintsTheJobGraphAsJsonAndWritesNothing) {
  ScratchProject project("shop");
  project.Write("dags/Shop_KPI.py", kModule);
  const std::set<std::string> before = FilesUnder(project.root());
  ProcessResult result = project.Run({"starlake", "import", (project.root() / "dags/Shop_KPI.py").string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  EXPECT_EQ(result.err, "");
  const nlohmann::json graph = nlohmann::json::parse(result.out);
  const nlohmann::json expected = nlohmann::json::parse(R"({"jobs": [{
    "name": "shop_kpi",
    "nodes": ["start", "kpi_revenue_task", "kpi_report_task", "end"],
    "edges": [["start", "kpi_revenue_task"], ["kpi_revenue_task", "kpi_report_task"], ["kpi_report_task", "end"]],
    "sensor_assets": ["shop_orders"],
    "cron": null}]})");
  EXPECT_EQ(graph, expected) << result.out;
  EXPECT_EQ(FilesUnder(project.root()), before);
}

TEST(StarlakeImportE2E, RunDependenciesFirstRemovesTheTriggerAndAddsTheTables) {
  ScratchProject project("shop");
  std::string module = kModule;
  module.replace(module.find("'false'"), 7, "'true'");
  project.Write("dag.py", module);
  ProcessResult result = project.Run({"starlake", "import", (project.root() / "dag.py").string(), "--json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const nlohmann::json job = nlohmann::json::parse(result.out)["jobs"][0];
  EXPECT_EQ(job["sensor_assets"], nlohmann::json::array());
  EXPECT_EQ(job["nodes"], nlohmann::json::parse(R"(["start", "Shop_Orders_table", "kpi_revenue_task", "kpi_report_task", "end"])"));
}

// The pipeline file of kModule, as docs/starlake.md shows it.
const char* kPipeline =
    "pipeline: shop_kpi\n"
    "kind: transform\n"
    "options:\n"
    "  SL_STARLAKE_PATH: starlake\n"
    "  run_dependencies_first: \"false\"\n"
    "dependencies:\n"
    "  - name: kpi.revenue\n"
    "    type: task\n"
    "    children:\n"
    "      - name: Shop.Orders\n"
    "        type: table\n"
    "        cron: \"0 0 * * *\"\n"
    "  - name: kpi.report\n"
    "    type: task\n"
    "    children:\n"
    "      - name: kpi.revenue\n"
    "        type: task\n";

// Runs sluice with the scratch folder as the working directory, where `pipelines/` is written.
ProcessResult RunIn(const ScratchProject& project, const std::vector<std::string>& args) {
  return project.RunProgram(SluiceBinary(), args);
}

TEST(StarlakeImportE2E, WithoutJsonWritesThePipelineFileAndPrintsTheGraphForPeople) {
  ScratchProject project("shop");
  project.Write("deps.json",
                R"([{"data": {"name": "kpi.a", "typ": "task"}, "children": [{"data": {"name": "s.t", "typ": "table"}}]}])");
  ProcessResult result = RunIn(project, {"starlake", "import", "deps.json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "wrote pipelines/deps.yml\n"
            "job deps\n"
            "  trigger: datasets s_t\n"
            "  nodes: start, kpi_a_task, end\n"
            "  edges:\n"
            "    start -> kpi_a_task\n"
            "    kpi_a_task -> end\n");
  EXPECT_EQ(project.Read("pipelines/deps.yml"),
            "pipeline: deps\nkind: transform\ndependencies:\n  - name: kpi.a\n    type: task\n    children:\n"
            "      - name: s.t\n        type: table\n");
}

TEST(StarlakeImportE2E, ReimportingIsFineAndADifferingFileNeedsForce) {
  ScratchProject project("shop");
  project.Write("dags/Shop_KPI.py", kModule);
  ProcessResult first = RunIn(project, {"starlake", "import", "dags/Shop_KPI.py"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_TRUE(Has(first.out, "wrote pipelines/shop_kpi.yml\njob shop_kpi\n")) << first.out;
  EXPECT_EQ(project.Read("pipelines/shop_kpi.yml"), kPipeline);
  ProcessResult again = RunIn(project, {"starlake", "import", "dags/Shop_KPI.py"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(Has(again.out, "pipelines/shop_kpi.yml is up to date\n")) << again.out;

  std::string changed = kModule;
  changed.replace(changed.find("cron = \"None\""), 13, "cron = \"0 6 * * *\"");
  project.Write("dags/Shop_KPI.py", changed);
  ProcessResult refused = RunIn(project, {"starlake", "import", "dags/Shop_KPI.py"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.out, "");
  EXPECT_TRUE(Has(refused.err, "error[SLU-PIPELINE-011]: pipelines/shop_kpi.yml already exists with other contents"))
      << refused.err;
  EXPECT_TRUE(Has(refused.err, "--force")) << refused.err;
  EXPECT_EQ(project.Read("pipelines/shop_kpi.yml"), kPipeline);

  ProcessResult forced = RunIn(project, {"starlake", "import", "dags/Shop_KPI.py", "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_TRUE(Has(forced.out, "replaced pipelines/shop_kpi.yml\n")) << forced.out;
  EXPECT_TRUE(Has(project.Read("pipelines/shop_kpi.yml"), "cron: \"0 6 * * *\"\n"));

  ProcessResult elsewhere = RunIn(project, {"starlake", "import", "dags/Shop_KPI.py", "--output", "out/p"});
  ASSERT_EQ(elsewhere.exit_code, 0) << elsewhere.err;
  EXPECT_TRUE(fs::exists(project.root() / "out/p/shop_kpi.yml"));
}

TEST(StarlakeImportE2E, AFileNameThatIsNotAPipelineIdWritesNothing) {
  ScratchProject project("shop");
  project.Write("Shop-KPI.py", kModule);
  const std::set<std::string> before = FilesUnder(project.root());
  ProcessResult result = RunIn(project, {"starlake", "import", "Shop-KPI.py"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_TRUE(Has(result.err, "error[SLU-PIPELINE-005]: the pipeline id `shop-kpi`")) << result.err;
  EXPECT_EQ(FilesUnder(project.root()), before);
}

TEST(PipelinesValidateE2E, ReadsTheImportedFolderAndLocatesABrokenFile) {
  ScratchProject project("shop");
  project.Write("dags/Shop_KPI.py", kModule);
  ASSERT_EQ(RunIn(project, {"starlake", "import", "dags/Shop_KPI.py"}).exit_code, 0);
  ProcessResult valid = RunIn(project, {"pipelines", "validate"});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_TRUE(Has(valid.out, "pipelines/shop_kpi.yml: ok\njob shop_kpi\n  trigger: datasets shop_orders\n")) << valid.out;
  ProcessResult json = RunIn(project, {"pipelines", "validate", "pipelines", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const ProcessResult imported = RunIn(project, {"starlake", "import", "dags/Shop_KPI.py", "--json"});
  EXPECT_EQ(nlohmann::json::parse(json.out), nlohmann::json::parse(imported.out));

  project.Write("pipelines/broken.yml", "pipeline: broken\nkind: transform\ncron: every day\ndependencies: []\n");
  ProcessResult broken = RunIn(project, {"pipelines", "validate"});
  EXPECT_EQ(broken.exit_code, 1);
  EXPECT_TRUE(Has(broken.err, "pipelines/broken.yml:3:7: error[SLU-PIPELINE-006]: `cron` `every day` is not a cron "
                              "expression"))
      << broken.err;
  EXPECT_TRUE(Has(broken.out, "pipelines/shop_kpi.yml: ok\n")) << broken.out;
  EXPECT_EQ(RunIn(project, {"pipelines", "validate", "missing"}).exit_code, 1);
  EXPECT_EQ(RunIn(project, {"pipelines"}).exit_code, 2);
}

TEST(StarlakeImportE2E, AMalformedFileExitsOneWithALocatedError) {
  ScratchProject project("shop");
  project.Write("bad.py", "cron = None\noptions = {'retries': 1 'x': 2}\ndependencies = []\n");
  const std::string path = (project.root() / "bad.py").string();
  ProcessResult result = project.Run({"starlake", "import", path, "--json"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_TRUE(Has(result.err, path + ":2:25: error[SLU-STARLAKE-001]: expected `,` or `}` after a dict value, found `'`"))
      << result.err;
  ProcessResult missing = project.Run({"starlake", "import", (project.root() / "none.json").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_TRUE(Has(missing.err, "SLU-IO-001")) << missing.err;
}

TEST(StarlakeImportE2E, TheGroupNeedsACommandAndImportNeedsAFile) {
  ScratchProject project("shop");
  EXPECT_EQ(project.Run({"starlake"}).exit_code, 2);
  EXPECT_EQ(project.Run({"starlake", "import"}).exit_code, 2);
}

}  // namespace
}  // namespace sluice::testing
