// The BigQuery warehouse at the HTTP level, against the local double: the statements and requests each Warehouse
// method sends, in order, and how it handles BigQuery's answers. The double runs no SQL, so each test scripts what
// BigQuery would answer; the SQL itself is checked as text here and was not run against BigQuery.
#include "warehouse/bigquery/bigquery_warehouse.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/diagnostic.hpp"
#include "support/bigquery_double.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

using test::BigQueryDouble;
using test::ErrorBody;
using test::JobBody;
using test::RecordedRequest;
using test::ResultsBody;
using namespace std::chrono_literals;

constexpr const char* kMetadataPath = "/computeMetadata/v1/instance/service-accounts/default/token";
const Relation kDaily{"sales", "daily"};
const DateWindow kWindow{Date::FromYmd(2026, 1, 1), Date::FromYmd(2026, 1, 3)};
const std::string kSelect = "SELECT event_date, revenue FROM `proj.raw.orders`";

EnvironmentLookup Environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// A dry-run job's answer: the statement's result schema (legacy type names, as the API gives them).
std::string DryRunBody(const std::vector<std::pair<std::string, std::string>>& fields) {
  nlohmann::json schema = nlohmann::json::array();
  for (const auto& [name, type] : fields) schema.push_back({{"name", name}, {"type", type}, {"mode", "NULLABLE"}});
  return nlohmann::json{{"jobReference", {{"projectId", "proj"}, {"jobId", "dry"}, {"location", "EU"}}},
                        {"status", {{"state", "DONE"}}},
                        {"statistics", {{"query", {{"schema", {{"fields", schema}}}}}}}}
      .dump();
}

// A tables.get answer.
std::string TableBody(const std::vector<std::pair<std::string, std::string>>& fields,
                      const std::string& partition_field = "", const std::string& type = "TABLE") {
  nlohmann::json schema = nlohmann::json::array();
  for (const auto& [name, field_type] : fields) schema.push_back({{"name", name}, {"type", field_type}});
  nlohmann::json table = {{"kind", "bigquery#table"}, {"type", type}, {"schema", {{"fields", schema}}}};
  if (!partition_field.empty()) table["timePartitioning"] = {{"type", "DAY"}, {"field", partition_field}};
  return table.dump();
}

std::string DatasetBody(const std::string& location) {
  return nlohmann::json{{"kind", "bigquery#dataset"}, {"location", location}}.dump();
}

LedgerEntry Ledger() {
  LedgerEntry entry;
  entry.asset = "sales.daily";
  entry.run_id = "run-1";
  entry.sql_hash = "abc";
  return entry;
}

class BigQueryWarehouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("sluice_bqw_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<BigQueryWarehouse> Open(int cap = 2) {
    double_.Respond("GET", kMetadataPath, 200, R"({"access_token": "tok", "expires_in": 3600})", -1);
    BigQueryOptions options;
    options.endpoint = {"proj", "EU", double_.url()};
    options.credentials.environment = Environment({{"GCE_METADATA_HOST", double_.host()}});
    options.retry = RetryPolicy{3, 1ms, 2ms, 5};
    options.max_concurrent_jobs_per_table = cap;
    return BigQueryWarehouse::Open(options);
  }
  // Both datasets of a write exist in EU.
  void Datasets() {
    double_.Respond("GET", "/datasets/sales$", 200, DatasetBody("EU"));
    double_.Respond("GET", "/datasets/_sluice$", 200, DatasetBody("EU"));
  }
  // A job that completes with `rows` (its results' columns named by `columns`).
  void Job(const std::vector<std::string>& columns = {},
           const std::vector<std::vector<std::optional<std::string>>>& rows = {}) {
    double_.Respond("POST", "/jobs", 200, JobBody("x"));
    double_.Respond("GET", "/queries/", 200, ResultsBody("x", true, columns, rows));
  }
  // What each jobs.insert asked to run, in order ("-- dry run\n" before a dry run's).
  std::vector<std::string> JobQueries() const {
    std::vector<std::string> queries;
    for (const RecordedRequest& insert : double_.Requests("POST", "/jobs")) {
      nlohmann::json body = nlohmann::json::parse(insert.body);
      std::string query = body["configuration"]["query"]["query"];
      queries.push_back(body["configuration"].value("dryRun", false) ? "-- dry run\n" + query : query);
    }
    return queries;
  }

  BigQueryDouble double_;
  std::filesystem::path dir_;
};

