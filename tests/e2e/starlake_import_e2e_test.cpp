// End-to-end tests of `sluice starlake import`: the binary reads a generated Dagster module and a task_deps JSON,
// prints the job graph (JSON or text), writes nothing, and exits 1 with a located error on a malformed file.
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

TEST(StarlakeImportE2E, WithoutJsonPrintsTheGraphForPeople) {
  ScratchProject project("shop");
  project.Write("deps.json",
                R"([{"data": {"name": "kpi.a", "typ": "task"}, "children": [{"data": {"name": "s.t", "typ": "table"}}]}])");
  ProcessResult result = project.Run({"starlake", "import", (project.root() / "deps.json").string()});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out,
            "job deps\n"
            "  trigger: datasets s_t\n"
            "  nodes: start, kpi_a_task, end\n"
            "  edges:\n"
            "    start -> kpi_a_task\n"
            "    kpi_a_task -> end\n");
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
