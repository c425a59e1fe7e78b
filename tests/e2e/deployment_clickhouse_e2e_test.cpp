// Staged deployments on the real ClickHouse server the suite starts (issue 26): the ch_virtual fixture (an adopted
// `stream_table` source, a filter model, an aggregate with a side reference, a managed Kafka source this 18.16 server
// cannot land) through plan → backfill → audit backfill → publish → changes → rollback, with rows arriving in the
// adopted source throughout; kills at every pause point of backfill and publish; concurrent publishes; readiness.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

constexpr const char* kPaidOrders = R"(MODEL (
  description "Paid orders, one row per event",
  order_by ["_replay_partition", "_replay_offset"],
);

SELECT
  CAST(order_id AS UInt64) AS order_id,
  CAST(customer AS String) AS customer,
  CAST(amount AS Float64) AS amount,{extra}
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS DateTime) AS _replay_timestamp
FROM __source("events")
WHERE status = 'paid'
)";

std::string PaidOrders(const std::string& extra) {
  std::string text = kPaidOrders;
  text.replace(text.find("{extra}"), 7, extra);
  return text;
}

class DeploymentClickHouse : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RequireClickHouseTestServer();
    database_ = UniqueClickHouseDatabase("virtual");
    warehouse_ = OpenWarehouse(ClickHouseTestConfig(server_, "default"));
    warehouse_->Execute("CREATE DATABASE " + database_);
    warehouse_->Execute("CREATE TABLE " + database_ +
                        ".events_raw (order_id UInt64, customer String, amount Float64, status String, tier String, "
                        "_replay_partition Int32, _replay_offset Int64, _replay_timestamp DateTime) "
                        "ENGINE = MergeTree() ORDER BY (_replay_partition, _replay_offset)");
    Tier("a", "gold");
    for (int i = 0; i < 4; ++i) Paid(10);
  }
  void TearDown() override {
    StopInserting();
    if (warehouse_) warehouse_->Execute("DROP DATABASE IF EXISTS " + database_);
  }

  void Insert(const std::string& values) {
    std::lock_guard<std::mutex> lock(insert_mutex_);
    warehouse_->Execute("INSERT INTO " + database_ + ".events_raw VALUES " + values);
  }
  // A paid order in partition 0 or 1 (alternating), customer a or b.
  void Paid(double amount) {
    const int n = next_order_.fetch_add(1);
    Insert("(" + std::to_string(n) + ", '" + (n % 2 ? "a" : "b") + "', " + std::to_string(amount) + ", 'paid', '', " +
           std::to_string(n % 2) + ", " + std::to_string(100 + n) + ", '2026-12-0" + std::to_string(1 + n % 3) +
           " 10:00:00')");
  }
  void Tier(const std::string& customer, const std::string& tier) {
    const int n = next_order_.fetch_add(1);
    Insert("(0, '" + customer + "', 0, 'tier', '" + tier + "', 0, " + std::to_string(100 + n) +
           ", '2026-12-01 09:00:00')");
  }
  // Paid orders arrive in the adopted source, one a second, until StopInserting.
  void StartInserting() {
    inserting_ = true;
    inserter_ = std::thread([this] {
      while (inserting_) {
        Paid(1);
        for (int i = 0; i < 10 && inserting_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  void StopInserting() {
    inserting_ = false;
    if (inserter_.joinable()) inserter_.join();
  }

  std::map<std::string, std::string> Env() const {
    return {{"STREAMBUILD_CLICKHOUSE_HOST", server_.host},
            {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(server_.port)},
            {"STREAMBUILD_CLICKHOUSE_PASSWORD", server_.password}};
  }
  ProcessResult Sluice(const ScratchProject& project, std::vector<std::string> args,
                       std::map<std::string, std::string> env = {}) const {
    args.insert(args.begin(), {"--database", database_});
    std::map<std::string, std::string> all = Env();
    all.insert(env.begin(), env.end());
    return project.Run(args, all);
  }
  json MustJson(const ScratchProject& project, std::vector<std::string> args) {
    ProcessResult result = Sluice(project, args);
    EXPECT_EQ(result.exit_code, 0) << result.out << result.err;
    json parsed = json::parse(result.out, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << result.out;
    return parsed;
  }
  // Starts sluice paused at `point` (or killed there by the caller); returns its pid once it is there.
  pid_t StartPaused(const ScratchProject& project, std::vector<std::string> args, const std::string& point,
                    const std::filesystem::path& marker, const std::filesystem::path* resume = nullptr) {
    std::map<std::string, std::string> env = Env();
    env["SLUICE_TEST_PAUSE_AT"] = point;
    env["SLUICE_TEST_PAUSE_MARKER"] = marker.string();
    if (resume != nullptr) env["SLUICE_TEST_PAUSE_RESUME"] = resume->string();
    args.insert(args.begin(), {"--database", database_});
    pid_t pid = project.Start(args, env, "paused");
    EXPECT_TRUE(WaitForFile(marker, 60)) << point;
    return pid;
  }

  // What a process started with Start wrote (`stem.out`, `stem.err`, next to the project).
  static std::string Output(const ScratchProject& project, const std::string& name) {
    std::ifstream in(project.root().parent_path() / name);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string One(const std::string& sql) {
    Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "" : rows.rows[0][0].value_or("NULL");
  }
  std::string SourcePaid() {
    return One("SELECT toString(count()) FROM " + database_ + ".events_raw WHERE status = 'paid'");
  }
  std::string Count(const std::string& relation) {
    return One("SELECT toString(count()) FROM " + database_ + "." + relation);
  }
  std::string Duplicates(const std::string& relation) {
    return One("SELECT toString(count()) FROM (SELECT _replay_partition, _replay_offset FROM " + database_ + "." +
               relation + " GROUP BY _replay_partition, _replay_offset HAVING count() > 1)");
  }
  std::string TotalOrders() { return One("SELECT toString(sum(orders)) FROM " + database_ + ".tbl__daily_totals"); }
  // The relation a logical view reads now.
  std::string Bound(const std::string& logical) {
    std::string create = One("SELECT create_table_query FROM system.tables WHERE database = '" + database_ +
                             "' AND name = '" + logical + "'");
    const size_t at = create.rfind(database_ + ".");
    return at == std::string::npos
               ? ""
               : create.substr(at + database_.size() + 1, create.find_first_of(" \n", at) - at - database_.size() - 1);
  }
  // Every stable view reads complete data: the published tables hold every paid row once, all the way down.
  void ExpectConsistent(const std::string& where) {
    EXPECT_EQ(Count("tbl__paid_orders"), SourcePaid()) << where;
    EXPECT_EQ(Duplicates("tbl__paid_orders"), "0") << where;
    EXPECT_EQ(TotalOrders(), SourcePaid()) << where;
  }
  std::string Deploy(const ScratchProject& project) {
    json backfill = MustJson(project, {"backfill", "-s", "pl__shop", "--json"});
    const std::string id = backfill.value("deployment_id", "");
    ProcessResult publish = Sluice(project, {"publish", id});
    EXPECT_EQ(publish.exit_code, 0) << publish.out << publish.err;
    return id;
  }

  ClickHouseTestServer server_;
  std::string database_;
  std::unique_ptr<Warehouse> warehouse_;
  std::atomic<int> next_order_{1};
  std::atomic<bool> inserting_{false};
  std::thread inserter_;
  std::mutex insert_mutex_;
};

TEST_F(DeploymentClickHouse, TheWholeLifecycleWithRowsArrivingThroughout) {
  ScratchProject project("ch_virtual");
  // plan changes nothing and writes its files.
  json plan = MustJson(project, {"plan", "-s", "pl__shop", "--json"});
  EXPECT_EQ(plan["mode"], "virtual");
  EXPECT_EQ(plan["objects"].size(), 3u);
  EXPECT_EQ(plan["roots"].size(), 2u);  // paid_orders and customer_tiers; daily_totals fills from paid_orders
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target/run/plan/plan.json"));
  EXPECT_EQ(One("SELECT toString(count()) FROM system.tables WHERE database = '" + database_ + "'"), "1");

  StartInserting();
  json backfill = MustJson(project, {"backfill", "-s", "pl__shop", "--json"});
  const std::string first = backfill["deployment_id"];
  EXPECT_EQ(backfill["complete"], true);
  EXPECT_EQ(One("SELECT toString(count()) FROM system.tables WHERE database = '" + database_ +
                "' AND name = 'tbl__paid_orders'"),
            "0");  // nothing published yet
  json audit = MustJson(project, {"audit", "backfill", "--json"});
  EXPECT_EQ(audit["deployment_id"], first);
  EXPECT_NE(audit["verdict"], "not_ready") << audit.dump(2);
  ProcessResult publish = Sluice(project, {"publish"});
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StopInserting();
  EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + first);
  ExpectConsistent("after the first publish");
  // The side reference: customer a's orders are gold.
  EXPECT_EQ(One("SELECT toString(sum(orders)) FROM " + database_ + ".tbl__daily_totals WHERE tier = 'gold'"),
            One("SELECT toString(count()) FROM " + database_ + ".events_raw WHERE status = 'paid' AND customer = 'a'"));

  // A non-breaking change: one column added. The history is seeded from the active table, live rows keep coming.
  project.Write("pipelines/pl__shop/paid_orders.sql", PaidOrders("\n  CAST(amount * 2 AS Float64) AS doubled,"));
  plan = MustJson(project, {"plan", "-s", "pl__shop", "--json"});
  EXPECT_EQ(plan["objects"][1]["logical"], "tbl__paid_orders");
  EXPECT_EQ(plan["objects"][1]["action"], "rebuild");
  EXPECT_EQ(plan["objects"][1]["column_diff"]["impact"], "non_breaking");
  EXPECT_EQ(plan["objects"][0]["action"], "no_op");    // customer_tiers: kept
  EXPECT_EQ(plan["objects"][2]["action"], "rebuild");  // daily_totals: its upstream is rebuilt
  ASSERT_EQ(plan["roots"].size(), 1u);
  EXPECT_EQ(plan["roots"][0]["execution"], "seeded_bounded_rebuild");
  StartInserting();
  const std::string second = Deploy(project);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StopInserting();
  EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + second);
  EXPECT_EQ(Bound("tbl__customer_tiers"), "tbl__customer_tiers__" + first);  // kept
  ExpectConsistent("after the non-breaking change");
  Paid(21);
  EXPECT_EQ(One("SELECT toString(doubled) FROM " + database_ + ".tbl__paid_orders WHERE amount = 21"), "42");

  // A breaking change: a column retyped. Replayed in full.
  std::string retyped = PaidOrders("\n  CAST(amount * 2 AS Float64) AS doubled,");
  retyped.replace(retyped.find("CAST(order_id AS UInt64)"), 24, "CAST(order_id AS Int64)");
  project.Write("pipelines/pl__shop/paid_orders.sql", retyped);
  plan = MustJson(project, {"plan", "-s", "pl__shop", "--json"});
  EXPECT_EQ(plan["objects"][1]["column_diff"]["impact"], "breaking");
  EXPECT_EQ(plan["roots"][0]["execution"], "full_rebuild");
  StartInserting();
  const std::string third = Deploy(project);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  StopInserting();
  ExpectConsistent("after the breaking change");
  EXPECT_EQ(One("SELECT toTypeName(order_id) FROM " + database_ + ".tbl__paid_orders LIMIT 1"), "Int64");

  // Rollback: the previous publication's tables, which kept ingesting meanwhile.
  ProcessResult rollback = Sluice(project, {"deployment", "rollback", "--previous"});
  ASSERT_EQ(rollback.exit_code, 0) << rollback.out << rollback.err;
  EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + second);
  Paid(3);
  ExpectConsistent("after rolling back to the second deployment");
  rollback = Sluice(project, {"deployment", "rollback", first});
  ASSERT_EQ(rollback.exit_code, 0) << rollback.out << rollback.err;
  EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + first);
  ExpectConsistent("after rolling back to the first deployment");
  EXPECT_NE(third, second);
}

TEST_F(DeploymentClickHouse, AKillAtEveryPauseOfBackfillAndPublishLeavesCompleteViewsAndTheRerunConverges) {
  ScratchProject project("ch_virtual");
  Deploy(project);
  int change = 0;
  for (const std::string point : {"backfill_after_preparation", "build_after_teardown", "build_after_realization",
                                  "build_before_replay_insert", "build_after_replay", "backfill_before_complete"}) {
    project.Write("pipelines/pl__shop/paid_orders.sql",
                  PaidOrders("\n  CAST(amount + " + std::to_string(++change) + " AS Float64) AS bumped,"));
    const std::filesystem::path marker = project.root() / ("paused_" + point);
    pid_t pid = StartPaused(project, {"backfill", "-s", "pl__shop"}, point, marker);
    kill(pid, SIGKILL);
    WaitFor(pid);
    Paid(2);
    ExpectConsistent("killed at " + point);  // the published deployment is untouched and live
    ProcessResult refused = Sluice(project, {"publish"});
    EXPECT_EQ(refused.exit_code, 1) << point << refused.out << refused.err;
    json rerun = MustJson(project, {"backfill", "-s", "pl__shop", "--json"});
    EXPECT_EQ(rerun["resumed"], true) << point;
    ProcessResult publish = Sluice(project, {"publish", rerun["deployment_id"]});
    ASSERT_EQ(publish.exit_code, 0) << point << publish.out << publish.err;
    Paid(2);
    ExpectConsistent("rerun after a kill at " + point);
  }
  for (const std::string point : {"bind_before_switch", "bind_after_switch"}) {
    project.Write("pipelines/pl__shop/paid_orders.sql",
                  PaidOrders("\n  CAST(amount + " + std::to_string(++change) + " AS Float64) AS bumped,"));
    json backfill = MustJson(project, {"backfill", "-s", "pl__shop", "--json"});
    const std::string id = backfill["deployment_id"];
    const std::filesystem::path marker = project.root() / ("paused_" + point);
    pid_t pid = StartPaused(project, {"publish", id}, point, marker);
    kill(pid, SIGKILL);
    WaitFor(pid);
    ExpectConsistent("publish killed at " + point);
    ProcessResult publish = Sluice(project, {"publish", id});
    ASSERT_EQ(publish.exit_code, 0) << point << publish.out << publish.err;
    EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + id) << point;
    EXPECT_EQ(
        One("SELECT toString(uniqExact(publication_id)) FROM _sluice.publications WHERE deployment_id = '" + id + "'"),
        "1")
        << point;
    Paid(2);
    ExpectConsistent("publish rerun after a kill at " + point);
  }
}

TEST_F(DeploymentClickHouse, APublishKilledAfterItsSwitchIsFinishedByRerunningPublishWithoutAnId) {
  ScratchProject project("ch_virtual");
  const std::string id = MustJson(project, {"backfill", "-s", "pl__shop", "--json"})["deployment_id"];
  const std::filesystem::path marker = project.root() / "paused_publish";
  pid_t pid = StartPaused(project, {"publish"}, "bind_after_switch", marker);
  kill(pid, SIGKILL);
  WaitFor(pid);

  const ProcessResult rerun = Sluice(project, {"publish"});
  ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
  EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + id);
  EXPECT_EQ(One("SELECT toString(uniqExact(publication_id)) FROM _sluice.publications WHERE deployment_id = '" + id + "'"),
            "1");
  EXPECT_EQ(One("SELECT toString(count()) FROM system.tables WHERE database = '_sluice' AND (startsWith(name, '" +
                database_ + "__') OR name = 'publish_lock__" + database_ + "')"),
            "0")
      << "the views moved aside and the lock are gone";
  Paid(3);
  ExpectConsistent("after the finished publish");
  const ProcessResult again = Sluice(project, {"publish"});
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_NE(again.out.find("already published"), std::string::npos) << again.out;
}