const char* const kCreateLedger =
    "CREATE TABLE IF NOT EXISTS `proj._sluice.ledger` (asset STRING, window_start DATE, window_end DATE, run_id "
    "STRING, row_count INT64, sql_hash STRING, written_at STRING, relation_schema STRING, relation_name STRING)";

TEST_F(BigQueryWarehouseTest, CatalogFactsAndInsertMarksAreRefusedClearlyWithoutARequest) {
  auto warehouse = Open();
  auto code = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const Error& error) {
      return error.diagnostics().front().code;
    }
    return std::string("no error");
  };
  EXPECT_EQ(code([&] { warehouse->CatalogOf("sales"); }), "SLU-WAREHOUSE-034");
  EXPECT_EQ(code([&] { warehouse->CatalogOf(std::vector<Relation>{kDaily}); }), "SLU-WAREHOUSE-034");
  EXPECT_EQ(code([&] { warehouse->InsertWatermark(kDaily); }), "SLU-WAREHOUSE-034");
  EXPECT_EQ(code([&] { warehouse->RunningInserts(std::chrono::seconds(1)); }), "SLU-WAREHOUSE-034");
  EXPECT_FALSE(warehouse->CatalogRowCounts("sales").has_value());
  EXPECT_TRUE(double_.Requests("POST", "/jobs").empty());
}

TEST_F(BigQueryWarehouseTest, EnsureSchemaCreatesAMissingDatasetInTheTargetLocationOnce) {
  auto warehouse = Open();
  double_.Respond("GET", "/datasets/sales$", 404, ErrorBody(404, "notFound", "Not found: Dataset proj:sales"));
  Job();

  warehouse->EnsureSchema("sales");
  warehouse->EnsureSchema("sales");

  EXPECT_EQ(JobQueries(),
            (std::vector<std::string>{"CREATE SCHEMA IF NOT EXISTS `proj.sales` OPTIONS(location = 'EU')"}));
  EXPECT_EQ(double_.Requests("GET", "/datasets/sales$").size(), 1u);
  nlohmann::json insert = nlohmann::json::parse(double_.Requests("POST", "/jobs").at(0).body);
  EXPECT_EQ(insert["jobReference"]["location"], "EU");
  EXPECT_FALSE(insert["configuration"]["query"].contains("destinationTable"));
}

TEST_F(BigQueryWarehouseTest, ADatasetInAnotherLocationIsReportedNotRecreated) {
  auto warehouse = Open();
  double_.Respond("GET", "/datasets/sales$", 200, DatasetBody("US"));
  try {
    warehouse->EnsureSchema("sales");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-WAREHOUSE-055");
    EXPECT_NE(diagnostic.message.find("proj.sales is in location US, not in EU"), std::string::npos)
        << diagnostic.message;
    EXPECT_NE(diagnostic.hint.find("SEGMENTSTREAM_WAREHOUSE_LOCATION"), std::string::npos);
  }
  EXPECT_TRUE(double_.Requests("POST", "/jobs").empty());
  // Locations compare without case, as BigQuery reports them ("eu" and "EU" are one).
  double_.Respond("GET", "/datasets/other$", 200, DatasetBody("eu"));
  warehouse->EnsureSchema("other");
  EXPECT_TRUE(double_.Requests("POST", "/jobs").empty());
}

