// `sluice plan` and `sluice build` in direct mode on the real ClickHouse server the suite starts, for pipelines whose
// source is not a canonical replay stream: a seed (ch_web: no replay lineage columns at all, a daily model, a
// totals model) and an adopted table whose replay roles live in columns of other names (ch_clicks).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

class BuildClickHouseSources : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RequireClickHouseTestServer();
    database_ = UniqueClickHouseDatabase("web");
    warehouse_ = OpenWarehouse(ClickHouseTestConfig(server_, "default"));
    warehouse_->Execute("CREATE DATABASE " + database_);
  }
  void TearDown() override {
    if (warehouse_) warehouse_->Execute("DROP DATABASE IF EXISTS " + database_);
  }

  ProcessResult Sluice(const ScratchProject& project, std::vector<std::string> args) const {
    args.insert(args.begin(), {"--database", database_});
    return project.Run(args, {{"STREAMBUILD_CLICKHOUSE_HOST", server_.host},
                              {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(server_.port)},
                              {"STREAMBUILD_CLICKHOUSE_PASSWORD", server_.password}});
  }

  std::string One(const std::string& sql) {
    Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "" : rows.rows[0][0].value_or("NULL");
  }
  std::string Lines(const std::string& sql) {
    std::string text;
    for (const auto& row : warehouse_->Query(sql).rows) {
      for (size_t i = 0; i < row.size(); ++i) text += (i ? "|" : "") + row[i].value_or("NULL");
      text += "\n";
    }
    return text;
  }
  std::string Count(const std::string& relation) {
    return One("SELECT toString(count()) FROM " + database_ + "." + relation);
  }

  // The clicks table of ch_clicks: partition in `part`, offset in `ofs`, time in `ts`.
  void CreateClicks() {
    warehouse_->Execute("CREATE TABLE " + database_ +
                        ".clicks_raw (part Int32, ofs Int64, ts DateTime, url String, user_id UInt64) "
                        "ENGINE = MergeTree() ORDER BY (part, ofs)");
    InsertClick(0, 1, "/a");
    InsertClick(0, 2, "/b");
    InsertClick(1, 1, "/a");
  }
  void InsertClick(int part, int ofs, const std::string& url) {
    warehouse_->Execute("INSERT INTO " + database_ + ".clicks_raw VALUES (" + std::to_string(part) + ", " +
                        std::to_string(ofs) + ", '2026-01-0" + std::to_string(1 + ofs % 3) + " 10:00:00', '" + url +
                        "', " + std::to_string(ofs) + ")");
  }
  std::string ClicksPerUrl() {
    return Lines("SELECT url, toString(sum(clicks)) FROM " + database_ + ".tbl__clicks_per_url GROUP BY url ORDER BY url");
  }

  ClickHouseTestServer server_;
  std::string database_;
  std::unique_ptr<Warehouse> warehouse_;
};

constexpr const char* kViewsPerDay = "2026-01-01|3\n2026-01-02|2\n2026-01-03|1\n";

