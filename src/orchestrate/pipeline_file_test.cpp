// Unit tests of the Sluice pipeline file: the text written for each kind, parse/write round trips (values YAML
// could mistake for another type included), one test per error code with its line:col, folders, and saving.
// Every golden Starlake file also round-trips (tests/golden/starlake_test.cpp).
#include "orchestrate/orchestrate_test_support.hpp"
#include "orchestrate/pipeline_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "orchestrate/starlake_job_graph.hpp"

namespace sluice::orchestrate {
namespace {

namespace fs = std::filesystem;

// The module of docs/starlake.md's example.
const char* kShopModule =
    "options = {'run_dependencies_first': 'false', 'SL_STARLAKE_PATH': 'starlake'}\n"
    "cron = \"None\"\n"
    "dependencies = StarlakeDependencies(dependencies=\"\"\"[\n"
    "  {\"data\": {\"name\": \"kpi.revenue\", \"typ\": \"task\", \"sink\": \"kpi.revenue\"},\n"
    "   \"children\": [{\"data\": {\"name\": \"Shop.Orders\", \"typ\": \"table\", \"cron\": \"0 0 * * *\"}}]},\n"
    "  {\"data\": {\"name\": \"kpi.report\", \"typ\": \"task\"},\n"
    "   \"children\": [{\"data\": {\"name\": \"kpi.revenue\", \"typ\": \"task\"}}]}\n"
    "]\"\"\")\n";

// Its pipeline file, as docs/starlake.md shows it.
const char* kShopPipeline =
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

const char* kLoadModule =
    "options = {'sl_env_var': '{\"SL_ROOT\": \"/p\"}', 'pre_load_strategy': 'imported', 'retries': 2}\n"
    "schedules = [\n"
    "  {'schedule': 'daily', 'cron': '0 0 * * *', 'domains': [\n"
    "    {'name': 'starbake', 'tables': [{'name': 'customers'}, {'name': 'orders'}]}]},\n"
    "  {'schedule': 'None', 'cron': 'None', 'domains': [{'name': 'sales', 'tables': []}]},\n"
    "]\n";

const char* kLoadPipeline =
    "pipeline: starbake_load\n"
    "kind: load\n"
    "options:\n"
    "  pre_load_strategy: imported\n"
    "  retries: 2\n"
    "  sl_env_var: \"{\\\"SL_ROOT\\\": \\\"/p\\\"}\"\n"
    "schedules:\n"
    "  - name: daily\n"
    "    cron: \"0 0 * * *\"\n"
    "    domains:\n"
    "      - name: starbake\n"
    "        tables: [customers, orders]\n"
    "  - domains:\n"
    "      - name: sales\n"
    "        tables: []\n";

void ExpectError(const std::string& text, const std::string& code, int line, int column, const std::string& part) {
  const Diagnostic diagnostic = ErrorOf([&] { ParsePipelineFile("p.yml", text); });
  EXPECT_EQ(diagnostic.code, code) << diagnostic.message;
  EXPECT_EQ(diagnostic.location.file, "p.yml");
  EXPECT_EQ(diagnostic.location.line, line) << diagnostic.message;
  EXPECT_EQ(diagnostic.location.column, column) << diagnostic.message;
  EXPECT_NE(diagnostic.message.find(part), std::string::npos) << diagnostic.message;
}

TEST(PipelineFile, ATransformModuleIsWrittenAsDocumentedAndReadsBack) {
  const StarlakeDagFile module = ParseStarlakeDagFile("Shop_KPI.py", kShopModule);
  EXPECT_EQ(WritePipelineFile(module), kShopPipeline);
  EXPECT_EQ(ParsePipelineFile("shop_kpi.yml", kShopPipeline), module);
}

TEST(PipelineFile, ALoadModuleIsWrittenAsDocumentedAndReadsBack) {
  const StarlakeDagFile module = ParseStarlakeDagFile("StarBake_Load.py", kLoadModule);
  EXPECT_EQ(WritePipelineFile(module), kLoadPipeline);
  const StarlakeDagFile read = ParsePipelineFile("starbake_load.yml", kLoadPipeline);
  EXPECT_EQ(read, module);
  EXPECT_EQ(read.resolved.pre_load_strategy, StarlakePreLoadStrategy::kImported);
  EXPECT_EQ(BuildStarlakeJobGraph(read), BuildStarlakeJobGraph(module));
}

TEST(PipelineFile, HandWrittenKeysReadAsTheirValues) {
  const StarlakeDagFile file = ParsePipelineFile("p.yml",
                                                 "pipeline: shop\n"
                                                 "kind: transform\n"
                                                 "cron: '@daily'\n"
                                                 "options: {run_dependencies_first: true}\n"
                                                 "dependencies:\n"
                                                 "- name: kpi.a\n"
                                                 "  type: task\n"
                                                 "  sink: kpi.A_out\n"
                                                 "  freshness: 3600\n"
                                                 "  stream: s1\n"
                                                 "  children: [{name: raw.t, type: table, cron: 0 * * * *}]\n");
  EXPECT_EQ(file.cron, std::optional<std::string>("@daily"));
  EXPECT_TRUE(file.resolved.run_dependencies_first);
  const auto& dependency = std::get<StarlakeTransformDag>(file.dag).dependencies.at(0);
  EXPECT_EQ(dependency.sink, "kpi.A_out");
  EXPECT_EQ(dependency.freshness, 3600);
  EXPECT_EQ(dependency.stream, std::optional<std::string>("s1"));
  EXPECT_EQ(dependency.children.at(0).cron, std::optional<std::string>("0 * * * *"));
  EXPECT_EQ(dependency.children.at(0).sink, "raw.t");
  EXPECT_EQ(ParsePipelineFile("p.yml", WritePipelineFile(file)), file);
}

TEST(PipelineFile, ValuesYamlCouldMistakeKeepTheirTypeThroughARoundTrip) {
  StarlakeDagFile file;
  file.pipeline_id = "odd_values";
  file.options = nlohmann::json::parse(R"({
    "a_true": "true", "a_yes": "yes", "a_number": "10", "a_float": "1.5", "empty": "", "spaced": "a b: c",
    "quote": "say \"hi\"\n", "unicode": "é", "null_text": "null", "tilde": "~", "star": "*x", "hash": "#x",
    "bool": true, "int": -3, "float": 2.5, "none": null, "nested": {"options": "k=v", "list": [1, "2", false]},
    "needs quoting: key": "x"})");
  StarlakeDependency child{.name = "2024", .kind = StarlakeDependencyKind::kTable, .sink = "yes"};
  child.stream = "";
  file.dag = StarlakeTransformDag{{StarlakeDependency{.name = "true",
                                                      .kind = StarlakeDependencyKind::kTask,
                                                      .sink = "a b",
                                                      .cron = "0 0 * * 1-5",
                                                      .freshness = -1,
                                                      .children = {child}}}};
  const std::string text = WritePipelineFile(file);
  EXPECT_EQ(ParsePipelineFile("p.yml", text), file) << text;
  StarlakeDagFile load;
  load.pipeline_id = "l";
  load.dag = StarlakeLoadDag{{StarlakeSchedule{"on", std::nullopt, {StarlakeDomain{"no", {"1", "x,y", "[z]"}}}},
                              StarlakeSchedule{std::nullopt, "@hourly", {}}}};
  const std::string load_text = WritePipelineFile(load);
  EXPECT_EQ(ParsePipelineFile("p.yml", load_text), load) << load_text;
}

TEST(PipelineFile, EmptyDependenciesAndSchedulesAreEmptyLists) {
  StarlakeDagFile transform;
  transform.pipeline_id = "t";
  EXPECT_EQ(WritePipelineFile(transform), "pipeline: t\nkind: transform\ndependencies: []\n");
  EXPECT_EQ(ParsePipelineFile("p.yml", WritePipelineFile(transform)), transform);
  StarlakeDagFile load;
  load.pipeline_id = "l";
  load.dag = StarlakeLoadDag{};
  EXPECT_EQ(ParsePipelineFile("p.yml", WritePipelineFile(load)), load);
}

TEST(PipelineFileErrors, NotYaml001) {
  ExpectError("pipeline: a\nkind: [transform\n", "SLU-PIPELINE-001", 3, 1, "not YAML");
}

TEST(PipelineFileErrors, UnknownOrRepeatedKey002) {
  ExpectError("pipeline: a\nkind: transform\ndependencies: []\ncorn: x\n", "SLU-PIPELINE-002", 4, 1,
              "unknown key `corn` in the pipeline file; the keys are `pipeline`, `kind`, `cron`");
  const Diagnostic close = ErrorOf([] { ParsePipelineFile("p.yml", "pipeline: a\nkind: load\nschedule: []\n"); });
  EXPECT_EQ(close.hint, "did you mean `schedules`?");
  ExpectError("pipeline: a\nkind: transform\ndependencies:\n  - name: x\n    typ: task\n", "SLU-PIPELINE-002", 5, 5,
              "unknown key `typ` in a dependency");
  ExpectError("pipeline: a\nkind: transform\npipeline: b\ndependencies: []\n", "SLU-PIPELINE-002", 3, 1,
              "key `pipeline` is repeated");
}

TEST(PipelineFileErrors, WrongType003) {
  ExpectError("- a\n", "SLU-PIPELINE-003", 1, 1, "a pipeline file must be a mapping");
  ExpectError("pipeline: a\nkind: transform\ndependencies: {}\n", "SLU-PIPELINE-003", 3, 15,
              "`dependencies` must be a list, found a mapping");
  ExpectError("pipeline: a\nkind: stream\ndependencies: []\n", "SLU-PIPELINE-003", 2, 7, "expected `transform` or `load`");
  ExpectError("pipeline: a\nkind: transform\ndependencies:\n  - name: x\n    type: task\n    freshness: soon\n",
              "SLU-PIPELINE-003", 6, 16, "`freshness` must be an integer (seconds), found a string");
  ExpectError("pipeline: a\nkind: load\nschedules:\n  - domains:\n      - name: d\n        tables: [1, true]\n",
              "SLU-PIPELINE-003", 6, 18, "a table name must be a string, found an integer");
  ExpectError("pipeline: a\nkind: load\nschedules:\n  - domains:\n      - name: ''\n        tables: []\n",
              "SLU-PIPELINE-003", 5, 15, "a domain's `name` must not be empty");
}

TEST(PipelineFileErrors, MissingKey004) {
  ExpectError("pipeline: a\ndependencies: []\n", "SLU-PIPELINE-004", 1, 1, "the pipeline file needs `kind`");
  ExpectError("pipeline: a\nkind: transform\ndependencies:\n  - name: x\n", "SLU-PIPELINE-004", 4, 5,
              "a dependency (`x`) needs `type`");
  ExpectError("pipeline: a\nkind: load\n", "SLU-PIPELINE-004", 1, 1, "a load pipeline needs `schedules`");
}

TEST(PipelineFileErrors, BadPipelineId005) {
  ExpectError("kind: load\npipeline: Shop-KPI\nschedules: []\n", "SLU-PIPELINE-005", 2, 11, "`Shop-KPI`");
}

TEST(PipelineFileErrors, BadCron006) {
  ExpectError("pipeline: a\nkind: transform\ncron: 0 0 * *\ndependencies: []\n", "SLU-PIPELINE-006", 3, 7,
              "`cron` `0 0 * *` is not a cron expression: ");
  ExpectError("pipeline: a\nkind: load\nschedules:\n  - cron: daily\n    domains: []\n", "SLU-PIPELINE-006", 4, 11,
              "a schedule's `cron`");
}

TEST(PipelineFileErrors, BadOptionValue007) {
  ExpectError("pipeline: a\nkind: load\noptions:\n  retries: 1\n  pre_load_strategy: incoming\nschedules: []\n",
              "SLU-PIPELINE-007", 5, 22, "option `pre_load_strategy` is `incoming`");
  // The options a job runs with are checked too, each located at its value.
  ExpectError("pipeline: a\nkind: load\noptions:\n  pre_load_sensor: yes please\nschedules: []\n",
              "SLU-PIPELINE-007", 4, 20, "option pre_load_sensor is \"yes please\"; expected true or false");
  ExpectError("pipeline: a\nkind: load\noptions:\n  pre_load_poke_interval: 60\n  pre_load_timeout: 30\n"
              "schedules: []\n",
              "SLU-PIPELINE-007", 5, 21, "");
  ExpectError("pipeline: a\nkind: load\noptions:\n  timezone: Mars/Olympus\nschedules: []\n", "SLU-PIPELINE-007", 4,
              13, "Mars/Olympus");
}

TEST(PipelineFileErrors, DependencyCycle008) {
  ExpectError(
      "pipeline: a\nkind: transform\ndependencies:\n  - name: x\n    type: task\n    children:\n"
      "      - name: y\n        type: task\n        children: [{name: x, type: task}]\n",
      "SLU-PIPELINE-008", 4, 11, "the dependencies have a cycle: x -> y -> x");
}

TEST(PipelineFileErrors, KeyOfTheOtherKind009) {
  ExpectError("pipeline: a\nkind: load\ncron: '@daily'\nschedules: []\n", "SLU-PIPELINE-009", 3, 1,
              "`cron` belongs to transform pipelines");
  ExpectError("pipeline: a\nkind: load\nschedules: []\ndependencies: []\n", "SLU-PIPELINE-009", 4, 1,
              "`dependencies` belongs to transform pipelines");
  ExpectError("pipeline: a\nkind: transform\nschedules: []\ndependencies: []\n", "SLU-PIPELINE-009", 3, 1,
              "`schedules` belongs to load pipelines");
}

// A folder of the test's own, removed at the end.
class PipelineFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("sluice_pipeline_test_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }

  fs::path dir_;
};

TEST_F(PipelineFolder, ReadsEveryYamlFileInNameOrder) {
  Write("b.yaml", "pipeline: b\nkind: transform\ndependencies: []\n");
  Write("a.yml", kLoadPipeline);
  Write("notes.txt", "not a pipeline");
  const std::vector<StarlakeDagFile> pipelines = ReadPipelineFolder(dir_);
  ASSERT_EQ(pipelines.size(), 2u);
  EXPECT_EQ(pipelines[0].pipeline_id, "starbake_load");
  EXPECT_EQ(pipelines[1].pipeline_id, "b");
}

TEST_F(PipelineFolder, TheSameJobNameInTwoFilesNamesBoth010) {
  Write("a.yml", "pipeline: shop\nkind: transform\ndependencies: []\n");
  Write("b.yml", "pipeline: shop\nkind: transform\ndependencies: []\n");
  Write("c.yml", "pipeline: c\nkind: nope\n");
  try {
    ReadPipelineFolder(dir_);
    FAIL() << "expected errors";
  } catch (const Error& error) {
    ASSERT_EQ(error.diagnostics().size(), 2u);
    const Diagnostic& duplicate = error.diagnostics()[0];
    EXPECT_EQ(duplicate.code, "SLU-PIPELINE-010");
    EXPECT_EQ(duplicate.location.file, (dir_ / "b.yml").string());
    EXPECT_NE(duplicate.message.find("job `shop` is given by both " + (dir_ / "a.yml").string() + " and " +
                                     (dir_ / "b.yml").string()),
              std::string::npos)
        << duplicate.message;
    EXPECT_EQ(error.diagnostics()[1].code, "SLU-PIPELINE-003");
    EXPECT_EQ(error.diagnostics()[1].location.line, 2);
  }
  EXPECT_EQ(ErrorOf([&] { ReadPipelineFolder(dir_ / "missing"); }).code, "SLU-IO-001");
}

TEST_F(PipelineFolder, SavingCreatesKeepsRefusesAndReplaces) {
  StarlakeDagFile file = ParseStarlakeDagFile("Shop_KPI.py", kShopModule);
  const fs::path out = dir_ / "pipelines";
  SavedPipelineFile saved = SavePipelineFile(file, out, false);
  EXPECT_EQ(saved.outcome, PipelineSave::kCreated);
  EXPECT_EQ(saved.path, out / "shop_kpi.yml");
  EXPECT_EQ(ReadFile(saved.path), kShopPipeline);
  EXPECT_EQ(SavePipelineFile(file, out, false).outcome, PipelineSave::kUnchanged);
  file.cron = "0 1 * * *";
  EXPECT_EQ(ErrorOf([&] { SavePipelineFile(file, out, false); }).code, "SLU-PIPELINE-011");
  EXPECT_EQ(ReadFile(saved.path), kShopPipeline);
  EXPECT_EQ(SavePipelineFile(file, out, true).outcome, PipelineSave::kReplaced);
  EXPECT_EQ(ReadPipelineFile(saved.path), file);
  file.pipeline_id = "shop-kpi";
  EXPECT_EQ(ErrorOf([&] { SavePipelineFile(file, out, true); }).code, "SLU-PIPELINE-005");
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace sluice::orchestrate