// pl__shop sets its own database: its deployments, metadata rows and stable views are there, next to pl__clicks's
// (the target's database); list, doctor, publish and rollback find them.
TEST_F(DeploymentClickHouse, APipelineWithItsOwnDatabaseIsListedDiagnosedPublishedAndRolledBack) {
  ScratchProject project("ch_virtual");
  const std::string silver = database_ + "_silver";
  project.Write("pipelines/pl__shop/pipeline.toml", "database = \"" + silver + "\"\n");
  const std::string first = MustJson(project, {"backfill", "-s", "pl__shop", "--json"})["deployment_id"];
  ProcessResult publish = Sluice(project, {"publish"});
  EXPECT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  project.Write("pipelines/pl__shop/paid_orders.sql", PaidOrders("\n  CAST(amount * 2 AS Float64) AS doubled,"));
  const std::string second = MustJson(project, {"backfill", "-s", "pl__shop", "--json"})["deployment_id"];
  publish = Sluice(project, {"publish", second});
  EXPECT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  EXPECT_EQ(One("SELECT toString(count()) FROM " + silver + ".tbl__paid_orders"), SourcePaid());

  const json listed = MustJson(project, {"deployment", "list", "--json"});
  ASSERT_EQ(listed["databases"].size(), 2u) << listed.dump(2);
  json shop;
  for (const json& database : listed["databases"]) {
    if (database["database"] == silver) shop = database;
  }
  ASSERT_EQ(shop["deployments"].size(), 2u) << listed.dump(2);
  for (const json& deployment : shop["deployments"]) {  // both bound: the second kept the first's customer_tiers
    EXPECT_EQ(deployment["state"], "active") << listed.dump(2);
  }
  const ProcessResult text = Sluice(project, {"deployment", "list"});
  EXPECT_NE(text.out.find("deployments in " + silver + ":"), std::string::npos) << text.out;

  const json doctor = MustJson(project, {"doctor"});
  bool seen = false;
  for (const json& database : doctor["databases"]) {
    for (const json& logical : database["logicals"]) {
      if (database["database"] == silver && logical["logical"] == "tbl__paid_orders") {
        seen = true;
        EXPECT_EQ(logical["state_kind"], "active_view_present");
        EXPECT_EQ(logical["active_deployment_id"], second);
      }
    }
  }
  EXPECT_TRUE(seen) << doctor.dump(2);

  const ProcessResult rollback = Sluice(project, {"deployment", "rollback", "--previous"});
  ASSERT_EQ(rollback.exit_code, 0) << rollback.out << rollback.err;
  const std::string view = One("SELECT create_table_query FROM system.tables WHERE database = '" + silver +
                               "' AND name = 'tbl__paid_orders'");
  EXPECT_NE(view.find("tbl__paid_orders__" + first), std::string::npos) << view;
  warehouse_->Execute("DROP DATABASE IF EXISTS " + silver);
}