TEST_F(BigQueryWarehouseTest, AFirstWindowWriteCreatesTheTablePartitionedByItsDateThenMergesTheWindowInOneJob) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/daily", 404, ErrorBody(404, "notFound", "Not found: Table proj:sales.daily"));
  Datasets();
  Job();  // the ledger table
  double_.Respond("POST", "/jobs", 200, DryRunBody({{"event_date", "DATE"}, {"revenue", "FLOAT"}}));
  Job();                                         // the empty partitioned table
  Job({"in_window", "selected"}, {{"3", "5"}});  // the script
  Job();                                         // the ledger row
  std::vector<std::vector<std::string>> observed;
  warehouse->ObserveStatements(
      [&](const Relation&, const std::vector<std::string>& statements) { observed.push_back(statements); });

  WriteResult result = warehouse->ReplaceDateRange(kDaily, kSelect, "event_date", kWindow, Ledger());

  EXPECT_EQ(result.rows_written, 3);
  EXPECT_EQ(result.rows_dropped, 2);
  const std::string script =
      "CREATE TEMP TABLE _sluice_selected AS\nSELECT * FROM (\n" + kSelect +
      "\n);\n"
      "MERGE `proj.sales.daily` AS target\n"
      "USING (SELECT * FROM _sluice_selected WHERE `event_date` >= DATE '2026-01-01' AND `event_date` < DATE "
      "'2026-01-03') AS source\n"
      "ON FALSE\n"
      "WHEN NOT MATCHED BY SOURCE AND target.`event_date` >= DATE '2026-01-01' AND target.`event_date` < DATE "
      "'2026-01-03' THEN DELETE\n"
      "WHEN NOT MATCHED THEN INSERT (`event_date`, `revenue`) VALUES (`event_date`, `revenue`);\n"
      "SELECT COUNTIF(`event_date` >= DATE '2026-01-01' AND `event_date` < DATE '2026-01-03') AS in_window, "
      "COUNT(*) AS selected FROM _sluice_selected;";
  std::vector<std::string> queries = JobQueries();
  ASSERT_EQ(queries.size(), 5u);
  EXPECT_EQ(queries[0], kCreateLedger);
  EXPECT_EQ(queries[1], "-- dry run\nSELECT * FROM (\n" + kSelect + "\n)");
  EXPECT_EQ(queries[2],
            "CREATE TABLE IF NOT EXISTS `proj.sales.daily`\nPARTITION BY `event_date` AS\nSELECT * FROM (\n" + kSelect +
                "\n) WHERE FALSE");
  EXPECT_EQ(queries[3], script);
  EXPECT_EQ(queries[4].rfind("INSERT INTO `proj._sluice.ledger` (asset, window_start, window_end, run_id, row_count,"
                             " sql_hash, written_at, relation_schema, relation_name) VALUES ('sales.daily', "
                             "DATE '2026-01-01', DATE '2026-01-03', 'run-1', 3, 'abc', '",
                             0),
            0u)
      << queries[4];
  EXPECT_NE(queries[4].find("'" + result.written_at + "', 'sales', 'daily')"), std::string::npos);
  // Never delete-then-load: the window's rows change in the one MERGE.
  for (const std::string& query : queries) EXPECT_EQ(query.find("DELETE FROM"), std::string::npos) << query;
  // The write's jobs carry the run id; the observer saw the write's statements (the dataset and ledger set-up aside).
  nlohmann::json merge_job = nlohmann::json::parse(double_.Requests("POST", "/jobs").at(3).body);
  EXPECT_EQ(merge_job["jobReference"]["jobId"].get<std::string>().rfind("sluice_run-1_", 0), 0u);
  ASSERT_EQ(observed.size(), 1u);
  EXPECT_EQ(observed[0], (std::vector<std::string>{queries[1], queries[2], queries[3], queries[4]}));
}

TEST_F(BigQueryWarehouseTest, AnExistingTableGainsTheSelectsNewColumnsBeforeTheMerge) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/daily", 200, TableBody({{"event_date", "DATE"}, {"revenue", "FLOAT"}}, "event_date"));
  Datasets();
  Job();
  double_.Respond("POST", "/jobs", 200,
                  DryRunBody({{"EVENT_DATE", "DATE"}, {"revenue", "INTEGER"}, {"orders", "INTEGER"}}));
  Job();  // ALTER TABLE
  Job({"in_window", "selected"}, {{"4", "4"}});
  Job();

  WriteResult result = warehouse->ReplaceDateRange(kDaily, kSelect, "event_date", kWindow, Ledger());

  EXPECT_EQ(result.rows_written, 4);
  EXPECT_EQ(result.rows_dropped, 0);
  std::vector<std::string> queries = JobQueries();
  ASSERT_EQ(queries.size(), 5u);
  EXPECT_EQ(queries[2], "ALTER TABLE `proj.sales.daily` ADD COLUMN IF NOT EXISTS `orders` INT64");
  EXPECT_NE(queries[3].find("INSERT (`EVENT_DATE`, `revenue`, `orders`) VALUES (`EVENT_DATE`, `revenue`, `orders`)"),
            std::string::npos)
      << queries[3];
}

