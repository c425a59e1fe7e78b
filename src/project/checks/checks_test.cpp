// Tests and audits: loading, validation and compiled SQL, on projects written into temporary folders.
#include "project/checks/checks.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <deque>
#include <fstream>
#include <functional>
#include <random>

#include "project/header_grammar.hpp"
#include "project/models/model_file.hpp"

namespace sluice {
namespace {

// A project folder; models are given as MODEL files (parsed like the project loader does), tests and audits
// are written as files.
class ChecksProject {
 public:
  explicit ChecksProject(sql::Dialect dialect = sql::Dialect::kClickHouse) {
    std::random_device device;
    root_ = std::filesystem::temp_directory_path() /
            ("sluice_tests_audits_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
    std::filesystem::create_directories(root_);
    input.root = root_;
    input.dialect = dialect;
    input.sources = {"events"};
  }
  ~ChecksProject() { std::filesystem::remove_all(root_); }
  ChecksProject(const ChecksProject&) = delete;
  ChecksProject& operator=(const ChecksProject&) = delete;

  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::trunc) << text;
  }

  ModelCheckInput& AddModel(const std::string& file, const std::string& text, const std::string& pipeline = "pl",
                            ModelColumns columns = {}) {
    Write(file, text);
    ParsedModel parsed = ParseModelFile(file, text, input.dialect);
    ModelCheckInput model;
    model.name = strings_.emplace_back(parsed.name);
    model.pipeline = strings_.emplace_back(pipeline);
    model.file = strings_.emplace_back(file);
    model.kind = parsed.kind;
    model.relation_name = strings_.emplace_back(parsed.relation_name.value_or("tbl__" + parsed.name));
    model.name_space = "analytics";
    model.text = strings_.emplace_back(text);
    SqlCompute& sql = models_.emplace_back();
    sql.kind = parsed.kind;
    sql.body = parsed.body;
    for (const ModelReference& ref : parsed.references) {
      sql.references.push_back(
          ResolvedReference{ref.call, AssetKey::FromParts({"analytics", ref.call.name}), ref.edge, ref.at});
    }
    sql.partition_bounds = parsed.partition_bounds;
    sql.columns = std::move(columns);
    model.sql = &sql;
    if (parsed.partitions) model.partitions = &partitions_.emplace_back(*parsed.partitions);
    model.audits = &audits_.emplace_back(AuditDeclarationsFromHeader(ParseHeaderBlock(text, 0, "MODEL", file).entries));
    input.models.push_back(std::move(model));
    return input.models.back();
  }

  // orders ← events (a source); order_items ← orders.
  void AddChain(const std::string& orders_header = "MODEL ();\n", const std::string& items_pipeline = "pl") {
    AddModel("pipelines/pl/orders.sql", orders_header +
                                            "SELECT id::Int64 AS id, qty::Int64 AS qty, status::String AS status\n"
                                            "FROM __source(\"events\")\n");
    AddModel("pipelines/" + items_pipeline + "/order_items.sql",
             "MODEL ();\nSELECT id::Int64 AS id, (qty * 2)::Int64 AS doubled\nFROM __ref(\"orders\");\n",
             items_pipeline);
  }

  CompiledChecks Compile() const { return CompileTestsAndAudits(input); }

  ChecksInput input;

 private:
  std::filesystem::path root_;
  // What the models' inputs view (a deque keeps its elements in place).
  std::deque<std::string> strings_;  // what the inputs' name views show
  std::deque<SqlCompute> models_;
  std::deque<ModelAuditDeclarations> audits_;
  std::deque<PartitionSpec> partitions_;
};

// The diagnostic a failed call reported; code "no error" when it succeeded.
Diagnostic ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", ""};
}

Diagnostic CompileError(const ChecksProject& project) {
  return ErrorOf([&] { project.Compile(); });
}

#define EXPECT_AT(diagnostic, expected_code, expected_file, expected_line, expected_column) \
  do {                                                                                      \
    EXPECT_EQ((diagnostic).code, expected_code) << (diagnostic).message;                    \
    EXPECT_EQ((diagnostic).location.file, expected_file);                                   \
    EXPECT_EQ((diagnostic).location.line, expected_line);                                   \
    EXPECT_EQ((diagnostic).location.column, expected_column);                               \
  } while (false)

const AuditSpec& AuditNamed(const CompiledChecks& compiled, const std::string& name) {
  for (const AuditSpec& audit : compiled.audits) {
    if (audit.name == name) return audit;
  }
  throw std::runtime_error("no audit " + name);
}

// A minimal valid model-mode test body for the chain.
const std::string kChainBody =
    "WITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'new' AS status),\n"
    "__expected__order_items AS (SELECT 1 AS id, 4 AS doubled)\nSELECT 1\n";

// ---------------------------------------------------------------------------------------------------------
// SQL tests: compiled SQL.