// ch_web staged: a seed-fed pipeline (snapshot replays) whose daily model, once published, runs by day into the
// table its stable view reads.
TEST_F(DeploymentClickHouse, APublishedDailyModelRunsByDayIntoItsActiveTable) {
  ScratchProject project("ch_web");
  project.Write("pipelines/web/pipeline.toml", "mode = \"virtual\"\n");
  const json backfill = MustJson(project, {"backfill", "--json"});
  const std::string id = backfill["deployment_id"];
  const ProcessResult publish = Sluice(project, {"publish", id});
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  const std::string per_day =
      "SELECT toString(day), toString(sum(views)), toString(count()) FROM " + database_ +
      ".tbl__daily_kpis GROUP BY day ORDER BY day";
  auto lines = [&](const std::string& sql) {
    std::string text;
    for (const auto& row : warehouse_->Query(sql).rows) {
      for (size_t i = 0; i < row.size(); ++i) text += (i ? "|" : "") + row[i].value_or("NULL");
      text += "\n";
    }
    return text;
  };
  EXPECT_EQ(lines(per_day), "2026-01-01|3|1\n2026-01-02|2|1\n2026-01-03|1|1\n");
  EXPECT_EQ(One("SELECT partition_key FROM system.tables WHERE database = '" + database_ + "' AND name = 'tbl__daily_kpis__" +
                id + "'"),
            "day");

  // A view arrives in the published staging table: its materialized view adds a partial row for the day.
  warehouse_->Execute("INSERT INTO " + database_ + ".tbl__stg_events__" + id + " VALUES ('2026-01-02', 9, '/new')");
  EXPECT_EQ(lines(per_day), "2026-01-01|3|1\n2026-01-02|3|2\n2026-01-03|1|1\n");
  const ProcessResult day = Sluice(project, {"run", "--select", "daily_kpis", "--partition", "2026-01-02"});
  ASSERT_EQ(day.exit_code, 0) << day.out << day.err;
  EXPECT_EQ(lines(per_day), "2026-01-01|3|1\n2026-01-02|3|1\n2026-01-03|1|1\n") << "the day replaced whole, in place";
  EXPECT_NE(Bound("tbl__daily_kpis").find(id), std::string::npos) << Bound("tbl__daily_kpis");
  EXPECT_EQ(One("SELECT toString(count()) FROM _sluice.ledger WHERE asset = '" + database_ +
                ".daily_kpis' AND window_start = toDate('2026-01-02')"),
            "1");
}