TEST_F(BigQueryWarehouseTest, AColumnTheSelectDropsOrRetypesIsRefusedBeforeAnythingChanges) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/daily", 200,
                  TableBody({{"event_date", "DATE"}, {"revenue", "FLOAT"}, {"channel", "STRING"}}, "event_date"));
  Datasets();
  Job();
  double_.Respond("POST", "/jobs", 200, DryRunBody({{"event_date", "DATE"}, {"revenue", "STRING"}}));
  try {
    warehouse->ReplaceDateRange(kDaily, kSelect, "event_date", kWindow, Ledger());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    const Diagnostic& diagnostic = error.diagnostics().front();
    EXPECT_EQ(diagnostic.code, "SLU-WAREHOUSE-013");
    EXPECT_NE(diagnostic.message.find("column \"revenue\" was FLOAT64 and is now STRING"), std::string::npos)
        << diagnostic.message;
    EXPECT_NE(diagnostic.message.find("column \"channel\" is no longer selected"), std::string::npos);
  }
  EXPECT_EQ(JobQueries().size(), 2u);  // the ledger table and the dry run only
}

TEST_F(BigQueryWarehouseTest, ATableNotPartitionedByDayOfTheDateColumnIsRefused) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/daily", 200, TableBody({{"event_date", "DATE"}, {"created", "DATE"}}, "created"));
  double_.Respond("GET", "/tables/plain", 200, TableBody({{"event_date", "DATE"}}));
  Datasets();
  Job();
  double_.Respond("POST", "/jobs", 200, DryRunBody({{"event_date", "DATE"}}), 2);
  for (const auto& [relation, words] : {std::pair<Relation, std::string>{kDaily, "is partitioned by \"created\""},
                                        {Relation{"sales", "plain"}, "is not partitioned"}}) {
    try {
      warehouse->ReplaceDateRange(relation, kSelect, "event_date", kWindow, Ledger());
      FAIL() << "expected an error";
    } catch (const Error& error) {
      EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-014");
      EXPECT_NE(error.diagnostics().front().message.find(words), std::string::npos)
          << error.diagnostics().front().message;
      EXPECT_NE(error.diagnostics().front().hint.find("--full-refresh"), std::string::npos);
    }
  }
  EXPECT_EQ(JobQueries().size(), 3u);  // the ledger table and two dry runs: nothing written
}

TEST_F(BigQueryWarehouseTest, TheDateColumnMustBeSelectedAndBeADate) {
  auto warehouse = Open();
  Datasets();
  Job();
  double_.Respond("POST", "/jobs", 200, DryRunBody({{"day", "DATE"}}));
  double_.Respond("POST", "/jobs", 200, DryRunBody({{"event_date", "TIMESTAMP"}}));
  for (const char* code : {"SLU-WAREHOUSE-010", "SLU-WAREHOUSE-014"}) {
    try {
      warehouse->ReplaceDateRange(kDaily, kSelect, "event_date", kWindow, Ledger());
      FAIL() << "expected " << code;
    } catch (const Error& error) {
      EXPECT_EQ(error.diagnostics().front().code, code) << error.diagnostics().front().message;
    }
  }
}

TEST_F(BigQueryWarehouseTest, AnErrorInTheSelectIsASqlErrorAtItsOffsetFoundByTheDryRun) {
  auto warehouse = Open();
  Datasets();
  Job();
  double_.Respond("POST", "/jobs", 400,
                  ErrorBody(400, "invalidQuery",
                            "Syntax error: Expected end of input but got identifier \"FORM\" at "
                            "[2:10]"));
  try {
    warehouse->ReplaceDateRange(kDaily, "SELECT a FORM t", "event_date", kWindow, Ledger());
    FAIL() << "expected a SqlError";
  } catch (const SqlError& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-022");
    EXPECT_EQ(error.offset(), 9u);
  }
  EXPECT_EQ(JobQueries().size(), 2u);  // a permanent error: not sent again
}

