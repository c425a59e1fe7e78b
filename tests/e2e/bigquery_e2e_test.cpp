// `sluice run` of the shop project on a BigQuery target, against the local BigQuery double: the whole path from the
// CLI through the engine to the REST requests, with credentials from the target's `credentials` file. The double
// runs no SQL (every job "succeeds" and reports the same counts), so this checks what a run sends, not what
// BigQuery would make of it (docs/bigquery.md says what was and was not tested).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/sluice_process.hpp"
#include "support/bigquery_double.hpp"

namespace sluice {
namespace {

using test::BigQueryDouble;
using test::DoubleConnectionToml;
using test::kAuthorizedUserCredentials;
using test::ErrorBody;
using test::JobBody;
using test::RecordedRequest;
using test::ResultsBody;
using testing::ProcessResult;
using testing::ScratchProject;

std::string DryRunBody() {
  nlohmann::json fields = nlohmann::json::array({{{"name", "event_date"}, {"type", "DATE"}},
                                                 {{"name", "events"}, {"type", "INTEGER"}},
                                                 {{"name", "amount"}, {"type", "INTEGER"}}});
  return nlohmann::json{{"jobReference", {{"jobId", "dry"}}},
                        {"status", {{"state", "DONE"}}},
                        {"statistics", {{"query", {{"schema", {{"fields", fields}}}}}}}}
      .dump();
}

TEST(BigQueryE2E, ARunSendsEveryWriteAsJobsOfTheTargetsProjectAndLocation) {
  BigQueryDouble bq;
  ScratchProject project("shop");
  project.Write("streambuild_project.toml", R"(name = "shop"
adapter = "bigquery"
default_target = "test"

[naming]
table_prefix = ""
view_prefix = ""

[targets.test]
database = "raw"

[targets.test.connection]
max_concurrent_jobs_per_table = 3
)" + DoubleConnectionToml(bq));
  project.Write("adc.json", kAuthorizedUserCredentials);
  bq.Respond("POST", "/token", 200, R"({"access_token": "tok", "expires_in": 3600})", -1);
  bq.Respond("GET", "/tables/", 404, ErrorBody(404, "notFound", "Not found: Table"), -1);
  bq.Respond("GET", "/datasets/", 200, R"({"location": "EU"})", -1);
  bq.RespondTo("POST", "/jobs", "\"dryRun\":true", 200, DryRunBody(), -1);
  bq.Respond("POST", "/jobs", 200, JobBody("x"), -1);
  bq.Respond("GET", "/queries/", 200, ResultsBody("x", true, {"in_window", "selected"}, {{"4", "4"}}), -1);
  bq.Respond("POST", "/queries", 200, ResultsBody("q", true), -1);

  ProcessResult run = project.Run({"run", "--from", "2026-03-01", "--to", "2026-03-05"});
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;

  std::vector<std::string> queries;
  for (const RecordedRequest& insert : bq.Requests("POST", "/jobs")) {
    nlohmann::json body = nlohmann::json::parse(insert.body);
    EXPECT_EQ(body["jobReference"]["projectId"], "proj");
    EXPECT_EQ(body["jobReference"]["location"], "EU");
    EXPECT_EQ(insert.Header("authorization"), "Bearer tok");
    queries.push_back(body["configuration"]["query"]["query"]);
  }
  auto count = [&](const std::string& prefix) {
    return std::count_if(queries.begin(), queries.end(),
                         [&](const std::string& query) { return query.rfind(prefix, 0) == 0; });
  };
  // The seeds, each one statement over its rows.
  EXPECT_EQ(count("CREATE OR REPLACE TABLE `proj.raw.events` AS\nSELECT * FROM UNNEST("), 1);
  EXPECT_EQ(count("CREATE OR REPLACE TABLE `proj.raw.users` AS\nSELECT * FROM UNNEST("), 1);
  // The daily model: created partitioned by its date, then its window replaced by one MERGE in one job.
  EXPECT_EQ(count("CREATE TABLE IF NOT EXISTS `proj.core.daily_totals`\nPARTITION BY `event_date`"), 1);
  std::vector<std::string> merges;
  for (const std::string& query : queries) {
    if (query.find("MERGE `proj.core.daily_totals`") != std::string::npos) merges.push_back(query);
  }
  ASSERT_EQ(merges.size(), 1u);
  EXPECT_NE(merges[0].find("WHEN NOT MATCHED BY SOURCE AND target.`event_date` >= DATE '2026-03-01' AND "
                           "target.`event_date` < DATE '2026-03-06' THEN DELETE"),
            std::string::npos)
      << merges[0];
  // Every write is recorded in the ledger.
  EXPECT_GE(count("INSERT INTO `proj._sluice.ledger`"), 7);
  for (const std::string& query : queries) EXPECT_EQ(query.find("DELETE FROM"), std::string::npos) << query;
}

}  // namespace
}  // namespace sluice