// An adopted table whose replay roles are in columns of other names: the staged views read the table itself, so
// rows inserted after the publish reach the stable views.
TEST_F(DeploymentClickHouse, MappedRoleColumnsKeepIngestingLiveAfterPublish) {
  ScratchProject project("ch_clicks");
  project.Write("pipelines/pl__clicks/pipeline.toml", "mode = \"virtual\"\n");
  warehouse_->Execute("CREATE TABLE " + database_ +
                      ".clicks_raw (part Int32, ofs Int64, ts DateTime, url String, user_id UInt64) "
                      "ENGINE = MergeTree() ORDER BY (part, ofs)");
  auto click = [&](int part, int ofs, const std::string& url) {
    warehouse_->Execute("INSERT INTO " + database_ + ".clicks_raw VALUES (" + std::to_string(part) + ", " +
                        std::to_string(ofs) + ", '2026-12-01 10:00:00', '" + url + "', 1)");
  };
  click(0, 1, "/a");
  click(1, 1, "/b");
  const std::string id = MustJson(project, {"backfill", "--json"})["deployment_id"];
  click(0, 2, "/a");  // staged and live at once
  ProcessResult publish = Sluice(project, {"publish", id});
  ASSERT_EQ(publish.exit_code, 0) << publish.out << publish.err;
  click(1, 2, "/c");
  EXPECT_EQ(Count("tbl__click_events"), "4");
  EXPECT_EQ(One("SELECT toString(sum(clicks)) FROM " + database_ + ".tbl__clicks_per_url"), "4");
  EXPECT_EQ(One("SELECT toString(count()) FROM (SELECT _replay_partition, _replay_offset FROM " + database_ +
                ".tbl__click_events GROUP BY _replay_partition, _replay_offset HAVING count() > 1)"),
            "0");
}