TEST_F(BigQueryWarehouseTest, AFullRefreshReplacesTheWholeTableWithTheWindowInOneScript) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/daily", 200, TableBody({{"event_date", "DATE"}}, "event_date"));
  Datasets();
  Job();
  double_.Respond("POST", "/jobs", 200, DryRunBody({{"event_date", "DATE"}, {"revenue", "FLOAT"}}));
  Job({"in_window", "selected"}, {{"2", "2"}});
  Job();

  WriteResult result = warehouse->ReplaceDateRange(kDaily, kSelect, "event_date", kWindow, Ledger(),
                                                   Warehouse::DateRangeMode::kWholeTable);

  EXPECT_EQ(result.rows_written, 2);
  std::vector<std::string> queries = JobQueries();
  ASSERT_EQ(queries.size(), 4u);
  EXPECT_EQ(queries[2], "CREATE TEMP TABLE _sluice_selected AS\nSELECT * FROM (\n" + kSelect +
                            "\n);\nCREATE OR REPLACE TABLE `proj.sales.daily`\nPARTITION BY `event_date` AS\n"
                            "SELECT * FROM _sluice_selected WHERE `event_date` >= DATE '2026-01-01' AND `event_date` < "
                            "DATE '2026-01-03';\nSELECT COUNTIF(`event_date` >= DATE '2026-01-01' AND `event_date` < "
                            "DATE '2026-01-03') AS in_window, COUNT(*) AS selected FROM _sluice_selected;");
}

TEST_F(BigQueryWarehouseTest, ReplaceTableIsOneCreateOrReplaceTableAsSelect) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/totals", 200, TableBody({{"n", "INTEGER"}}));
  double_.Respond("GET", "/tables/old_daily", 200, TableBody({{"event_date", "DATE"}}, "event_date"));
  Datasets();
  Job();
  Job({"row_count"}, {{"12"}});
  Job();
  Job();  // DROP of the partitioned table
  Job({"row_count"}, {{"1"}});
  Job();

  WriteResult result = warehouse->ReplaceTable({"sales", "totals"}, "SELECT 1 AS n", Ledger());
  EXPECT_EQ(result.rows_written, 12);
  // A partitioned table cannot be replaced in place by an unpartitioned one: it is dropped first.
  warehouse->ReplaceTable({"sales", "old_daily"}, "SELECT 1 AS n", Ledger());

  std::vector<std::string> queries = JobQueries();
  ASSERT_EQ(queries.size(), 6u);
  EXPECT_EQ(queries[1],
            "CREATE OR REPLACE TABLE `proj.sales.totals` AS\nSELECT * FROM (\nSELECT 1 AS n\n);\n"
            "SELECT COUNT(*) AS row_count FROM `proj.sales.totals`;");
  EXPECT_EQ(queries[2].rfind("INSERT INTO `proj._sluice.ledger`", 0), 0u);
  EXPECT_EQ(queries[3], "DROP TABLE IF EXISTS `proj.sales.old_daily`");
  EXPECT_EQ(queries[4].rfind("CREATE OR REPLACE TABLE `proj.sales.old_daily` AS", 0), 0u);
}

TEST_F(BigQueryWarehouseTest, ReplaceViewIsCreateOrReplaceViewAndATableInTheWayIsDropped) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/v_orders", 200, TableBody({{"n", "INTEGER"}}));
  Datasets();
  Job();
  Job();
  Job();
  Job();

  warehouse->ReplaceView({"sales", "v_orders"}, "SELECT * FROM `proj.raw.orders`", Ledger());

  std::vector<std::string> queries = JobQueries();
  ASSERT_EQ(queries.size(), 4u);
  EXPECT_EQ(queries[1], "DROP TABLE IF EXISTS `proj.sales.v_orders`");
  EXPECT_EQ(queries[2], "CREATE OR REPLACE VIEW `proj.sales.v_orders` AS\nSELECT * FROM `proj.raw.orders`");
}

TEST_F(BigQueryWarehouseTest, ASeedIsOneCreateOrReplaceTableOverItsRowsAsLiterals) {
  auto warehouse = Open();
  std::filesystem::path csv = dir_ / "channels.csv";
  std::ofstream(csv) << "id,name,since\n1,Search,2026-01-01\n2,,2026-01-02\n";
  double_.Respond("GET", "/tables/channels", 404, ErrorBody(404, "notFound", "Not found"));
  Datasets();
  Job();
  Job();
  Job();

  WriteResult result = warehouse->LoadSeed({"sales", "channels"}, SeedFile{csv.string(), {}}, Ledger());

  EXPECT_EQ(result.rows_written, 2);
  std::vector<std::string> queries = JobQueries();
  ASSERT_EQ(queries.size(), 3u);
  EXPECT_EQ(queries[1],
            "CREATE OR REPLACE TABLE `proj.sales.channels` AS\n"
            "SELECT * FROM UNNEST(ARRAY<STRUCT<`id` INT64, `name` STRING, `since` DATE>>[\n"
            "  STRUCT(CAST('1' AS INT64), CAST('Search' AS STRING), CAST('2026-01-01' AS DATE)),\n"
            "  STRUCT(CAST('2' AS INT64), CAST(NULL AS STRING), CAST('2026-01-02' AS DATE))\n"
            "])");
}

