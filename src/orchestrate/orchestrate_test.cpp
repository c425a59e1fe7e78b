// Unit tests of the Starlake reader: the Python literal reader (values and every error path, located),
// sanitize_id and dataset URIs, cron checks, task_deps and schedules shapes, and the job graph rules.
// The worked example's graphs are golden files (tests/golden/starlake/).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/diagnostic.hpp"
#include "orchestrate/orchestrate_test_support.hpp"
#include "orchestrate/python_literal.hpp"
#include "orchestrate/starlake_dag_file.hpp"
#include "orchestrate/starlake_dataset.hpp"
#include "orchestrate/starlake_job_graph.hpp"

namespace sluice::orchestrate {
namespace {

const PythonLiteralRules kRules{{"options", "cron", "schedules", "dependencies"}, {"StarlakeDependencies"}};

nlohmann::json ValueOf(const std::string& text, const std::string& name = "options") {
  for (const PythonAssignment& assignment : ReadPythonAssignments("m.py", text, kRules)) {
    if (assignment.name == name) return assignment.value;
  }
  ADD_FAILURE() << "no assignment of " << name;
  return nullptr;
}

Diagnostic LiteralError(const std::string& text) {
  return ErrorOf([&] { ReadPythonAssignments("m.py", text, kRules); });
}

void ExpectAt(const Diagnostic& diagnostic, const std::string& code, int line, int column, const std::string& part) {
  EXPECT_EQ(diagnostic.code, code) << diagnostic.message;
  EXPECT_EQ(diagnostic.location.file, "m.py");
  EXPECT_EQ(diagnostic.location.line, line) << diagnostic.message;
  EXPECT_EQ(diagnostic.location.column, column) << diagnostic.message;
  EXPECT_NE(diagnostic.message.find(part), std::string::npos) << diagnostic.message;
}

TEST(PythonLiteral, ReadsDictsListsTuplesStringsNumbersAndConstants) {
  const nlohmann::json value = ValueOf(
      "options = {\n"
      "  'a': \"x\", 'b': [1, -2, 3.5, 1e3, 0x1F, 1_000], # comment\n"
      "  'c': (True, False, None), 'd': (), 'e': ('one',), 'f': ('paren'),\n"
      "  \"g\": {}, 'h': [],\n"
      "}\n");
  EXPECT_EQ(value["a"], "x");
  EXPECT_EQ(value["b"], nlohmann::json::parse("[1, -2, 3.5, 1000.0, 31, 1000]"));
  EXPECT_EQ(value["c"], nlohmann::json::parse("[true, false, null]"));
  EXPECT_EQ(value["d"], nlohmann::json::array());
  EXPECT_EQ(value["e"], nlohmann::json::parse("[\"one\"]"));
  EXPECT_EQ(value["f"], "paren");
  EXPECT_EQ(value["g"], nlohmann::json::object());
  EXPECT_EQ(value["h"], nlohmann::json::array());
}

TEST(PythonLiteral, DecodesEscapesPrefixesTripleQuotesAndConcatenation) {
  EXPECT_EQ(ValueOf(R"(cron = 'it\'s\t\x41\u00e9\U0001F600\101\\\q')", "cron"), "it's\tA\xC3\xA9\xF0\x9F\x98\x80" "A\\\\q");
  EXPECT_EQ(ValueOf(R"(cron = r'a\nb\'c')", "cron"), "a\\nb\\'c");
  EXPECT_EQ(ValueOf("cron = u\"x\" 'y'  R\"z\"", "cron"), "xyz");
  EXPECT_EQ(ValueOf("cron = \"\"\"line1\nline \"2\" \\\nend\"\"\"", "cron"), "line1\nline \"2\" end");
  EXPECT_EQ(ValueOf("cron = ('a'\n  'b')", "cron"), "ab");
}

TEST(PythonLiteral, SkipsOtherStatementsAndReadsOnlyColumnOneAssignments) {
  const std::string text =
      "import os\n"
      "description = \"\"\"options = {'not': 'this'}\n\"\"\"\n"
      "sl_job = f(options=dict(options, **x))\n"
      "def f():\n"
      "    cron = 'indented'\n"
      "x = [\n"
      "cron = 1]\n"
      "if cron == 'x': pass\n"
      "cron = \"0 0 * * *\"  # the one\n"
      "options = {'k': 'v'}; y = 2\n";
  std::vector<PythonAssignment> assignments = ReadPythonAssignments("m.py", text, kRules);
  ASSERT_EQ(assignments.size(), 2u);
  EXPECT_EQ(assignments[0].name, "cron");
  EXPECT_EQ(assignments[0].value, "0 0 * * *");
  EXPECT_EQ(assignments[1].value, nlohmann::json::parse(R"({"k": "v"})"));
}

TEST(PythonLiteral, ReadsATransparentCallAsItsArgumentAndKeepsVerbatimOffsets) {
  const std::string text = "dependencies = StarlakeDependencies(dependencies=\"\"\"[1]\"\"\")\n";
  std::vector<PythonAssignment> assignments = ReadPythonAssignments("m.py", text, kRules);
  ASSERT_EQ(assignments.size(), 1u);
  EXPECT_EQ(assignments[0].value, "[1]");
  ASSERT_TRUE(assignments[0].verbatim_offset.has_value());
  EXPECT_EQ(text.substr(*assignments[0].verbatim_offset, 3), "[1]");
  EXPECT_EQ(ValueOf("dependencies = StarlakeDependencies([ ])\n", "dependencies"), nlohmann::json::array());
  EXPECT_FALSE(ReadPythonAssignments("m.py", "cron = 'a\\tb'", kRules)[0].verbatim_offset.has_value());
}

TEST(PythonLiteral, EverySyntaxErrorIsLocatedAndSaysWhatWasExpected) {
  ExpectAt(LiteralError("options = {'a' 'b': 1, 'c' 2}"), "SLU-STARLAKE-001", 1, 28, "expected `:` after the dict key, found `2`");
  ExpectAt(LiteralError("options = {'a': 1 'b': 2}"), "SLU-STARLAKE-001", 1, 19, "expected `,` or `}` after a dict value");
  ExpectAt(LiteralError("x = 1\noptions = [1 2]"), "SLU-STARLAKE-001", 2, 14, "expected `,` or `]` after a list item, found `2`");
  ExpectAt(LiteralError("options = (1 2)"), "SLU-STARLAKE-001", 1, 14, "expected `,` or `)` after a tuple item");
  ExpectAt(LiteralError("options = dict(a=1)"), "SLU-STARLAKE-001", 1, 11, "expected a literal value");
  ExpectAt(LiteralError("options = {'a': os.environ}"), "SLU-STARLAKE-001", 1, 17, "found `os`");
  ExpectAt(LiteralError("cron = 'a' + b"), "SLU-STARLAKE-001", 1, 12, "expected the end of the statement after the value of `cron`, found `+`");
  ExpectAt(LiteralError("cron = "), "SLU-STARLAKE-001", 1, 8, "expected a value, found the end of the file");
  ExpectAt(LiteralError("cron = \n"), "SLU-STARLAKE-001", 1, 8, "found the end of the line");
  ExpectAt(LiteralError("cron = 12ab"), "SLU-STARLAKE-001", 1, 10, "expected the end of the number");
  ExpectAt(LiteralError("cron = 0x"), "SLU-STARLAKE-001", 1, 10, "hexadecimal digits");
  ExpectAt(LiteralError("cron = zz'a'"), "SLU-STARLAKE-001", 1, 8, "found `zz`");
  ExpectAt(LiteralError("dependencies = StarlakeDependencies 'x'"), "SLU-STARLAKE-001", 1, 37, "expected `(`");
  ExpectAt(LiteralError("dependencies = StarlakeDependencies('x', 'y')"), "SLU-STARLAKE-001", 1, 42, "expected `)`");
}

TEST(PythonLiteral, UnclosedStringsAndBracketsAreLocatedAtTheirOpening) {
  ExpectAt(LiteralError("cron = 'abc\nx = 1"), "SLU-STARLAKE-002", 1, 8, "never closed on its line");
  ExpectAt(LiteralError("cron = \"\"\"abc"), "SLU-STARLAKE-002", 1, 8, "never closed");
  ExpectAt(LiteralError("cron = 'abc\\"), "SLU-STARLAKE-002", 1, 8, "never closed");
  ExpectAt(LiteralError("options = {\n 'a': [1,\n"), "SLU-STARLAKE-002", 2, 7, "`[` is never closed");
  ExpectAt(LiteralError("options = {'a': 1,"), "SLU-STARLAKE-002", 1, 11, "`{` is never closed");
  ExpectAt(LiteralError("options = {'a'"), "SLU-STARLAKE-002", 1, 11, "`{` is never closed");
  ExpectAt(LiteralError("options = (1"), "SLU-STARLAKE-002", 1, 11, "`(` is never closed");
  ExpectAt(LiteralError("dependencies = StarlakeDependencies('x'"), "SLU-STARLAKE-002", 1, 36, "never closed");
  ExpectAt(LiteralError("x = 1\ndescription = '''never"), "SLU-STARLAKE-002", 2, 15, "never closed");
}

TEST(PythonLiteral, MalformedEscapesAreLocatedAtTheBackslash) {
  ExpectAt(LiteralError("cron = 'ab\\x4'"), "SLU-STARLAKE-003", 1, 11, "needs 2 hexadecimal digits");
  ExpectAt(LiteralError("cron = '\\u12'"), "SLU-STARLAKE-003", 1, 9, "needs 4 hexadecimal digits");
  ExpectAt(LiteralError("cron = '\\U00110000'"), "SLU-STARLAKE-003", 1, 9, "names no Unicode character");
  ExpectAt(LiteralError("cron = '\\ud800'"), "SLU-STARLAKE-003", 1, 9, "names no Unicode character");
  ExpectAt(LiteralError("cron = '\\N{BULLET}'"), "SLU-STARLAKE-003", 1, 9, "named escapes");
}

TEST(PythonLiteral, PythonThatIsNotALiteralIsNamed) {
  ExpectAt(LiteralError("cron = f'{x}'"), "SLU-STARLAKE-009", 1, 8, "f-string");
  ExpectAt(LiteralError("cron = 'a' b'x'"), "SLU-STARLAKE-009", 1, 12, "bytes");
  ExpectAt(LiteralError("options = {1: 'a'}"), "SLU-STARLAKE-009", 1, 12, "a dict key must be a string");
  ExpectAt(LiteralError("options = {'a', 'b'}"), "SLU-STARLAKE-009", 1, 12, "set literals");
}

TEST(PythonLiteral, SkippedCodeMayHoldAnyEscapeOrPrefix) {
  const std::string text = "x = b'\\N{BULLET}' + f\"{y!r}\\\"\" + rb'\\\\'\nraise_ = '\\q'\ncron = None\n";
  EXPECT_EQ(ValueOf(text, "cron"), nullptr);
}

TEST(SanitizeId, ReplacesDollarAndEveryCharacterOutsideTheSafeSet) {
  EXPECT_EQ(SanitizeId("starbake.orders"), "starbake_orders");
  EXPECT_EQ(SanitizeId("a$b"), "aSb");
  EXPECT_EQ(SanitizeId("Keep-Case_09"), "Keep-Case_09");
  EXPECT_EQ(SanitizeId("a b/c:d"), "a_b_c_d");
  EXPECT_EQ(SanitizeId("caf\xC3\xA9"), "caf_");           // one code point, one `_`
  EXPECT_EQ(SanitizeId("\xF0\x9F\x98\x80x"), "_x");       // a four-byte character
  EXPECT_EQ(SanitizeId("a\xFF\xFE" "b"), "a__b");         // malformed bytes: one `_` each
  EXPECT_EQ(SanitizeId(""), "");
}

TEST(DatasetUri, IsTheSanitizedSinkInLowerCase) {
  EXPECT_EQ(DatasetUri("Starbake.Orders"), "starbake_orders");
  EXPECT_EQ(DatasetUri("kpi.$Revenue"), "kpi_srevenue");
}

TEST(StarlakeCron, NoneAndValidExpressions) {
  EXPECT_TRUE(IsNoneCron(" none "));
  EXPECT_TRUE(IsNoneCron("None"));
  EXPECT_FALSE(IsNoneCron("0 0 * * *"));
  // Crons are checked by core's grammar: a bad one is located at the value, with the grammar's reason.
  Diagnostic bad = ErrorOf([] { ParseStarlakeDagFile("m.py", "cron = '0 0 * *'\nschedules = []\n"); });
  EXPECT_EQ(bad.code, "SLU-STARLAKE-006");
  EXPECT_NE(bad.message.find("is not a cron expression: "), std::string::npos) << bad.message;
}

TEST(StarlakeDagFile, AJsonSyntaxErrorIsLocatedInTheFileOrInsideTheModuleString) {
  Diagnostic json = ErrorOf([] { ParseStarlakeDagFile("deps.json", "[\n  {\"data\": }\n]"); });
  EXPECT_EQ(json.code, "SLU-STARLAKE-004");
  EXPECT_EQ(json.location.file, "deps.json");
  EXPECT_EQ(json.location.line, 2);
  EXPECT_EQ(json.location.column, 12);
  Diagnostic module = ErrorOf([] {
    ParseStarlakeDagFile("m.py", "x = 1\ndependencies = StarlakeDependencies(dependencies=\"\"\"[\n  {,}\n]\"\"\")\n");
  });
  EXPECT_EQ(module.code, "SLU-STARLAKE-004");
  EXPECT_EQ(module.location.line, 3);
  EXPECT_EQ(module.location.column, 4);
}

TEST(StarlakeDagFile, ShapeErrorsNameThePathOfTheNode) {
  Diagnostic missing = ErrorOf([] { ParseStarlakeDagFile("d.json", R"([{"data": {"name": "a"}, "children": [{"data": {}}]}])"); });
  EXPECT_EQ(missing.code, "SLU-STARLAKE-005");
  EXPECT_NE(missing.message.find("[0].children[0]: `data.name` is missing"), std::string::npos) << missing.message;
  EXPECT_EQ(ErrorOf([] { ParseStarlakeDagFile("d.json", R"({"a": 1})"); }).code, "SLU-STARLAKE-005");
  EXPECT_EQ(ErrorOf([] { ParseStarlakeDagFile("d.json", R"([{"data": {"name": "a", "freshness": "x"}}])"); }).code,
            "SLU-STARLAKE-005");
  Diagnostic schedules = ErrorOf([] { ParseStarlakeDagFile("m.py", "x = 1\nschedules = [{'domains': [{'name': 'd'}]}]"); });
  EXPECT_EQ(schedules.code, "SLU-STARLAKE-005");
  EXPECT_EQ(schedules.location.line, 2);
  EXPECT_EQ(schedules.location.column, 13);
  EXPECT_NE(schedules.message.find("schedules[0].domains[0].tables must be a list"), std::string::npos);
}

TEST(StarlakeDagFile, ADependencyCycleIsNamed) {
  Diagnostic cycle = ErrorOf([] {
    ParseStarlakeDagFile("d.json", R"([{"data": {"name": "a"}, "children": [{"data": {"name": "b"}, "children": [{"data": {"name": "a"}}]}]}])");
  });
  EXPECT_EQ(cycle.code, "SLU-STARLAKE-005");
  EXPECT_NE(cycle.message.find("a -> b -> a"), std::string::npos) << cycle.message;
}

TEST(StarlakeDagFile, CronsAndOptionsAreChecked) {
  Diagnostic cron = ErrorOf([] { ParseStarlakeDagFile("m.py", "cron = 'daily'\ndependencies = []"); });
  EXPECT_EQ(cron.code, "SLU-STARLAKE-006");
  EXPECT_EQ(cron.location.column, 8);
  EXPECT_EQ(ErrorOf([] { ParseStarlakeDagFile("d.json", R"([{"data": {"name": "a", "cron": "x"}}])"); }).code,
            "SLU-STARLAKE-006");
  Diagnostic option = ErrorOf([] { ParseStarlakeDagFile("m.py", "options = {'pre_load_strategy': 'incoming'}\nschedules = []"); });
  EXPECT_EQ(option.code, "SLU-STARLAKE-007");
  EXPECT_NE(option.hint.find("none, imported, pending, ack"), std::string::npos);
}

TEST(StarlakeDagFile, AModuleMustAssignDependenciesOrSchedulesNotBoth) {
  EXPECT_EQ(ErrorOf([] { ParseStarlakeDagFile("m.py", "options = {}\n"); }).code, "SLU-STARLAKE-008");
  EXPECT_EQ(ErrorOf([] { ParseStarlakeDagFile("m.py", "dependencies = []\nschedules = []\n"); }).code,
            "SLU-STARLAKE-008");
}

TEST(StarlakeDagFile, OptionsResolveByTheReferenceRule) {
  StarlakeDagFile file = ParseStarlakeDagFile(
      "My_Dag.py", "options = {'run_dependencies_first': 'TRUE', 'pre_load_strategy': ''}\ncron = None\ndependencies = []");
  EXPECT_EQ(file.pipeline_id, "my_dag");
  EXPECT_TRUE(file.resolved.run_dependencies_first);
  EXPECT_EQ(file.resolved.pre_load_strategy, StarlakePreLoadStrategy::kNone);  // empty string: the default
  EXPECT_FALSE(file.cron.has_value());
  EXPECT_TRUE(ParseStarlakeDagFile("m.py", "options = {'run_dependencies_first': True}\ndependencies = []")
                  .resolved.run_dependencies_first);
  EXPECT_FALSE(ParseStarlakeDagFile("m.py", "options = {'run_dependencies_first': 'yes'}\ndependencies = []")
                   .resolved.run_dependencies_first);
}

TEST(StarlakeDagFile, ASinkOfNoneFallsBackToTheName) {
  StarlakeDagFile file = ParseStarlakeDagFile(
      "d.json", R"([{"data": {"name": "kpi.a", "typ": "task", "sink": "None"}, "children": [{"data": {"name": "s.t", "sink": "Raw.T"}}]}])");
  const auto& dag = std::get<StarlakeTransformDag>(file.dag);
  EXPECT_EQ(dag.dependencies[0].sink, "kpi.a");
  EXPECT_EQ(dag.dependencies[0].kind, StarlakeDependencyKind::kTask);
  EXPECT_EQ(dag.dependencies[0].children[0].sink, "Raw.T");
  EXPECT_EQ(dag.dependencies[0].children[0].kind, StarlakeDependencyKind::kTable);
  StarlakeJobGraph graph = BuildStarlakeJobGraph(file);
  EXPECT_EQ(graph.jobs[0].sensor_assets, std::vector<std::string>{"raw_t"});
}

TEST(StarlakeJobGraph, ACronReplacesTheSensorAndNoDependenciesGiveAnEmptyJob) {
  StarlakeJobGraph cron = BuildStarlakeJobGraph(ParseStarlakeDagFile(
      "t.py", "cron = '0 1 * * *'\ndependencies = [{'data': {'name': 'a', 'typ': 'task'}, 'children': [{'data': {'name': 'x.y'}}]}]"));
  EXPECT_EQ(cron.jobs[0].cron, std::optional<std::string>("0 1 * * *"));
  EXPECT_TRUE(cron.jobs[0].sensor_assets.empty());
  StarlakeJobGraph empty = BuildStarlakeJobGraph(ParseStarlakeDagFile("e.json", "[]"));
  EXPECT_EQ(empty.jobs[0].nodes, (std::vector<std::string>{"start", "end"}));
  EXPECT_TRUE(empty.jobs[0].edges.empty());
}

TEST(StarlakeJobGraph, LoadSchedulesBecomeOneJobEachWithThePreLoadCheck) {
  StarlakeJobGraph graph = BuildStarlakeJobGraph(ParseStarlakeDagFile(
      "Load.py",
      "options = {'pre_load_strategy': 'ack'}\n"
      "schedules = [{'schedule': 'daily', 'cron': '0 0 * * *', 'domains': [{'name': 'sb', 'tables': [{'name': 'A'}]}]},\n"
      "             {'schedule': 'None', 'cron': 'None', 'domains': []}]\n"));
  ASSERT_EQ(graph.jobs.size(), 2u);
  EXPECT_EQ(graph.jobs[0].name, "load_daily");
  EXPECT_EQ(graph.jobs[0].nodes, (std::vector<std::string>{"start", "check_sb_daily_ack_file", "load_sb_A", "end"}));
  EXPECT_EQ(graph.jobs[0].cron, std::optional<std::string>("0 0 * * *"));
  EXPECT_EQ(graph.jobs[1].name, "load");
  EXPECT_FALSE(graph.jobs[1].cron.has_value());
}

TEST(StarlakeJobGraph, ImportedLoadsStageBeforeLoadingAndEachNodeHasItsTask) {
  StarlakeJobGraph graph = BuildStarlakeJobGraph(ParseStarlakeDagFile(
      "Load.py",
      "options = {'pre_load_strategy': 'IMPORTED'}\n"
      "schedules = [{'schedule': 'daily', 'cron': '0 0 * * *',\n"
      "              'domains': [{'name': 'sb', 'tables': [{'name': 'A'}, {'name': 'B.x'}]}]}]\n"));
  const StarlakeJob& job = graph.jobs.at(0);
  EXPECT_EQ(job.nodes, (std::vector<std::string>{"start", "check_sb_daily_incoming_files", "import_sb_daily",
                                                 "load_sb_A", "load_sb_B_x", "end"}));
  EXPECT_EQ(job.edges, (std::vector<std::pair<std::string, std::string>>{
                           {"start", "check_sb_daily_incoming_files"},
                           {"check_sb_daily_incoming_files", "import_sb_daily"},
                           {"import_sb_daily", "load_sb_A"},
                           {"load_sb_A", "end"},
                           {"import_sb_daily", "load_sb_B_x"},
                           {"load_sb_B_x", "end"}}));
  const std::vector<std::string> tables{"A", "B.x"};
  ASSERT_EQ(job.tasks.size(), job.nodes.size());
  for (size_t i = 0; i < job.nodes.size(); ++i) EXPECT_EQ(job.tasks[i].id, job.nodes[i]);
  EXPECT_EQ(job.tasks[0], (StarlakeTask{.id = "start", .kind = StarlakeTaskKind::kStart}));
  EXPECT_EQ(job.tasks[1], (StarlakeTask{.id = "check_sb_daily_incoming_files",
                                        .kind = StarlakeTaskKind::kPreLoad,
                                        .domain = "sb",
                                        .tables = tables,
                                        .strategy = StarlakePreLoadStrategy::kImported}));
  EXPECT_EQ(job.tasks[2],
            (StarlakeTask{.id = "import_sb_daily", .kind = StarlakeTaskKind::kStage, .domain = "sb", .tables = tables}));
  EXPECT_EQ(job.tasks[4], (StarlakeTask{.id = "load_sb_B_x",
                                        .kind = StarlakeTaskKind::kLoad,
                                        .domain = "sb",
                                        .tables = {"B.x"},
                                        .dataset = StarlakeDatasetRef{"sb.B.x", "sb_b_x", "0 0 * * *", 0}}));
  EXPECT_EQ(job.tasks[5], (StarlakeTask{.id = "end",
                                        .kind = StarlakeTaskKind::kEnd,
                                        .dataset = StarlakeDatasetRef{"load_daily", "load_daily", "0 0 * * *", 0}}));
  EXPECT_TRUE(job.sensor_datasets.empty());
}

TEST(StarlakeJobGraph, PendingAndAckLoadsHaveNoStageTask) {
  for (const char* strategy : {"pending", "ack"}) {
    StarlakeJobGraph graph = BuildStarlakeJobGraph(ParseStarlakeDagFile(
        "L.py", std::string("options = {'pre_load_strategy': '") + strategy +
                    "'}\nschedules = [{'domains': [{'name': 'sb', 'tables': [{'name': 'A'}]}]}]\n"));
    ASSERT_EQ(graph.jobs.at(0).tasks.size(), 4u) << strategy;
    EXPECT_EQ(graph.jobs[0].tasks[1].kind, StarlakeTaskKind::kPreLoad);
    EXPECT_EQ(graph.jobs[0].tasks[2].kind, StarlakeTaskKind::kLoad);
    EXPECT_EQ(graph.jobs[0].tasks[2].dataset->cron, std::nullopt);
  }
}

TEST(StarlakeJobGraph, TransformTasksMaterializeTheirSinkWithTheComputedCron) {
  // kpi.a reads two hourly-or-daily tables: its computed cron is the most frequent, hourly. kpi.b reads a table
  // without a cron: none. The sensor datasets carry each child's cron and freshness.
  StarlakeDagFile file = ParseStarlakeDagFile("shop.json", R"([
    {"data": {"name": "kpi.a", "typ": "task", "sink": "Kpi.A_Out"},
     "children": [{"data": {"name": "raw.d", "typ": "table", "cron": "0 0 * * *", "freshness": 60}},
                  {"data": {"name": "raw.h", "typ": "table", "cron": "0 * * * *"}}]},
    {"data": {"name": "kpi.b", "typ": "task", "cron": "None"},
     "children": [{"data": {"name": "raw.n", "typ": "table"}}, {"data": {"name": "kpi.a", "typ": "task", "sink": "Kpi.A_Out"}}]}
  ])");
  StarlakeJobGraph graph = BuildStarlakeJobGraph(file);
  const StarlakeJob& job = graph.jobs.at(0);
  EXPECT_EQ(job.nodes, (std::vector<std::string>{"start", "kpi_a_task", "kpi_b_task", "end"}));
  EXPECT_EQ(job.tasks[1], (StarlakeTask{.id = "kpi_a_task",
                                        .kind = StarlakeTaskKind::kTransform,
                                        .transform_name = "kpi.a",
                                        .dataset = StarlakeDatasetRef{"Kpi.A_Out", "kpi_a_out", "0 * * * *", 0}}));
  EXPECT_EQ(job.tasks[2].dataset, (StarlakeDatasetRef{"kpi.b", "kpi_b", std::nullopt, 0}));
  EXPECT_EQ(job.tasks[3].dataset, (StarlakeDatasetRef{"shop", "shop", std::nullopt, 0}));
  EXPECT_EQ(job.sensor_assets, (std::vector<std::string>{"raw_d", "raw_h", "raw_n"}));
  EXPECT_EQ(job.sensor_datasets, (std::vector<StarlakeDatasetRef>{{"raw.d", "raw_d", "0 0 * * *", 60},
                                                                  {"raw.h", "raw_h", "0 * * * *", 0},
                                                                  {"raw.n", "raw_n", std::nullopt, 0}}));
  // With run_dependencies_first the tables are load tasks of their sink's domain and table.
  file.resolved.run_dependencies_first = true;
  const StarlakeJob all = BuildStarlakeJobGraph(file).jobs.at(0);
  auto task = std::find_if(all.tasks.begin(), all.tasks.end(), [](const StarlakeTask& t) { return t.id == "raw_d_table"; });
  ASSERT_NE(task, all.tasks.end());
  EXPECT_EQ(*task, (StarlakeTask{.id = "raw_d_table",
                                 .kind = StarlakeTaskKind::kLoad,
                                 .domain = "raw",
                                 .tables = {"d"},
                                 .dataset = StarlakeDatasetRef{"raw.d", "raw_d", "0 0 * * *", 60}}));
  EXPECT_TRUE(all.sensor_datasets.empty());
}

TEST(StarlakeJobGraph, TheMostFrequentCronWinsAndEqualFrequenciesPreferTheLaterTick) {
  auto computed = [](const std::string& first, const std::string& second) {
    StarlakeDagFile file = ParseStarlakeDagFile("c.json", R"([{"data": {"name": "t", "typ": "task"}, "children": [
      {"data": {"name": "x.a", "cron": ")" + first + R"("}}, {"data": {"name": "x.b", "cron": ")" + second + R"("}}]}])");
    return BuildStarlakeJobGraph(file).jobs.at(0).tasks.at(1).dataset->cron;
  };
  EXPECT_EQ(computed("0 0 * * 0", "0 0 * * *"), std::optional<std::string>("0 0 * * *"));
  EXPECT_EQ(computed("*/5 * * * *", "0 * * * *"), std::optional<std::string>("*/5 * * * *"));
  EXPECT_EQ(computed("0 1 * * *", "0 3 * * *"), std::optional<std::string>("0 3 * * *"));
  EXPECT_EQ(computed("0 3 * * *", "0 1 * * *"), std::optional<std::string>("0 3 * * *"));
}

}  // namespace
}  // namespace sluice::orchestrate