// StreamBuild's §11.4: a shadow view reading a kept upstream through its logical view never fires. Here the rebuilt
// aggregate reads the kept table itself (on 18.16, through the views that fill it) and keeps ingesting live rows.
TEST_F(DeploymentClickHouse, ADownstreamOnlyChangeKeepsIngestingLive) {
  ScratchProject project("ch_virtual");
  const std::string first = Deploy(project);
  std::string totals = project.Read("pipelines/pl__shop/daily_totals.sql");
  const std::string orders = "  CAST(count() AS UInt64) AS orders,\n";
  totals.insert(totals.find(orders) + orders.size(), "  CAST(max(p.amount) AS Float64) AS largest,\n");
  project.Write("pipelines/pl__shop/daily_totals.sql", totals);
  json plan = MustJson(project, {"plan", "-s", "pl__shop", "--json"});
  EXPECT_EQ(plan["objects"][1]["action"], "no_op");  // paid_orders: kept
  EXPECT_EQ(plan["objects"][2]["action"], "rebuild");
  ASSERT_EQ(plan["roots"].size(), 1u);
  EXPECT_EQ(plan["roots"][0]["anchor"], database_ + ".tbl__paid_orders__" + first);
  const std::string second = Deploy(project);
  EXPECT_EQ(Bound("tbl__paid_orders"), "tbl__paid_orders__" + first);
  EXPECT_EQ(Bound("tbl__daily_totals"), "tbl__daily_totals__" + second);
  Paid(30);
  Paid(40);
  ExpectConsistent("live rows after a downstream-only change");
  EXPECT_EQ(One("SELECT toString(max(largest)) FROM " + database_ + ".tbl__daily_totals"), "40");
}