TEST_F(BigQueryWarehouseTest, ListRelationsIsOneQueryOfTheRegionsInformationSchema) {
  auto warehouse = Open();
  double_.Respond("POST", "/queries", 200,
                  ResultsBody("q", true, {"table_schema", "table_name", "table_type", "column_name", "data_type"},
                              {{"sales", "daily", "BASE TABLE", "event_date", "DATE"},
                               {"sales", "daily", "BASE TABLE", "revenue", "FLOAT64"},
                               {"sales", "v_daily", "VIEW", "event_date", "DATE"}}));

  std::vector<TableInfo> relations = warehouse->ListRelations();

  std::vector<RecordedRequest> queries = double_.Requests("POST", "/queries");
  ASSERT_EQ(queries.size(), 1u);
  std::string sql = nlohmann::json::parse(queries[0].body)["query"];
  EXPECT_NE(sql.find("FROM `proj`.`region-eu`.INFORMATION_SCHEMA.COLUMNS AS c JOIN `proj`.`region-eu`."
                     "INFORMATION_SCHEMA.TABLES AS t"),
            std::string::npos)
      << sql;
  EXPECT_NE(sql.find("c.table_schema != '_sluice' AND NOT STARTS_WITH(c.table_schema, '_script')"), std::string::npos);
  ASSERT_EQ(relations.size(), 2u);
  EXPECT_EQ(relations[0].relation, kDaily);
  EXPECT_FALSE(relations[0].is_view);
  EXPECT_EQ(relations[0].columns, (std::vector<ColumnInfo>{{"event_date", "DATE"}, {"revenue", "FLOAT64"}}));
  EXPECT_TRUE(relations[1].is_view);
}

TEST_F(BigQueryWarehouseTest, TheLedgerIsReadOnceItExists) {
  auto warehouse = Open();
  double_.Respond("GET", "/datasets/_sluice/tables/ledger$", 404, ErrorBody(404, "notFound", "Not found"));
  EXPECT_TRUE(warehouse->ReadLedger().empty());
  EXPECT_TRUE(double_.Requests("POST", "/queries").empty());

  double_.Respond("GET", "/datasets/_sluice/tables/ledger$", 200, TableBody({{"asset", "STRING"}}));
  double_.Respond("POST", "/queries", 200,
                  ResultsBody("q", true, {"a", "b", "c", "d", "e", "f", "g", "h", "i"},
                              {{"sales.daily", "2026-01-01", "2026-01-03", "run-1", "3", "abc",
                                "2026-01-05T10:00:00.000Z", "sales", "daily"},
                               {"sales.totals", std::nullopt, std::nullopt, "run-2", "12", "def",
                                "2026-01-05T11:00:00.000Z", "sales", "totals"}}));
  std::vector<LedgerEntry> entries = warehouse->ReadLedger();
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].window, kWindow);
  EXPECT_EQ(entries[0].row_count, 3);
  EXPECT_EQ(entries[0].relation, kDaily);
  EXPECT_EQ(entries[1].window, std::nullopt);
  EXPECT_EQ(entries[1].run_id, "run-2");
  std::string sql = nlohmann::json::parse(double_.Requests("POST", "/queries").at(0).body)["query"];
  EXPECT_NE(sql.find("FROM `proj._sluice.ledger` ORDER BY written_at"), std::string::npos) << sql;
}

TEST_F(BigQueryWarehouseTest, DropRelationDropsWhatIsThereByItsKind) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/v_daily", 200, TableBody({{"n", "INTEGER"}}, "", "VIEW"));
  double_.Respond("GET", "/tables/gone", 404, ErrorBody(404, "notFound", "Not found"));
  Job();
  warehouse->DropRelation({"sales", "v_daily"});
  warehouse->DropRelation({"sales", "gone"});
  EXPECT_EQ(JobQueries(), (std::vector<std::string>{"DROP VIEW IF EXISTS `proj.sales.v_daily`"}));
}