TEST_F(BuildClickHouseSources, ASeedFedPipelineIsBuiltWithItsDayPartitionAndThenRunByDay) {
  ScratchProject project("ch_web");
  const ProcessResult plan = Sluice(project, {"plan"});
  ASSERT_EQ(plan.exit_code, 0) << plan.out << plan.err;
  EXPECT_NE(plan.out.find("load_seed_events"), std::string::npos) << plan.out;

  const ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ(Count("tbl__stg_events"), "6");
  const std::string per_day = "SELECT toString(day), toString(sum(views)) FROM " + database_ +
                              ".tbl__daily_kpis GROUP BY day ORDER BY day";
  EXPECT_EQ(Lines(per_day), kViewsPerDay);
  EXPECT_EQ(One("SELECT toString(sum(views)) FROM " + database_ + ".tbl__kpi_totals"), "6");
  EXPECT_EQ(One("SELECT partition_key FROM system.tables WHERE database = '" + database_ +
                "' AND name = 'tbl__daily_kpis'"),
            "day");
  EXPECT_EQ(One("SELECT sorting_key FROM system.tables WHERE database = '" + database_ +
                "' AND name = 'tbl__daily_kpis'"),
            "day");

  const ProcessResult status = Sluice(project, {"status"});
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_EQ(status.out.find("missing"), std::string::npos) << status.out;

  const ProcessResult by_day = Sluice(project, {"run", "--select", "daily_kpis", "--from", "2026-01-01", "--to",
                                               "2026-01-02"});
  ASSERT_EQ(by_day.exit_code, 0) << by_day.out << by_day.err;
  EXPECT_EQ(Lines(per_day), kViewsPerDay);

  const ProcessResult again = Sluice(project, {"build", "--auto-approve"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(Count("tbl__stg_events"), "6");
  EXPECT_EQ(Lines(per_day), kViewsPerDay);
}

TEST_F(BuildClickHouseSources, WhatABuildCannotDoIsRefusedByPlanAndBeforeAnyDrop) {
  ScratchProject project("ch_web");
  ASSERT_EQ(Sluice(project, {"build", "--auto-approve"}).exit_code, 0);

  // A materialized view has no run window to render the bounds with.
  project.Write("pipelines/web/daily_kpis.sql",
                "MODEL (\n  partitions (daily (column \"day\", start_date \"2026-01-01\")),\n);\n\nSELECT\n"
                "  CAST(day AS Date) AS day,\n  CAST(count() AS UInt64) AS views,\n"
                "  CAST(uniqExact(user_id) AS UInt64) AS visitors\nFROM __ref(\"stg_events\")\n"
                "WHERE day >= @partition_start()\nGROUP BY day\n");
  ProcessResult plan = Sluice(project, {"plan"});
  EXPECT_EQ(plan.exit_code, 1) << plan.out << plan.err;
  EXPECT_NE(plan.err.find("pipelines/web/daily_kpis.sql:10:14"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("SLU-DEPLOY-007"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("hint:"), std::string::npos) << plan.err;
  ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1) << build.out << build.err;
  EXPECT_NE(build.err.find("SLU-DEPLOY-007"), std::string::npos) << build.err;
  EXPECT_EQ(Count("tbl__stg_events"), "6") << "nothing was dropped";
  EXPECT_EQ(One("SELECT toString(sum(views)) FROM " + database_ + ".tbl__daily_kpis"), "6");

  // An engine that merges rows by the sorting key, with no order_by and no _replay_timestamp to sort by.
  project.Write("pipelines/web/daily_kpis.sql",
                "MODEL (\n  engine \"SummingMergeTree()\",\n"
                "  partitions (daily (column \"day\", start_date \"2026-01-01\")),\n);\n\nSELECT\n"
                "  CAST(day AS Date) AS day,\n  CAST(count() AS UInt64) AS views,\n"
                "  CAST(uniqExact(user_id) AS UInt64) AS visitors\nFROM __ref(\"stg_events\")\nGROUP BY day\n");
  plan = Sluice(project, {"plan"});
  EXPECT_EQ(plan.exit_code, 1) << plan.out << plan.err;
  EXPECT_NE(plan.err.find("pipelines/web/daily_kpis.sql:2:3"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("SLU-DEPLOY-008"), std::string::npos) << plan.err;
  build = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1) << build.out << build.err;
  EXPECT_EQ(Count("tbl__stg_events"), "6") << "nothing was dropped";

  // What only the server knows (a function it lacks) is found by creating the objects under other names first.
  project.Remove("pipelines/web/daily_kpis.sql");
  project.Remove("pipelines/web/kpi_totals.sql");
  project.Write("pipelines/web/stg_events.sql",
                "MODEL ();\n\nSELECT\n  CAST(toDate(event_time) AS Date) AS day,\n  CAST(user_id AS UInt64) AS user_id,\n"
                "  CAST(nosuchfn(page) AS String) AS page\nFROM __source(\"events\")\n");
  build = Sluice(project, {"build", "--auto-approve"});
  EXPECT_EQ(build.exit_code, 1) << build.out << build.err;
  EXPECT_NE(build.out.find("pipelines/web/stg_events.sql: error[SLU-WAREHOUSE-021]"), std::string::npos)
      << build.out;
  EXPECT_EQ(Count("tbl__stg_events"), "6") << "nothing was dropped";
  EXPECT_EQ(One("SELECT toString(count()) FROM system.tables WHERE database = '_sluice' AND startsWith(name, 'check__" +
                database_ + "__')"),
            "0")
      << "the check's objects are dropped";
}

TEST_F(BuildClickHouseSources, MappedRoleColumnsAreReadByTheirOwnNamesSoLiveRowsKeepArriving) {
  CreateClicks();
  ScratchProject project("ch_clicks");
  const ProcessResult build = Sluice(project, {"build", "--auto-approve"});
  ASSERT_EQ(build.exit_code, 0) << build.out << build.err;
  EXPECT_EQ(Count("tbl__click_events"), "3");
  EXPECT_EQ(ClicksPerUrl(), "/a|2\n/b|1\n");
  const std::string view = One("SELECT create_table_query FROM system.tables WHERE database = '" + database_ +
                               "' AND name = 'mv__click_events'");
  EXPECT_EQ(view.find("(SELECT"), std::string::npos) << "a materialized view over a subquery reads no inserts: " << view;

  InsertClick(0, 3, "/c");  // after the build: through the materialized views
  InsertClick(1, 2, "/a");
  EXPECT_EQ(Count("tbl__click_events"), "5");
  EXPECT_EQ(One("SELECT toString(max(_replay_offset)) FROM " + database_ + ".tbl__click_events WHERE _replay_partition = 0"),
            "3");
  EXPECT_EQ(ClicksPerUrl(), "/a|3\n/b|1\n/c|1\n");

  const ProcessResult again = Sluice(project, {"build", "--auto-approve", "--json"});
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("ofs <= 3"), std::string::npos) << "the boundary is read in the physical columns: "
                                                          << again.out;
  EXPECT_EQ(Count("tbl__click_events"), "5");
  EXPECT_EQ(ClicksPerUrl(), "/a|3\n/b|1\n/c|1\n");
  InsertClick(0, 4, "/b");
  EXPECT_EQ(ClicksPerUrl(), "/a|3\n/b|2\n/c|1\n");
}

}  // namespace
}  // namespace sluice::testing