TEST_F(DeploymentClickHouse, RowsArrivingInsideTheReplayWindowLandExactlyOnce) {
  ScratchProject project("ch_virtual");
  const std::filesystem::path marker = project.root() / "paused";
  const std::filesystem::path resume = project.root() / "resume";
  pid_t pid = StartPaused(project, {"backfill", "-s", "pl__shop"}, "build_before_replay_insert", marker, &resume);
  Paid(4);  // the root's staged view exists, its history is not inserted yet
  Paid(5);
  std::ofstream(resume) << "go\n";
  ASSERT_EQ(WaitFor(pid), 0) << Output(project, "paused.out") << Output(project, "paused.err");
  ASSERT_EQ(Sluice(project, {"publish"}).exit_code, 0);
  ExpectConsistent("rows arrived inside the window");
}

TEST_F(DeploymentClickHouse, OfTwoConcurrentPublishesExactlyOneWins) {
  ScratchProject project("ch_virtual");
  json backfill = MustJson(project, {"backfill", "-s", "pl__shop", "--json"});
  const std::string id = backfill["deployment_id"];
  const std::filesystem::path marker = project.root() / "paused";
  const std::filesystem::path resume = project.root() / "resume";
  pid_t first = StartPaused(project, {"publish", id}, "bind_before_switch", marker, &resume);
  ProcessResult second = Sluice(project, {"publish", id});
  EXPECT_EQ(second.exit_code, 1) << second.out << second.err;
  EXPECT_NE(second.err.find("SLU-DEPLOY-031"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("in progress"), std::string::npos) << second.err;
  std::ofstream(resume) << "go\n";
  EXPECT_EQ(WaitFor(first), 0) << Output(project, "paused.out") << Output(project, "paused.err");
  ExpectConsistent("after the winning publish");
}

TEST_F(DeploymentClickHouse, ANotReadyDeploymentFailsItsAuditAndIsPublishedOnlyWithForce) {
  ScratchProject project("ch_virtual");
  Paid(-5);  // fails the error-severity audit on the staged path
  json backfill = MustJson(project, {"backfill", "-s", "pl__shop", "--json"});
  ProcessResult audit = Sluice(project, {"audit", "backfill", "--json"});
  EXPECT_EQ(audit.exit_code, 1) << audit.out << audit.err;
  json report = json::parse(audit.out);
  EXPECT_EQ(report["verdict"], "not_ready");
  EXPECT_EQ(report["audits"][0]["status"], "fail");
  ProcessResult publish = Sluice(project, {"publish"});
  EXPECT_EQ(publish.exit_code, 1);
  EXPECT_NE(publish.err.find("SLU-DEPLOY-034"), std::string::npos) << publish.err;
  EXPECT_EQ(One("SELECT toString(count()) FROM system.tables WHERE database = '" + database_ +
                "' AND name = 'tbl__paid_orders'"),
            "0");
  ProcessResult forced = Sluice(project, {"publish", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
  ExpectConsistent("forced");
}

TEST_F(DeploymentClickHouse, AManagedKafkaSourceThisServerCannotLandIsRefusedBeforeAnyChange) {
  ScratchProject project("ch_virtual");
  ProcessResult plan = Sluice(project, {"plan", "-s", "pl__clicks"});
  EXPECT_EQ(plan.exit_code, 1);
  EXPECT_NE(plan.err.find("SLU-CLICKHOUSE-002"), std::string::npos) << plan.err;
  EXPECT_NE(plan.err.find("sources/events.yml:"), std::string::npos) << plan.err;
  // The plan still shows what it would create, Kafka engine included.
  const std::string steps = project.Read("target/run/plan/workflow.template.sql");
  EXPECT_NE(steps.find("ENGINE = Kafka"), std::string::npos) << steps;
  ProcessResult backfill = Sluice(project, {"backfill", "-s", "pl__clicks"});
  EXPECT_EQ(backfill.exit_code, 1);
  EXPECT_EQ(One("SELECT toString(count()) FROM system.tables WHERE database = '" + database_ + "'"), "1");
}

}  // namespace
}  // namespace sluice::testing