TEST(SqlTestCompile, ModelModeInlinesTheChainAndComparesMultisets) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/orders/doubling.sql",
                "TEST (name \"order items double the quantity\");\n\n"
                "WITH __source__events AS (\n  SELECT 1 AS id, 2 AS qty, 'new' AS status\n),\n"
                "__expected__order_items AS (\n  SELECT 1 AS id, 4 AS doubled\n)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.tests.size(), 1u);
  const TestSpec& test = compiled.tests.front();
  EXPECT_EQ(test.name, "order items double the quantity");
  EXPECT_EQ(test.file, "tests/orders/doubling.sql");
  EXPECT_EQ(test.path, "compiled/tests/order_items/order items double the quantity.sql");
  EXPECT_EQ(test.targets, std::vector<std::string>{"order_items"});
  EXPECT_EQ(test.mode, TestMode::kModel);
  EXPECT_TRUE(compiled.warnings.empty());
  EXPECT_EQ(test.sql, R"(WITH
__source__events AS (
  SELECT 1 AS id, 2 AS qty, 'new' AS status
),
__expected__order_items AS (
  SELECT 1 AS id, 4 AS doubled
),
__model__orders AS (
SELECT id::Int64 AS id, qty::Int64 AS qty, status::String AS status
FROM __source__events
),
__model__order_items AS (
SELECT id::Int64 AS id, (qty * 2)::Int64 AS doubled
FROM __model__orders
),
__case_1_expected AS (
SELECT toNullable(toString(__case_rows.`id`)) AS `id`, toNullable(toString(__case_rows.`doubled`)) AS `doubled`
FROM __expected__order_items AS __case_rows
),
__case_1_actual AS (
SELECT toNullable(toString(__case_rows.`id`)) AS `id`, toNullable(toString(__case_rows.`doubled`)) AS `doubled`
FROM __model__order_items AS __case_rows
),
__case_1_expected_counts AS (
SELECT `id`, `doubled`, count() AS __case_count
FROM __case_1_expected
GROUP BY `id`, `doubled`
),
__case_1_actual_counts AS (
SELECT `id`, `doubled`, count() AS __case_count
FROM __case_1_actual
GROUP BY `id`, `doubled`
)
SELECT 1 AS _case_index, 'missing' AS _diff_type, [toNullable(toString(l.`id`)), toNullable(toString(l.`doubled`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_expected_counts AS l
ALL LEFT JOIN __case_1_actual_counts AS r ON isNotDistinctFrom(l.`id`, r.`id`) AND isNotDistinctFrom(l.`doubled`, r.`doubled`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
UNION ALL
SELECT 1 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(l.`id`)), toNullable(toString(l.`doubled`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_actual_counts AS l
ALL LEFT JOIN __case_1_expected_counts AS r ON isNotDistinctFrom(l.`id`, r.`id`) AND isNotDistinctFrom(l.`doubled`, r.`doubled`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
)");
  EXPECT_EQ(compiled.tests.at(0).targets, (std::vector<std::string>{"order_items"}));
}

TEST(SqlTestCompile, ClickHouseTestsAlsoCompileForServersWithoutIsNotDistinctFromOrCtes) {
  ChecksProject project;
  project.AddChain();
  project.Write(
      "tests/orders/doubling.sql",
      "TEST (name \"doubling\");\n\n"
      "WITH __source__events AS (\n  SELECT 1 AS id, 2 AS qty, 'new' AS status\n),\n"
      "__expected__order_items AS (\n  SELECT 1 AS id, 4 AS doubled\n),\n"
      "__assert__some AS (SELECT e.id FROM __source__events e, __ref(\"orders\") WHERE e.id < 0)\nSELECT 1\n");
  const TestSpec test = project.Compile().tests.at(0);
  EXPECT_NE(test.sql.find("isNotDistinctFrom(l.`id`, r.`id`)"), std::string::npos);
  ASSERT_EQ(test.cases.size(), 2u);
  EXPECT_EQ(test.cases[0].name, "__expected__order_items");
  EXPECT_EQ(test.cases[0].columns, (std::vector<std::string>{"id", "doubled"}));
  EXPECT_EQ(test.cases[1].name, "__assert__some");
  EXPECT_TRUE(test.cases[1].columns.empty());
  // Checked on clickhouse-server 18.16 (with the models' `::` casts written as functions, which it also lacks).
  EXPECT_EQ(
      test.legacy_clickhouse_sql,
      R"(SELECT 1 AS _case_index, 'missing' AS _diff_type, [toNullable(toString(l.`id`)), toNullable(toString(l.`doubled`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM (
SELECT `id`, `doubled`, count() AS __case_count
FROM (
SELECT toNullable(toString(__case_rows.`id`)) AS `id`, toNullable(toString(__case_rows.`doubled`)) AS `doubled`
FROM (
  SELECT 1 AS id, 4 AS doubled
) AS __case_rows
) AS __case_1_expected
GROUP BY `id`, `doubled`
) AS l
ALL LEFT JOIN (
SELECT `id`, `doubled`, count() AS __case_count
FROM (
SELECT toNullable(toString(__case_rows.`id`)) AS `id`, toNullable(toString(__case_rows.`doubled`)) AS `doubled`
FROM (
SELECT id::Int64 AS id, (qty * 2)::Int64 AS doubled
FROM (
SELECT id::Int64 AS id, qty::Int64 AS qty, status::String AS status
FROM (
  SELECT 1 AS id, 2 AS qty, 'new' AS status
) AS __source__events
) AS __model__orders
) AS __case_rows
) AS __case_1_actual
GROUP BY `id`, `doubled`
) AS r ON isNull(l.`id`) = isNull(r.`id`) AND assumeNotNull(l.`id`) = assumeNotNull(r.`id`) AND isNull(l.`doubled`) = isNull(r.`doubled`) AND assumeNotNull(l.`doubled`) = assumeNotNull(r.`doubled`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
UNION ALL
SELECT 1 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(l.`id`)), toNullable(toString(l.`doubled`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM (
SELECT `id`, `doubled`, count() AS __case_count
FROM (
SELECT toNullable(toString(__case_rows.`id`)) AS `id`, toNullable(toString(__case_rows.`doubled`)) AS `doubled`
FROM (
SELECT id::Int64 AS id, (qty * 2)::Int64 AS doubled
FROM (
SELECT id::Int64 AS id, qty::Int64 AS qty, status::String AS status
FROM (
  SELECT 1 AS id, 2 AS qty, 'new' AS status
) AS __source__events
) AS __model__orders
) AS __case_rows
) AS __case_1_actual
GROUP BY `id`, `doubled`
) AS l
ALL LEFT JOIN (
SELECT `id`, `doubled`, count() AS __case_count
FROM (
SELECT toNullable(toString(__case_rows.`id`)) AS `id`, toNullable(toString(__case_rows.`doubled`)) AS `doubled`
FROM (
  SELECT 1 AS id, 4 AS doubled
) AS __case_rows
) AS __case_1_expected
GROUP BY `id`, `doubled`
) AS r ON isNull(l.`id`) = isNull(r.`id`) AND assumeNotNull(l.`id`) = assumeNotNull(r.`id`) AND isNull(l.`doubled`) = isNull(r.`doubled`) AND assumeNotNull(l.`doubled`) = assumeNotNull(r.`doubled`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
UNION ALL
SELECT 2 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(tuple(*)))] AS _row_values, CAST(1 AS Int64) AS _multiplicity
FROM (
SELECT e.id FROM (
  SELECT 1 AS id, 2 AS qty, 'new' AS status
) e, (
SELECT id::Int64 AS id, qty::Int64 AS qty, status::String AS status
FROM (
  SELECT 1 AS id, 2 AS qty, 'new' AS status
) AS __source__events
) AS __model__orders WHERE e.id < 0
) AS __assert_row
)");
}

TEST(SqlTestCompile, KnownColumnTypesCastTheExpectedSideAndAssertionsReportWholeRows) {
  ChecksProject project(sql::Dialect::kDuckDb);
  project.AddModel(
      "pipelines/pl/orders.sql",
      "MODEL ();\nSELECT CAST(id AS BIGINT) AS id, CAST(qty AS BIGINT) AS qty\nFROM __source(\"events\")\n", "pl",
      {{"id", "BIGINT"}, {"qty", "BIGINT"}});
  project.Write("tests/typed.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS id, 2 AS qty),\n"
                "__expected__orders AS (SELECT 1 AS id),\n"
                "__assert__positive AS (SELECT id FROM __ref(orders) WHERE qty <= 0)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  const TestSpec& test = compiled.tests.at(0);
  EXPECT_EQ(test.name, "typed");  // the file stem
  EXPECT_TRUE(test.legacy_clickhouse_sql.empty());
  EXPECT_NE(test.sql.find("__assert__positive AS (\nSELECT id FROM __model__orders WHERE qty <= 0\n)"),
            std::string::npos);
  EXPECT_NE(
      test.sql.find("SELECT CAST(__case_rows.\"id\" AS BIGINT) AS \"id\"\nFROM __expected__orders AS __case_rows"),
      std::string::npos);
  EXPECT_NE(test.sql.find("SELECT __case_rows.\"id\" AS \"id\"\nFROM __model__orders AS __case_rows"),
            std::string::npos);
  EXPECT_NE(test.sql.find("LEFT JOIN __case_1_actual_counts AS r ON l.\"id\" IS NOT DISTINCT FROM r.\"id\""),
            std::string::npos);
  EXPECT_NE(test.sql.find("UNION ALL\nSELECT 2 AS _case_index, 'unexpected' AS _diff_type, "
                          "[CAST(__assert_row AS VARCHAR)] AS _row_values, CAST(1 AS BIGINT) AS _multiplicity\n"
                          "FROM __assert__positive AS __assert_row\n"),
            std::string::npos);
}

TEST(SqlTestCompile, MacroModeExpandsOnlyTheActualCteAndComparesAsText) {
  ChecksProject project;
  std::vector<std::string> expanded;
  project.input.expand_macros = [&](const std::string& file, const std::string& text, size_t begin, size_t end) {
    std::string body = text.substr(begin, end - begin);
    expanded.push_back(file + ":" + body);
    size_t at = body.find("@line_total(\"quantity\", \"unit_price\")");
    return body.replace(at, 37, "quantity * unit_price");
  };
  project.Write(
      "tests/macros/line_total.sql",
      "TEST (mode macro, name \"line total handles nulls\");\n\n"
      "WITH input_values AS (\n  SELECT 2 AS quantity, 10.0 AS unit_price\n),\n"
      "__macro_actual__ AS (\n  SELECT @line_total(\"quantity\", \"unit_price\") AS line_total FROM input_values\n),\n"
      "__macro_expected__ AS (\n  SELECT 20.0 AS line_total\n)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.tests.size(), 1u);
  const TestSpec& test = compiled.tests.front();
  EXPECT_EQ(test.mode, TestMode::kMacro);
  EXPECT_EQ(test.targets, std::vector<std::string>{"macro line total handles nulls"});
  EXPECT_EQ(test.path, "compiled/tests/macro line total handles nulls/line total handles nulls.sql");
  ASSERT_EQ(test.cases.size(), 1u);
  EXPECT_EQ(test.cases[0].name, "__macro_expected__");
  EXPECT_EQ(test.cases[0].columns, std::vector<std::string>{"line_total"});
  // The variant for servers without isNotDistinctFrom inlines the macro CTEs too.
  EXPECT_EQ(test.legacy_clickhouse_sql.find("WITH"), std::string::npos) << test.legacy_clickhouse_sql;
  EXPECT_NE(test.legacy_clickhouse_sql.find("FROM (\n  SELECT quantity * unit_price AS line_total FROM (\n"
                                            "  SELECT 2 AS quantity, 10.0 AS unit_price\n) AS input_values\n)"
                                            " AS __case_rows"),
            std::string::npos)
      << test.legacy_clickhouse_sql;
  EXPECT_NE(test.legacy_clickhouse_sql.find("ON isNull(l.`line_total`) = isNull(r.`line_total`) AND "
                                            "assumeNotNull(l.`line_total`) = assumeNotNull(r.`line_total`)"),
            std::string::npos);
  ASSERT_EQ(expanded.size(), 1u);
  EXPECT_EQ(expanded[0],
            "tests/macros/line_total.sql:\n  SELECT @line_total(\"quantity\", \"unit_price\") AS line_total FROM "
            "input_values\n");
  EXPECT_EQ(test.sql, R"(WITH
input_values AS (
  SELECT 2 AS quantity, 10.0 AS unit_price
),
__macro_actual__ AS (
  SELECT quantity * unit_price AS line_total FROM input_values
),
__macro_expected__ AS (
  SELECT 20.0 AS line_total
),
__case_1_expected AS (
SELECT toNullable(toString(__case_rows.`line_total`)) AS `line_total`
FROM __macro_expected__ AS __case_rows
),
__case_1_actual AS (
SELECT toNullable(toString(__case_rows.`line_total`)) AS `line_total`
FROM __macro_actual__ AS __case_rows
),
__case_1_expected_counts AS (
SELECT `line_total`, count() AS __case_count
FROM __case_1_expected
GROUP BY `line_total`
),
__case_1_actual_counts AS (
SELECT `line_total`, count() AS __case_count
FROM __case_1_actual
GROUP BY `line_total`
)
SELECT 1 AS _case_index, 'missing' AS _diff_type, [toNullable(toString(l.`line_total`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_expected_counts AS l
ALL LEFT JOIN __case_1_actual_counts AS r ON isNotDistinctFrom(l.`line_total`, r.`line_total`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
UNION ALL
SELECT 1 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(l.`line_total`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_actual_counts AS l
ALL LEFT JOIN __case_1_expected_counts AS r ON isNotDistinctFrom(l.`line_total`, r.`line_total`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
)");
}

TEST(SqlTestCompile, AssertionOnlyTestsLiveUnderTheirOwnNameAndHaveNoEdge) {
  ChecksProject project;
  project.AddChain();
  project.input.expand_macros = [](const std::string&, const std::string& text, size_t begin, size_t end) {
    std::string body = text.substr(begin, end - begin);
    return body.replace(body.find("@fixture()"), 10, "SELECT 1 AS id, -1 AS qty, 'new' AS status");
  };
  project.Write("tests/assertions.sql",
                "TEST (name \"items never negative\");\n"
                "WITH __source__events AS (\n  @fixture()\n),\n"
                "__assert__never_negative AS (SELECT id FROM __ref(\"order_items\") WHERE doubled < 0)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  const TestSpec& test = compiled.tests.at(0);
  EXPECT_TRUE(test.targets.empty());
  EXPECT_EQ(test.path, "compiled/tests/items never negative/items never negative.sql");
  EXPECT_NE(test.sql.find("__source__events AS (\n  SELECT 1 AS id, -1 AS qty, 'new' AS status\n)"), std::string::npos);
  // The assertion reads the assembled model, so it comes after it.
  EXPECT_LT(test.sql.find("__model__order_items AS ("), test.sql.find("__assert__never_negative AS ("));
  EXPECT_NE(test.sql.find("SELECT 1 AS _case_index, 'unexpected' AS _diff_type, "
                          "[toNullable(toString(tuple(*)))] AS _row_values, CAST(1 AS Int64) AS _multiplicity\n"
                          "FROM __assert__never_negative AS __assert_row\n"),
            std::string::npos);
}

TEST(SqlTestCompile, SeveralTargetsGoUnderChainAndCasesAreNumberedInCteOrder) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/both.sql",
                "TEST (name \"both\");\n"
                "WITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'new' AS status),\n"
                "__expected__orders AS (SELECT 1 AS id, 2 AS qty),\n"
                "__assert__one AS (SELECT * FROM __ref(\"orders\") WHERE id > 1),\n"
                "__expected__order_items AS (SELECT 1 AS id)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  const TestSpec& test = compiled.tests.at(0);
  EXPECT_EQ(test.targets, (std::vector<std::string>{"order_items", "orders"}));
  EXPECT_EQ(test.path, "compiled/tests/_chain_/order_items__orders/both.sql");
  EXPECT_NE(test.sql.find("SELECT 2 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(tuple(*)))]"),
            std::string::npos);
  EXPECT_NE(test.sql.find("SELECT 3 AS _case_index, 'missing'"), std::string::npos);
  EXPECT_NE(test.sql.find("__case_3_actual AS (\nSELECT toNullable(toString(__case_rows.`id`)) AS `id`\n"
                          "FROM __model__order_items AS __case_rows"),
            std::string::npos);
}

TEST(SqlTestCompile, ExpectedColumnsComeFromAliasesNamesAndStarsOverTestCtes) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/columns.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'new' AS status),\n"
                "rows AS (SELECT 1 AS id, 2 qty, CAST('new' AS String) AS \"status\"),\n"
                "__expected__orders AS (SELECT DISTINCT * FROM rows AS r WHERE id > 0)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  const TestSpec& test = compiled.tests.at(0);
  EXPECT_NE(test.sql.find("GROUP BY `id`, `qty`, `status`"), std::string::npos);
}

TEST(SqlTestCompile, BlocksSplitOnlyAtTestHeadersStartingALine) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/multi.sql",
                "TEST (name \"first\");\n"
                "WITH __source__events AS (SELECT 'TEST (' AS id, 2 AS qty, 'x' AS status\n"
                "TEST (no))\n"
                ", __expected__orders AS (SELECT 1 AS id) -- TEST (name \"nope\");\n"
                "SELECT 1;\n\n"
                "-- the second test\n"
                "TEST (name \"second\");\n" +
                    kChainBody);
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.tests.size(), 2u);
  EXPECT_EQ(compiled.tests[0].name, "first");
  EXPECT_EQ(compiled.tests[1].name, "second");
  EXPECT_EQ(compiled.tests[1].targets, std::vector<std::string>{"order_items"});
}

TEST(SqlTestCompile, UnreadMocksAreWarningsAndMocksReadByNameCount) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/w.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'new' AS status),\n"
                "  __ref__unused AS (SELECT 1 AS x),\n"
                "  __ref__read_directly AS (SELECT 1 AS id),\n"
                "__expected__order_items AS (SELECT id, 2 AS doubled FROM __ref__read_directly)\nSELECT 1\n");
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.warnings.size(), 1u);
  EXPECT_AT(compiled.warnings[0], "SLU-TEST-018", "tests/w.sql", 3, 3);
  EXPECT_NE(compiled.warnings[0].message.find("__ref__unused"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------
// SQL tests: each rule, located.

// A daily model whose SQL reads its window's bounds, and a model reading it.
void AddDailyModels(ChecksProject& project) {
  project.AddModel("pipelines/pl/daily.sql",
                   "MODEL (partitions (daily (column \"d\", start_date \"2026-03-01\")));\n"
                   "SELECT CAST(d AS Date) AS d, CAST(count() AS UInt64) AS n\nFROM __source(\"events\")\n"
                   "WHERE d >= @partition_start() AND d < @partition_end()\nGROUP BY d\n");
  project.AddModel("pipelines/pl/weekly.sql",
                   "MODEL ();\nSELECT CAST(sum(n) AS UInt64) AS n\nFROM __ref(\"daily\")\n");
}

const std::string kDailyBody =
    "WITH __source__events AS (SELECT toDate('2026-03-05') AS d UNION ALL SELECT toDate('2026-03-06')),\n"
    "__expected__weekly AS (SELECT 1 AS n)\nSELECT 1\n";

TEST(SqlTestCompile, PartitionBoundsRenderTheTestsWindowAsARunOfThatDayDoes) {
  ChecksProject project;
  AddDailyModels(project);
  // No `partition`: the first day of the models using the bounds.
  project.Write("tests/weekly.sql", "TEST ();\n" + kDailyBody);
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.tests.size(), 1u);
  EXPECT_EQ(compiled.tests[0].partition, std::optional<std::string>("2026-03-01"));
  EXPECT_NE(compiled.tests[0].sql.find("WHERE d >= toDate('2026-03-01') AND d < toDate('2026-03-02')"),
            std::string::npos)
      << compiled.tests[0].sql;
  EXPECT_NE(compiled.tests[0].legacy_clickhouse_sql.find("d < toDate('2026-03-02')"), std::string::npos);
  EXPECT_EQ(compiled.tests[0].sql.find("@partition_"), std::string::npos);
  EXPECT_EQ(compiled.tests[0].at, (SourceLocation{"tests/weekly.sql", 1, 1}));
  // `partition` picks the day; the test's own CTEs may use the bounds too.
  project.Write("tests/weekly.sql",
                "TEST (partition \"2026-03-05\");\n"
                "WITH __source__events AS (SELECT @partition_start() AS d),\n"
                "__assert__in_window AS (SELECT n FROM __ref(\"weekly\") WHERE n <> 1)\nSELECT 1\n");
  compiled = project.Compile();
  EXPECT_EQ(compiled.tests[0].partition, std::optional<std::string>("2026-03-05"));
  EXPECT_NE(compiled.tests[0].sql.find("SELECT toDate('2026-03-05') AS d"), std::string::npos) << compiled.tests[0].sql;
  EXPECT_NE(compiled.tests[0].sql.find("WHERE d >= toDate('2026-03-05') AND d < toDate('2026-03-06')"),
            std::string::npos);
  // A test that runs no bounds has no window.
  ChecksProject plain;
  plain.AddChain();
  plain.Write("tests/t.sql", "TEST ();\n" + kChainBody);
  EXPECT_EQ(plain.Compile().tests[0].partition, std::nullopt);
}

TEST(SqlTestCompile, PartitionBoundsInDuckDbTestsAreDateLiterals) {
  ChecksProject project(sql::Dialect::kDuckDb);
  project.AddModel("pipelines/pl/daily.sql",
                   "MODEL (partitions (daily (column \"d\", start_date \"2026-03-01\")));\n"
                   "SELECT CAST(d AS DATE) AS d\nFROM __source(\"events\")\n"
                   "WHERE d >= @partition_start() AND d < @partition_end()\n");
  project.Write("tests/daily.sql",
                "TEST (partition \"2026-03-02\");\nWITH __source__events AS (SELECT DATE '2026-03-02' AS d),\n"
                "__expected__daily AS (SELECT DATE '2026-03-02' AS d)\nSELECT 1\n");
  const std::string sql = project.Compile().tests.at(0).sql;
  EXPECT_NE(sql.find("WHERE d >= DATE '2026-03-02' AND d < DATE '2026-03-03'"), std::string::npos) << sql;
}

TEST(SqlTestErrors, TheWindowIsADayOnOrAfterTheModelsStartAndBoundsNeedOne) {
  ChecksProject project;
  AddDailyModels(project);
  project.Write("tests/weekly.sql", "TEST (partition \"2026-3-5\");\n" + kDailyBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-001", "tests/weekly.sql", 1, 17);
  project.Write("tests/weekly.sql", "TEST (partition 20260305);\n" + kDailyBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-001", "tests/weekly.sql", 1, 17);
  project.Write("tests/weekly.sql", "TEST (partition \"2026-02-28\");\n" + kDailyBody);
  Diagnostic early = CompileError(project);
  EXPECT_AT(early, "SLU-TEST-022", "tests/weekly.sql", 1, 17);
  EXPECT_NE(early.message.find("before model 'daily' starts (start_date 2026-03-01)"), std::string::npos);
  // Bounds in a test that runs no model using them, without `partition`.
  ChecksProject plain;
  plain.AddChain();
  plain.Write("tests/t.sql",
              "TEST ();\nWITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'new' AS status),\n"
              "__assert__recent AS (SELECT 1 WHERE today() < @partition_end())\nSELECT 1\n");
  Diagnostic no_window = CompileError(plain);
  EXPECT_AT(no_window, "SLU-TEST-022", "tests/t.sql", 3, 47);
  EXPECT_NE(no_window.hint.find("TEST (partition"), std::string::npos);
}

TEST(SqlTestErrors, HeaderKeysAndNames) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/t.sql", "TEST (name \"x\", flavour 1);\n" + kChainBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-001", "tests/t.sql", 1, 17);
  project.Write("tests/t.sql", "TEST (mode fast);\n" + kChainBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-001", "tests/t.sql", 1, 12);
  project.Write("tests/t.sql", "TEST (name [1]);\n" + kChainBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-001", "tests/t.sql", 1, 12);
  project.Write("tests/t.sql", "TEST (name \"a/b\");\n" + kChainBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-004", "tests/t.sql", 1, 12);
  project.Write("tests/t.sql", "-- a comment first\nTEST ();\n" + kChainBody);
  EXPECT_EQ(CompileError(project).code, "SLU-HEADER-001");
}

TEST(SqlTestErrors, BodyShape) {
  ChecksProject project;
  project.AddChain();
  auto error_for = [&](const std::string& body) {
    project.Write("tests/t.sql", "TEST ();\n" + body);
    return CompileError(project);
  };
  EXPECT_AT(error_for("SELECT 1\n"), "SLU-TEST-002", "tests/t.sql", 2, 1);
  EXPECT_AT(error_for("WITH __ref__a AS (SELECT 1 AS x)\nSELECT 2\n"), "SLU-TEST-002", "tests/t.sql", 3, 8);
  EXPECT_AT(error_for("WITH __ref__a AS (SELECT 1 AS x) SELECT 1; SELECT 2\n"), "SLU-TEST-002", "tests/t.sql", 2, 44);
  EXPECT_AT(error_for("WITH __ref__a AS (SELECT (1 AS x\nSELECT 1\n"), "SLU-TEST-002", "tests/t.sql", 2, 18);
  EXPECT_AT(error_for("WITH __ref__a (x) AS (SELECT 1)\nSELECT 1\n"), "SLU-TEST-002", "tests/t.sql", 2, 15);
  EXPECT_AT(error_for("WITH __ref__a AS ()\nSELECT 1\n"), "SLU-TEST-002", "tests/t.sql", 2, 18);
  EXPECT_AT(error_for("WITH __ref__a SELECT 1\n"), "SLU-TEST-002", "tests/t.sql", 2, 15);
  EXPECT_AT(error_for("WITH __ref__a AS (SELECT 1) __expected__b AS (SELECT 1)\nSELECT 1\n"), "SLU-TEST-002",
            "tests/t.sql", 2, 29);
  Diagnostic macro = error_for("WITH @fixtures()\nSELECT 1\n");
  EXPECT_AT(macro, "SLU-TEST-002", "tests/t.sql", 2, 6);
  EXPECT_NE(macro.hint.find("inside CTE bodies"), std::string::npos);
  EXPECT_FALSE(macro.source_line.empty());
}

TEST(SqlTestErrors, NamesAreRequiredWithSeveralBlocksAndUniqueAcrossFiles) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/t.sql", "TEST (name \"one\");\n" + kChainBody + "\nTEST ();\n" + kChainBody);
  EXPECT_AT(CompileError(project), "SLU-TEST-003", "tests/t.sql", 6, 1);
  project.Write("tests/t.sql", "TEST (name \"same\");\n" + kChainBody);
  project.Write("tests/u.sql", "TEST (name \"same\");\n" + kChainBody);
  Diagnostic d = CompileError(project);
  EXPECT_AT(d, "SLU-TEST-003", "tests/u.sql", 1, 12);
  EXPECT_NE(d.message.find("tests/t.sql"), std::string::npos);
}

TEST(SqlTestErrors, CteNames) {
  ChecksProject project;
  project.AddChain();
  auto error_for = [&](const std::string& ctes) {
    project.Write("tests/t.sql", "TEST ();\nWITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'x' AS status),\n" +
                                     ctes + "\nSELECT 1\n");
    return CompileError(project);
  };
  EXPECT_AT(error_for("__source__events AS (SELECT 2)"), "SLU-TEST-005", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__actual AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__expected__typed AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("x AS (SELECT 1), __model__orders AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 18);
  EXPECT_AT(error_for("__case_1_expected AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__seed__x AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__dbt_ref__x AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__macro__x AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__udf_actual__ AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__ref__ AS (SELECT 1)"), "SLU-TEST-006", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__ref__events AS (SELECT 1)"), "SLU-TEST-019", "tests/t.sql", 3, 1);
  EXPECT_AT(error_for("__macro_actual__ AS (SELECT 1)"), "SLU-TEST-009", "tests/t.sql", 3, 1);
}

TEST(SqlTestErrors, ModelModeNeedsMocksAndSomethingToCheck) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/t.sql", "TEST (name \"n\");\nWITH __expected__orders AS (SELECT 1 AS id)\nSELECT 1\n");
  EXPECT_AT(CompileError(project), "SLU-TEST-007", "tests/t.sql", 1, 12);
  project.Write("tests/t.sql", "TEST ();\nWITH __source__events AS (SELECT 1 AS id)\nSELECT 1\n");
  EXPECT_AT(CompileError(project), "SLU-TEST-008", "tests/t.sql", 1, 1);
}

TEST(SqlTestErrors, ExpectedModelsMustExistAndNotBeMocked) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/t.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n  __expected__nope AS (SELECT 1)\n"
                "SELECT 1\n");
  EXPECT_AT(CompileError(project), "SLU-TEST-010", "tests/t.sql", 3, 3);
  project.Write("tests/t.sql",
                "TEST ();\nWITH __ref__orders AS (SELECT 1 AS id),\n  __expected__orders AS (SELECT 1)\n"
                "SELECT 1\n");
  EXPECT_AT(CompileError(project), "SLU-TEST-010", "tests/t.sql", 3, 3);
}

TEST(SqlTestErrors, UnresolvedDependenciesSuggestTheMock) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/t.sql",
                "TEST ();\nWITH __ref__other AS (SELECT 1 AS id),\n"
                "  __expected__order_items AS (SELECT 1 AS id)\nSELECT 1\n");
  Diagnostic d = CompileError(project);
  EXPECT_AT(d, "SLU-TEST-011", "tests/t.sql", 3, 3);
  EXPECT_NE(d.message.find("'events', read by model 'orders'"), std::string::npos) << d.message;
  EXPECT_NE(d.hint.find("__source__events"), std::string::npos) << d.hint;

  project.Write("tests/t.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n"
                "  __assert__x AS (SELECT * FROM __ref(\"ghost\"))\nSELECT 1\n");
  d = CompileError(project);
  EXPECT_AT(d, "SLU-TEST-011", "tests/t.sql", 3, 33);
  EXPECT_NE(d.hint.find("__ref__ghost"), std::string::npos) << d.hint;
  EXPECT_EQ(FormatDiagnostic(d),
            "tests/t.sql:3:33: error[SLU-TEST-011]: test 't' cannot resolve 'ghost' which is neither mocked nor a "
            "model\n"
            " 3 |   __assert__x AS (SELECT * FROM __ref(\"ghost\"))\n"
            "   |                                 ^\n"
            "  hint: mock it: add __ref__ghost AS (SELECT …)\n");
}

TEST(SqlTestErrors, ReferenceCyclesAreReported) {
  ChecksProject project;
  project.AddModel("pipelines/pl/a.sql", "MODEL ();\nSELECT 1 AS x FROM __ref(\"b\")\n");
  project.AddModel("pipelines/pl/b.sql", "MODEL ();\nSELECT 1 AS x FROM __ref(\"a\")\n");
  project.Write("tests/t.sql",
                "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n"
                "  __expected__a AS (SELECT 1 AS x)\nSELECT 1\n");
  Diagnostic d = CompileError(project);
  EXPECT_AT(d, "SLU-TEST-020", "tests/t.sql", 3, 3);
  EXPECT_NE(d.message.find("a → b → a"), std::string::npos) << d.message;
}

// Models m0 … m<count-1>, each reading the one before; m0 reads the `events` source.
void AddModelChain(ChecksProject& project, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    std::string input = i == 0 ? "__source(\"events\")" : "__ref(\"m" + std::to_string(i - 1) + "\")";
    project.AddModel("pipelines/pl/m" + std::to_string(i) + ".sql", "MODEL ();\nSELECT 1 AS x FROM " + input + "\n");
  }
}

TEST(SqlTestErrors, ALongUnmockedChainIsBoundedWithoutDeepRecursion) {
  ChecksProject within;
  AddModelChain(within, 256);
  within.Write("tests/t.sql",
               "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n"
               "  __expected__m255 AS (SELECT 1 AS x)\nSELECT 1\n");
  EXPECT_NE(within.Compile().tests.at(0).sql.find("__model__m0 AS"), std::string::npos);

  ChecksProject beyond;
  AddModelChain(beyond, 1000);
  beyond.Write("tests/t.sql",
               "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n"
               "  __expected__m999 AS (SELECT 1 AS x)\nSELECT 1\n");
  Diagnostic d = CompileError(beyond);
  EXPECT_AT(d, "SLU-TEST-021", "tests/t.sql", 3, 3);
  EXPECT_NE(d.message.find("more than 256 unmocked models in a chain (the next one is 'm743')"), std::string::npos)
      << d.message;
}

TEST(SqlTestCompile, AChainOfTwentyThousandTestCtesIsOrdered) {
  ChecksProject project;
  project.AddChain();
  std::string ctes = "WITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'new' AS status),\n  c0 AS (SELECT 1 AS x)";
  for (int i = 1; i < 20000; ++i)
    ctes += ",\n  c" + std::to_string(i) + " AS (SELECT x FROM c" + std::to_string(i - 1) + ")";
  project.Write(
      "tests/t.sql",
      "TEST ();\n" + ctes + ",\n  __expected__order_items AS (SELECT x AS id, x AS doubled FROM c19999)\nSELECT 1\n");
  std::string sql = project.Compile().tests.at(0).sql;  // a copy: Compile() returns a temporary
  EXPECT_LT(sql.find("c0 AS"), sql.find("c1 AS"));
  EXPECT_LT(sql.find("c19998 AS"), sql.find("c19999 AS"));
}

TEST(SqlTestErrors, ExpectedColumnsMustBeNamedAndProducedByTheModel) {
  ChecksProject project;
  project.AddChain();
  auto error_for = [&](const std::string& expected) {
    project.Write("tests/t.sql",
                  "TEST ();\nWITH __source__events AS (SELECT 1 AS id, 2 AS qty, 'x' AS status),\n"
                  "  __expected__orders AS (" +
                      expected + ")\nSELECT 1\n");
    return CompileError(project);
  };
  Diagnostic d = error_for("SELECT 1 AS id, qty + 1 FROM x");
  EXPECT_AT(d, "SLU-TEST-012", "tests/t.sql", 3, 3);
  EXPECT_NE(d.message.find("select item 2 (`qty + 1`) has no name"), std::string::npos) << d.message;
  EXPECT_NE(error_for("SELECT * FROM __ref(\"orders\")").message.find("columns are unknown"), std::string::npos);
  EXPECT_NE(error_for("SELECT 1 AS id, 2 AS id").message.find("appears twice"), std::string::npos);
  EXPECT_NE(error_for("VALUES (1)").message.find("not a SELECT"), std::string::npos);

  ChecksProject typed;
  typed.AddModel("pipelines/pl/orders.sql", "MODEL ();\nSELECT id::Int64 AS id FROM __source(\"events\")\n", "pl",
                 {{"id", "Int64"}});
  typed.Write("tests/t.sql",
              "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n"
              "  __expected__orders AS (SELECT 1 AS id, 2 AS bogus)\nSELECT 1\n");
  d = CompileError(typed);
  EXPECT_AT(d, "SLU-TEST-013", "tests/t.sql", 3, 3);
  EXPECT_NE(d.hint.find("its columns: id"), std::string::npos);
  // With known columns, `*` over the model expands to them.
  typed.Write("tests/t.sql",
              "TEST ();\nWITH __source__events AS (SELECT 1 AS id),\n"
              "  __expected__orders AS (SELECT * FROM __ref(\"orders\"))\nSELECT 1\n");
  EXPECT_NE(typed.Compile().tests.at(0).sql.find("CAST(__case_rows.`id` AS Int64) AS `id`"), std::string::npos);
}

TEST(SqlTestErrors, MacroModeRules) {
  ChecksProject project;
  project.AddChain();
  project.input.expand_macros = [](const std::string&, const std::string& text, size_t begin, size_t end) {
    return text.substr(begin, end - begin);
  };
  auto error_for = [&](const std::string& ctes) {
    project.Write("tests/m.sql", "TEST (mode macro);\nWITH " + ctes + "\nSELECT 1\n");
    return CompileError(project);
  };
  EXPECT_AT(error_for("__macro_actual__ AS (SELECT 1 AS x)"), "SLU-TEST-014", "tests/m.sql", 1, 1);
  EXPECT_AT(error_for("__macro_actual__ AS (SELECT 1 AS x), __ref__y AS (SELECT 1)"), "SLU-TEST-014", "tests/m.sql", 2,
            43);
  EXPECT_AT(
      error_for("__macro_actual__ AS (SELECT x FROM __ref(\"orders\")),\n  __macro_expected__ AS (SELECT 1 AS x)"),
      "SLU-TEST-014", "tests/m.sql", 2, 41);
  EXPECT_AT(error_for("h AS (SELECT @m() AS x), __macro_actual__ AS (SELECT 1 AS x),\n"
                      "  __macro_expected__ AS (SELECT 1 AS x)"),
            "SLU-TEST-015", "tests/m.sql", 2, 19);
  EXPECT_AT(error_for("__macro_actual__ AS (SELECT 1 AS x),\n  __macro_expected__ AS (SELECT @m() AS x)"),
            "SLU-TEST-015", "tests/m.sql", 3, 33);
  Diagnostic d = error_for("__macro_actual__ AS (SELECT 1 AS x, 2 AS y),\n  __macro_expected__ AS (SELECT 1 AS x)");
  EXPECT_AT(d, "SLU-TEST-016", "tests/m.sql", 2, 6);
  EXPECT_NE(d.message.find("(x, y)"), std::string::npos);
}

TEST(SqlTestErrors, MacroCallsNeedAnExpander) {
  ChecksProject project;
  project.AddChain();
  project.Write("tests/t.sql",
                "TEST ();\nWITH __source__events AS (@rows()),\n"
                "  __expected__orders AS (SELECT 1 AS id)\nSELECT 1\n");
  Diagnostic d = CompileError(project);
  EXPECT_AT(d, "SLU-TEST-017", "tests/t.sql", 2, 27);
  EXPECT_NE(d.message.find("@rows"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------
// Audits: compiled SQL.

TEST(AuditCompile, ConcreteAuditResolvesReferencesAndBuildsCountAndSampleQueries) {
  ChecksProject project;
  project.AddChain();
  project.Write("audits/quality/no_negative.sql",
                "AUDIT (severity warning, description \"Quantities are never negative.\");\n\n"
                "SELECT id, qty\nFROM __ref(\"orders\")\nWHERE qty < 0;\n");
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.audits.size(), 1u);
  const AuditSpec& audit = compiled.audits.front();
  EXPECT_EQ(audit.name, "no_negative");
  EXPECT_EQ(audit.file, "audits/quality/no_negative.sql");
  EXPECT_EQ(audit.path, "compiled/audits/quality/no_negative.sql");
  EXPECT_EQ(audit.origin, AuditOrigin::kConcrete);
  EXPECT_EQ(audit.referenced_models, std::vector<std::string>{"orders"});
  EXPECT_EQ(audit.severity, AuditSeverity::kWarning);
  EXPECT_EQ(audit.description, "Quantities are never negative.");
  EXPECT_FALSE(audit.scheduled);
  EXPECT_EQ(audit.every_seconds, std::nullopt);
  EXPECT_EQ(audit.warmup_seconds, 0);
  EXPECT_EQ(audit.sql, "SELECT id, qty\nFROM analytics.tbl__orders\nWHERE qty < 0\n");
  EXPECT_EQ(audit.failure_count_sql,
            "SELECT count() FROM (\nSELECT id, qty\nFROM analytics.tbl__orders\nWHERE qty < 0\n)");
  EXPECT_EQ(audit.sample_sql, "SELECT * FROM (\nSELECT id, qty\nFROM analytics.tbl__orders\nWHERE qty < 0\n) LIMIT 5");

  ChecksProject duck(sql::Dialect::kDuckDb);
  duck.AddChain();
  duck.Write("audits/a.sql", "AUDIT ();\nSELECT * FROM __ref(\"orders\")\n");
  CompiledChecks duck_compiled = duck.Compile();
  const AuditSpec& standard = duck_compiled.audits.at(0);
  EXPECT_EQ(standard.failure_count_sql, "SELECT count(*) FROM (\nSELECT * FROM analytics.tbl__orders\n) AS audit_rows");
  EXPECT_EQ(standard.sample_sql, "SELECT * FROM (\nSELECT * FROM analytics.tbl__orders\n) AS audit_rows LIMIT 5");
}

TEST(AuditCompile, SeveralBlocksPerFileAreNamedAndCompiledSeparately) {
  ChecksProject project;
  project.AddChain();
  project.Write(
      "audits/quality/pair.sql",
      "AUDIT (name \"ids present\");\nSELECT * FROM __ref(\"orders\") WHERE id IS NULL\n\n"
      "AUDIT (name \"items present\");\nSELECT * FROM __ref(orders) o JOIN __ref(\"order_items\") i USING (id)\n");
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.audits.size(), 2u);
  EXPECT_EQ(compiled.audits[0].path, "compiled/audits/quality/pair__ids present.sql");
  EXPECT_EQ(compiled.audits[1].path, "compiled/audits/quality/pair__items present.sql");
  EXPECT_EQ(compiled.audits[1].referenced_models, (std::vector<std::string>{"orders", "order_items"}));
  EXPECT_EQ(compiled.audits[1].sql,
            "SELECT * FROM analytics.tbl__orders o JOIN analytics.tbl__order_items i USING (id)\n");
  EXPECT_EQ(compiled.audits[0].referenced_models.size() + compiled.audits[1].referenced_models.size(), 3u);
}

TEST(AuditCompile, GenericAuditsAreInvokedAtModelAndColumnLevel) {
  ChecksProject project;
  project.Write("audits/generic/accepted_values.sql",
                "AUDIT ();\n\nSELECT @column\nFROM __ref(\"@model\")\nWHERE @column NOT IN (@'values')\n");
  project.Write("audits/generic/not_null.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\") WHERE @column IS NULL\n");
  project.Write("audits/generic/in_list.sql",
                "AUDIT ();\nSELECT * FROM __ref(\"@model\") WHERE @column NOT IN (@allowed)\n");
  project.Write(
      "audits/generic/expression_is_true.sql",
      "AUDIT ();\nSELECT *\nFROM __ref(\"@model\")\nWHERE NOT (@expression) -- @ignored in comments\n  AND 1 = 1\n");
  project.AddChain(
      "MODEL (\n"
      "  columns (\n"
      "    status (audits [accepted_values (values [\"new\", \"o'k\"])]),\n"
      "    id (audits [not_null, not_null (severity warning)]),\n"
      "    qty (audits [in_list (allowed [1, 2.50], column \"qty\")]),\n"
      "  ),\n"
      "  audits [expression_is_true (name \"qty is positive\", expression \"qty > 0\")],\n"
      ");\n");
  CompiledChecks compiled = project.Compile();
  ASSERT_EQ(compiled.audits.size(), 5u);
  const AuditSpec& accepted = AuditNamed(compiled, "orders.status.accepted_values.1");
  EXPECT_EQ(accepted.origin, AuditOrigin::kGeneric);
  EXPECT_EQ(accepted.definition, "accepted_values");
  EXPECT_EQ(accepted.file, "pipelines/pl/orders.sql");
  EXPECT_EQ(accepted.path, "compiled/audits/pipelines/pl/orders__orders.status.accepted_values.1.sql");
  EXPECT_EQ(accepted.sql, "SELECT status\nFROM analytics.tbl__orders\nWHERE status NOT IN ('new', 'o\\'k')\n");
  EXPECT_EQ(accepted.severity, AuditSeverity::kError);
  EXPECT_EQ(AuditNamed(compiled, "orders.id.not_null.1").severity, AuditSeverity::kError);
  const AuditSpec& second = AuditNamed(compiled, "orders.id.not_null.2");
  EXPECT_EQ(second.severity, AuditSeverity::kWarning);
  EXPECT_EQ(second.sql, "SELECT * FROM analytics.tbl__orders WHERE id IS NULL\n");
  EXPECT_EQ(AuditNamed(compiled, "orders.qty.in_list.1").sql,
            "SELECT * FROM analytics.tbl__orders WHERE qty NOT IN (1, 2.50)\n");
  const AuditSpec& expression = AuditNamed(compiled, "qty is positive");
  EXPECT_EQ(expression.path, "compiled/audits/pipelines/pl/orders__qty is positive.sql");
  EXPECT_EQ(expression.sql,
            "SELECT *\nFROM analytics.tbl__orders\nWHERE NOT (qty > 0) -- @ignored in comments\n  AND 1 = 1\n");
  std::vector<std::string> names;
  for (const AuditSpec& audit : compiled.audits) names.push_back(audit.name);
  EXPECT_EQ(names, (std::vector<std::string>{"orders.id.not_null.1", "orders.id.not_null.2", "orders.qty.in_list.1",
                                             "orders.status.accepted_values.1", "qty is positive"}));
  for (const AuditSpec& audit : compiled.audits) {
    EXPECT_EQ(audit.referenced_models, (std::vector<std::string>{"orders"})) << audit.name;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Audits: each rule, located.

TEST(AuditErrors, HeaderKeysAndValues) {
  ChecksProject project;
  project.AddChain();
  auto error_for = [&](const std::string& header) {
    project.Write("audits/a.sql", header + "\nSELECT * FROM __ref(\"orders\")\n");
    return CompileError(project);
  };
  EXPECT_AT(error_for("AUDIT (colour \"red\");"), "SLU-AUDIT-001", "audits/a.sql", 1, 8);
  EXPECT_AT(error_for("AUDIT (severity fatal);"), "SLU-AUDIT-001", "audits/a.sql", 1, 17);
  EXPECT_AT(error_for("AUDIT (every \"soon\");"), "SLU-AUDIT-001", "audits/a.sql", 1, 14);
  EXPECT_AT(error_for("AUDIT (every 0);"), "SLU-AUDIT-001", "audits/a.sql", 1, 14);
  EXPECT_AT(error_for("AUDIT (scheduled \"yes\");"), "SLU-AUDIT-001", "audits/a.sql", 1, 18);
  EXPECT_AT(error_for("AUDIT (description \"\");"), "SLU-AUDIT-001", "audits/a.sql", 1, 20);
  EXPECT_AT(error_for("AUDIT (name \"a/b\");"), "SLU-AUDIT-004", "audits/a.sql", 1, 13);
}

TEST(AuditErrors, QueryShape) {
  ChecksProject project;
  project.AddChain();
  project.Write("audits/a.sql", "AUDIT ();\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-002", "audits/a.sql", 1, 10);
  project.Write("audits/a.sql", "AUDIT ();\nDELETE FROM x\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-002", "audits/a.sql", 2, 1);
  project.Write("audits/a.sql", "AUDIT ();\nSELECT * FROM __ref(\"orders\"); SELECT 2\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-002", "audits/a.sql", 2, 32);
}

TEST(AuditErrors, NamesAreRequiredWithSeveralBlocksAndUnique) {
  ChecksProject project;
  project.AddChain();
  project.Write("audits/a.sql", "AUDIT (name \"one\");\nSELECT * FROM __ref(orders)\nAUDIT ();\nSELECT 1\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-003", "audits/a.sql", 3, 1);
  project.Write("audits/a.sql", "AUDIT (name \"same\");\nSELECT * FROM __ref(orders)\n");
  project.Write("audits/b.sql", "AUDIT (name \"same\");\nSELECT * FROM __ref(orders)\n");
  Diagnostic d = CompileError(project);
  EXPECT_AT(d, "SLU-AUDIT-003", "audits/b.sql", 1, 1);
  EXPECT_NE(d.message.find("audits/a.sql"), std::string::npos);
}

TEST(AuditErrors, OnlyReferencesToModels) {
  ChecksProject project;
  project.AddChain();
  auto error_for = [&](const std::string& query) {
    project.Write("audits/a.sql", "AUDIT ();\n" + query + "\n");
    return CompileError(project);
  };
  EXPECT_AT(error_for("SELECT * FROM __source(\"events\")"), "SLU-AUDIT-005", "audits/a.sql", 2, 15);
  EXPECT_AT(error_for("SELECT * FROM __ref(\"ghost\")"), "SLU-AUDIT-005", "audits/a.sql", 2, 15);
  Diagnostic source = error_for("SELECT * FROM __ref(\"events\")");
  EXPECT_AT(source, "SLU-AUDIT-005", "audits/a.sql", 2, 15);
  EXPECT_NE(source.message.find("is a source"), std::string::npos);
  EXPECT_AT(error_for("SELECT 1"), "SLU-AUDIT-005", "audits/a.sql", 1, 1);
  EXPECT_EQ(error_for("SELECT * FROM __ref(\"orders\", ref_type='sideways')").code, "SLU-SQL-012");
}

TEST(AuditErrors, GenericDefinitions) {
  ChecksProject project;
  project.AddChain("MODEL (audits [check]);\n");
  project.Write("audits/generic/check.sql", "AUDIT (severity error);\nSELECT * FROM __ref(\"@model\")\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-006", "audits/generic/check.sql", 1, 8);
  project.Write("audits/generic/check.sql",
                "AUDIT ();\nSELECT * FROM __ref(\"@model\")\nAUDIT ();\nSELECT * FROM __ref(\"@model\")\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-006", "audits/generic/check.sql", 3, 1);
  project.Write("audits/generic/check.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\") WHERE x = @name\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-006", "audits/generic/check.sql", 2, 41);
  project.Write("audits/generic/check.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\")\n");
  project.Write("audits/generic/more/check.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\")\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-007", "audits/generic/more/check.sql", 1, 1);
}

TEST(AuditErrors, Invocations) {
  ChecksProject project;
  project.Write("audits/generic/not_null.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\") WHERE @column IS NULL\n");
  project.Write("audits/generic/accepted_values.sql",
                "AUDIT ();\nSELECT * FROM __ref(@model) WHERE @column NOT IN (@'values')\n");
  project.Write("audits/generic/expression_is_true.sql",
                "AUDIT ();\nSELECT * FROM __ref(@model) WHERE NOT (@expression)\n");
  auto error_for = [&](const std::string& header) {
    ChecksProject local;
    local.input.models.clear();
    for (const char* file : {"audits/generic/not_null.sql", "audits/generic/accepted_values.sql",
                             "audits/generic/expression_is_true.sql"}) {
      std::ifstream in(project.input.root / file);
      local.Write(file, std::string(std::istreambuf_iterator<char>(in), {}));
    }
    local.AddChain("MODEL (\n" + header + "\n);\n");
    return CompileError(local);
  };
  EXPECT_AT(error_for("  audits not_null,"), "SLU-AUDIT-008", "pipelines/pl/orders.sql", 2, 10);
  EXPECT_AT(error_for("  audits [[not_null]],"), "SLU-AUDIT-008", "pipelines/pl/orders.sql", 2, 11);
  Diagnostic unknown = error_for("  audits [unique],");
  EXPECT_AT(unknown, "SLU-AUDIT-009", "pipelines/pl/orders.sql", 2, 11);
  EXPECT_NE(unknown.hint.find("accepted_values, expression_is_true, not_null"), std::string::npos);
  Diagnostic missing = error_for("  columns (status (audits [accepted_values])),");
  EXPECT_AT(missing, "SLU-AUDIT-010", "pipelines/pl/orders.sql", 2, 28);
  EXPECT_NE(missing.message.find("needs argument values"), std::string::npos);
  EXPECT_AT(error_for("  audits [not_null (column \"id\", colour 1)],"), "SLU-AUDIT-010", "pipelines/pl/orders.sql", 2,
            34);
  EXPECT_AT(error_for("  columns (id (audits [not_null (column \"qty\")])),"), "SLU-AUDIT-010",
            "pipelines/pl/orders.sql", 2, 34);
  EXPECT_AT(error_for("  audits [not_null (model \"other\", column \"id\")],"), "SLU-AUDIT-010",
            "pipelines/pl/orders.sql", 2, 21);
  EXPECT_AT(error_for("  columns (status (audits [accepted_values (values [1, 2])])),"), "SLU-AUDIT-011",
            "pipelines/pl/orders.sql", 2, 53);
  EXPECT_AT(error_for("  audits [expression_is_true (expression (a 1))],"), "SLU-AUDIT-011", "pipelines/pl/orders.sql",
            2, 42);
  EXPECT_AT(error_for("  columns (id (audits [not_null (severity fatal)])),"), "SLU-AUDIT-011",
            "pipelines/pl/orders.sql", 2, 43);
  EXPECT_AT(error_for("  columns (id (audits [not_null (name \"x/y\")])),"), "SLU-AUDIT-004", "pipelines/pl/orders.sql",
            2, 39);
}

TEST(AuditErrors, MacrosNeedAnExpanderAndPathsMustDiffer) {
  ChecksProject project;
  project.AddChain();
  project.Write("audits/a.sql", "AUDIT ();\nSELECT * FROM __ref(orders) WHERE @bad()\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-015", "audits/a.sql", 2, 35);
  project.input.expand_macros = [](const std::string&, const std::string& text, size_t begin, size_t end) {
    std::string body = text.substr(begin, end - begin);
    return body.replace(body.find("@bad()"), 6, "id > 1");
  };
  EXPECT_EQ(project.Compile().audits.at(0).sql, "SELECT * FROM analytics.tbl__orders WHERE id > 1\n");

  ChecksProject paths;
  paths.AddChain();
  paths.Write("audits/x.sql", "AUDIT (name \"y\");\nSELECT * FROM __ref(orders)\n");
  paths.Write("audits/x__y.sql", "AUDIT ();\nSELECT * FROM __ref(orders)\n");
  EXPECT_AT(CompileError(paths), "SLU-AUDIT-016", "audits/x__y.sql", 1, 1);
}

// ---------------------------------------------------------------------------------------------------------
// Audit policy.

TEST(AuditPolicy, SeverityIsExplicitElseErrorWhenAnyReadModelDefaultsToError) {
  ChecksProject project;
  project.AddChain("MODEL ();\n", "p2");
  project.Write("audits/one.sql", "AUDIT ();\nSELECT * FROM __ref(orders)\n");
  project.Write("audits/two.sql", "AUDIT ();\nSELECT * FROM __ref(order_items)\n");
  project.Write("audits/both.sql", "AUDIT ();\nSELECT * FROM __ref(orders), __ref(order_items)\n");
  project.Write("audits/explicit.sql", "AUDIT (severity warning);\nSELECT * FROM __ref(orders)\n");
  CompiledChecks compiled = project.Compile();
  EXPECT_EQ(AuditNamed(compiled, "one").severity, AuditSeverity::kError);  // nothing configured
  project.input.pipeline_audit_defaults["p2"].severity = AuditSeverity::kWarning;
  compiled = project.Compile();
  EXPECT_EQ(AuditNamed(compiled, "one").severity, AuditSeverity::kError);
  EXPECT_EQ(AuditNamed(compiled, "two").severity, AuditSeverity::kWarning);
  EXPECT_EQ(AuditNamed(compiled, "both").severity, AuditSeverity::kError);
  EXPECT_EQ(AuditNamed(compiled, "explicit").severity, AuditSeverity::kWarning);
  project.input.project_audit_defaults.severity = AuditSeverity::kWarning;
  project.input.pipeline_audit_defaults["p2"].severity = AuditSeverity::kError;
  compiled = project.Compile();
  EXPECT_EQ(AuditNamed(compiled, "one").severity, AuditSeverity::kWarning);  // project default
  EXPECT_EQ(AuditNamed(compiled, "both").severity, AuditSeverity::kError);   // pipeline beats project
}

TEST(AuditPolicy, WarmupIsExplicitElseTheLargestInherited) {
  ChecksProject project;
  project.AddChain("MODEL ();\n", "p2");
  project.input.project_audit_defaults.warmup_seconds = 60;
  project.input.pipeline_audit_defaults["p2"].warmup_seconds = 120;
  project.Write("audits/one.sql", "AUDIT ();\nSELECT * FROM __ref(orders)\n");
  project.Write("audits/both.sql", "AUDIT ();\nSELECT * FROM __ref(orders), __ref(order_items)\n");
  project.Write("audits/explicit.sql", "AUDIT (warmup \"5s\");\nSELECT * FROM __ref(order_items)\n");
  CompiledChecks compiled = project.Compile();
  EXPECT_EQ(AuditNamed(compiled, "one").warmup_seconds, 60);
  EXPECT_EQ(AuditNamed(compiled, "both").warmup_seconds, 120);
  EXPECT_EQ(AuditNamed(compiled, "explicit").warmup_seconds, 5);
}

TEST(AuditPolicy, CadenceIsExplicitElseTheSingleInheritedOne) {
  ChecksProject project;
  project.AddChain("MODEL ();\n", "p2");
  project.input.pipeline_audit_defaults["pl"].every_seconds = 300;
  project.Write("audits/inherits.sql", "AUDIT (name \"inherits\");\nSELECT * FROM __ref(orders), __ref(order_items)\n");
  project.Write("audits/explicit.sql", "AUDIT (name \"explicit\", every \"1h\");\nSELECT * FROM __ref(order_items)\n");
  project.Write("audits/off.sql", "AUDIT (scheduled false);\nSELECT * FROM __ref(orders)\n");
  project.Write("audits/none.sql", "AUDIT (name \"none\");\nSELECT * FROM __ref(order_items)\n");
  CompiledChecks compiled = project.Compile();
  EXPECT_EQ(AuditNamed(compiled, "inherits").every_seconds, 300);
  EXPECT_TRUE(AuditNamed(compiled, "inherits").scheduled);
  EXPECT_EQ(AuditNamed(compiled, "explicit").every_seconds, 3600);
  EXPECT_FALSE(AuditNamed(compiled, "off").scheduled);
  EXPECT_EQ(AuditNamed(compiled, "off").every_seconds, std::nullopt);
  EXPECT_FALSE(AuditNamed(compiled, "none").scheduled);

  project.input.pipeline_audit_defaults["p2"].every_seconds = 600;
  Diagnostic conflict = CompileError(project);
  EXPECT_AT(conflict, "SLU-AUDIT-012", "audits/inherits.sql", 1, 1);
  EXPECT_NE(conflict.message.find("300s, 600s"), std::string::npos);
  project.Write("audits/inherits.sql",
                "AUDIT (name \"inherits\", every 60);\nSELECT * FROM __ref(orders), __ref(order_items)\n");
  EXPECT_EQ(AuditNamed(project.Compile(), "inherits").every_seconds, 60);
}

TEST(AuditPolicy, ScheduledNeedsACadenceAndConcreteScheduledAuditsNeedAName) {
  ChecksProject project;
  project.AddChain("MODEL (audits [check]);\n");
  project.Write("audits/generic/check.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\")\n");
  project.Write("audits/a.sql", "AUDIT (scheduled true);\nSELECT * FROM __ref(orders)\n");
  EXPECT_AT(CompileError(project), "SLU-AUDIT-013", "audits/a.sql", 1, 18);
  project.input.project_audit_defaults.every_seconds = 120;
  EXPECT_AT(CompileError(project), "SLU-AUDIT-014", "audits/a.sql", 1, 1);
  project.Write("audits/a.sql", "AUDIT (name \"stable\", scheduled true);\nSELECT * FROM __ref(orders)\n");
  CompiledChecks compiled = project.Compile();
  EXPECT_TRUE(AuditNamed(compiled, "stable").scheduled);
  // A generic invocation always has a stable name, explicit or not.
  EXPECT_TRUE(AuditNamed(compiled, "orders.check.1").scheduled);
  EXPECT_EQ(AuditNamed(compiled, "orders.check.1").every_seconds, 120);
}

// ---------------------------------------------------------------------------------------------------------
// Helpers.

TEST(AuditDuration, SecondsOrUnits) {
  EXPECT_EQ(ParseAuditDuration("45"), 45);
  EXPECT_EQ(ParseAuditDuration("45s"), 45);
  EXPECT_EQ(ParseAuditDuration("10m"), 600);
  EXPECT_EQ(ParseAuditDuration("2h"), 7200);
  EXPECT_EQ(ParseAuditDuration("1d"), 86400);
  EXPECT_EQ(ParseAuditDuration(""), std::nullopt);
  EXPECT_EQ(ParseAuditDuration("m"), std::nullopt);
  EXPECT_EQ(ParseAuditDuration("1w"), std::nullopt);
  EXPECT_EQ(ParseAuditDuration("-1s"), std::nullopt);
  EXPECT_EQ(ParseAuditDuration("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseAuditDuration("9223372036854775807d"), std::nullopt);
}

TEST(AuditDeclarations, PickedFromTheModelHeader) {
  std::string text = "MODEL (kind table, columns (a (description \"x\"), b (audits [not_null])), audits [u]);\n";
  ModelAuditDeclarations declarations =
      AuditDeclarationsFromHeader(ParseHeaderBlock(text, 0, "MODEL", "m.sql").entries);
  ASSERT_TRUE(declarations.audits.has_value());
  EXPECT_EQ(declarations.audits->offset, text.find("[u]"));
  ASSERT_EQ(declarations.columns.size(), 1u);
  EXPECT_EQ(declarations.columns[0].column, "b");
  EXPECT_EQ(declarations.columns[0].audits.offset, text.find("[not_null]"));
}

TEST(ChecksCompile, AnEmptyProjectHasNoTestsOrAudits) {
  ChecksProject project;
  CompiledChecks compiled = project.Compile();
  EXPECT_TRUE(compiled.tests.empty());
  EXPECT_TRUE(compiled.audits.empty());
}

}  // namespace
}  // namespace sluice