TEST_F(BigQueryWarehouseTest, DescribeReadsTheTableResource) {
  auto warehouse = Open();
  double_.Respond("GET", "/tables/daily", 200,
                  TableBody({{"event_date", "DATE"}, {"n", "INTEGER"}, {"ok", "BOOLEAN"}}, "event_date"));
  std::optional<TableInfo> info = warehouse->Describe(kDaily);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->columns, (std::vector<ColumnInfo>{{"event_date", "DATE"}, {"n", "INT64"}, {"ok", "BOOL"}}));
  EXPECT_EQ(warehouse->QualifiedName(kDaily), "`proj.sales.daily`");
}

TEST_F(BigQueryWarehouseTest, WritesOfOneTableFromSeveralThreadsKeepToTheCap) {
  auto warehouse = Open(/*cap=*/2);
  double_.Respond("GET", "/tables/", 404, ErrorBody(404, "notFound", "Not found"), -1);
  double_.Respond("GET", "/datasets/", 200, DatasetBody("EU"), -1);
  double_.Respond("POST", "/jobs", 200, JobBody("x"), -1, 10ms);
  double_.Respond("GET", "/queries/", 200, ResultsBody("x", true, {"row_count"}, {{"1"}}), -1, 50ms);

  std::vector<std::thread> threads;
  for (int i = 0; i < 5; ++i) {
    threads.emplace_back([&] { warehouse->ReplaceTable({"sales", "totals"}, "SELECT 1 AS n", Ledger()); });
  }
  for (std::thread& thread : threads) thread.join();

  // The table's jobs: from the insert arriving to the results being answered.
  std::map<std::string, std::pair<std::chrono::steady_clock::time_point, std::chrono::steady_clock::time_point>> spans;
  for (const RecordedRequest& insert : double_.Requests("POST", "/jobs")) {
    nlohmann::json body = nlohmann::json::parse(insert.body);
    std::string query = body["configuration"]["query"]["query"];
    if (query.rfind("CREATE OR REPLACE TABLE `proj.sales.totals`", 0) == 0) {
      spans[body["jobReference"]["jobId"]].first = insert.received;
    }
  }
  for (const RecordedRequest& poll : double_.Requests("GET", "/queries/")) {
    auto span = spans.find(poll.path.substr(poll.path.rfind('/') + 1));
    if (span != spans.end()) span->second.second = poll.answered;
  }
  ASSERT_EQ(spans.size(), 5u);
  size_t most = 0;
  for (const auto& [id, span] : spans) {
    size_t overlapping = 0;
    for (const auto& [other, other_span] : spans) {
      if (other_span.first <= span.first && span.first < other_span.second) ++overlapping;
    }
    most = std::max(most, overlapping);
  }
  EXPECT_EQ(most, 2u);
}

TEST_F(BigQueryWarehouseTest, AfterInterruptNothingMoreIsSent) {
  auto warehouse = Open();
  warehouse->Interrupt();
  size_t sent = double_.Requests().size();
  try {
    warehouse->ReplaceTable({"sales", "totals"}, "SELECT 1 AS n", Ledger());
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-008");
  }
  EXPECT_EQ(double_.Requests().size(), sent);
}

TEST_F(BigQueryWarehouseTest, TheRegistryOpensBigQueryFromTheTargetsConnectionKeys) {
  std::ofstream(dir_ / "user.json") << R"({"type": "authorized_user", "client_id": "c", "client_secret": "s",
                                          "refresh_token": "r"})";
  double_.Respond("POST", "/token", 200, R"({"access_token": "from-file", "expires_in": 3600})");
  double_.Respond("GET", "/datasets/sales$", 200, DatasetBody("europe-west3"));
  WarehouseConfig config{"bigquery",
                         {{"project", "proj"},
                          {"location", "europe-west3"},
                          {"api_url", double_.url() + "/"},
                          {"token_url", double_.url() + "/token"},
                          {"credentials", "user.json"}},
                         dir_,
                         "prod",
                         AccessMode::kReadWrite,
                         {}};
  std::unique_ptr<Warehouse> warehouse = OpenWarehouse(config);
  EXPECT_EQ(warehouse->dialect(), sql::Dialect::kBigQuery);
  warehouse->EnsureSchema("sales");
  std::vector<RecordedRequest> gets = double_.Requests("GET", "/datasets/sales$");
  ASSERT_EQ(gets.size(), 1u);
  EXPECT_EQ(gets[0].path, "/bigquery/v2/projects/proj/datasets/sales");
  EXPECT_EQ(gets[0].Header("authorization"), "Bearer from-file");
}

}  // namespace
}  // namespace sluice
