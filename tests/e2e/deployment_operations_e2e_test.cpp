// `sluice deployment list|show|diff`, `doctor`, `repair active-view`, `reconcile` and `janitor` as a user runs them, on
// the ClickHouse server the suite starts: the ch_shop fixture switched to virtual mode, with deployments' relations
// created by hand (as a backfill leaves them).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e/sluice_process.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice::testing {
namespace {

using nlohmann::json;

const std::string kOld = "20260101T000000Z_old";
const std::string kLive = "20260102T000000Z_live";

class DeploymentOperationsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = RequireClickHouseTestServer();
    database_ = UniqueClickHouseDatabase("ops");
    warehouse_ = OpenWarehouse(ClickHouseTestConfig(server_, "default"));
    Exec("CREATE DATABASE " + database_);
    Exec("CREATE TABLE " + database_ +
         ".events_raw (_replay_partition Int32, _replay_offset Int64, _replay_timestamp DateTime, order_id UInt64, "
         "amount Float64, status String) ENGINE = MergeTree() ORDER BY (_replay_partition, _replay_offset)");
    for (const std::string& id : {kOld, kLive}) {
      Exec("CREATE TABLE " + database_ + ".tbl__paid_orders__" + id +
           " (order_id UInt64, amount Float64, _replay_partition Int32, _replay_offset Int64, _replay_timestamp "
           "DateTime) ENGINE = MergeTree() ORDER BY (_replay_partition, _replay_offset)");
      Exec("CREATE MATERIALIZED VIEW " + database_ + ".mv__paid_orders__" + id + " TO " + database_ +
           ".tbl__paid_orders__" + id +
           " AS SELECT order_id, amount, _replay_partition, _replay_offset, _replay_timestamp FROM " + database_ +
           ".events_raw WHERE status = 'paid'");
    }
    project_.Write("streambuild_project.toml",
                   "name = \"ch_shop\"\ndefault_target = \"test\"\n[defaults]\npipeline_mode = \"virtual\"\n"
                   "[connection]\nhost = \"localhost\"\nport = 8123\nusername = \"default\"\n"
                   "[targets.test]\ndatabase = \"ch_shop\"\n");
  }
  void TearDown() override {
    if (warehouse_) Exec("DROP DATABASE IF EXISTS " + database_);
  }

  void Exec(const std::string& sql) { warehouse_->Execute(sql); }
  bool Exists(const std::string& name) { return warehouse_->Describe(Relation{database_, name}).has_value(); }

  ProcessResult Sluice(std::vector<std::string> args) const {
    args.insert(args.begin(), {"--database", database_});
    return project_.Run(args, {{"STREAMBUILD_CLICKHOUSE_HOST", server_.host},
                               {"STREAMBUILD_CLICKHOUSE_PORT", std::to_string(server_.port)},
                               {"STREAMBUILD_CLICKHOUSE_PASSWORD", server_.password}});
  }
  json Json(const std::vector<std::string>& args) const {
    ProcessResult result = Sluice(args);
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return json::parse(result.out);
  }

  ScratchProject project_{"ch_shop"};
  ClickHouseTestServer server_;
  std::string database_;
  std::unique_ptr<Warehouse> warehouse_;
};

TEST_F(DeploymentOperationsE2e, RepairThenInspectReconcileAndCleanUp) {
  json doctor = Json({"doctor"});
  ASSERT_EQ(doctor["logicals"].size(), 2u) << doctor.dump(2);
  EXPECT_EQ(doctor["logicals"][1]["logical"], "tbl__paid_orders");
  EXPECT_EQ(doctor["logicals"][1]["state_kind"], "logical_view_missing");
  EXPECT_EQ(doctor["logicals"][1]["candidate_ids"], (json{kLive, kOld}));
  EXPECT_EQ(doctor["logicals"][0]["state_kind"], "greenfield");

  ProcessResult repair = Sluice({"repair", "active-view", "--table", "tbl__paid_orders", "--deployment-id", kLive});
  ASSERT_EQ(repair.exit_code, 0) << repair.err;
  EXPECT_EQ(Json({"doctor"})["logicals"][1]["state_kind"], "active_view_present");
  ProcessResult missing = Sluice({"repair", "active-view", "--table", "tbl__daily_totals", "--deployment-id", kLive});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("SLU-DEPLOY-043"), std::string::npos) << missing.err;

  json list = Json({"deployment", "list", "--json"});
  ASSERT_EQ(list["deployments"].size(), 2u);
  EXPECT_EQ(list["deployments"][0]["deployment_id"], kLive);
  EXPECT_EQ(list["deployments"][0]["state"], "active");
  EXPECT_EQ(list["deployments"][1]["state"], "metadata_missing");
  EXPECT_EQ(Json({"deployment", "show", kLive, "--json"})["relations"].size(), 2u);
  json diff = Json({"deployment", "diff", kOld + ":active", "--json"});
  ASSERT_EQ(diff["relations"].size(), 1u)
      << "without metadata, a deployment is what its relations are: " << diff.dump();
  EXPECT_EQ(diff["relations"][0]["change"], "unchanged") << "the same columns, no rows on either side";
  EXPECT_EQ(Sluice({"deployment", "diff", "a:b:c"}).exit_code, 2);
  EXPECT_EQ(Sluice({"deployment", "show", "nope"}).exit_code, 2);

  json dry = Json({"reconcile", "--json"});
  EXPECT_EQ(dry["dry_run"], true);
  json paid;
  for (const json& item : dry["objects"]) {
    if (item["model"] == "paid_orders") paid = item;
  }
  EXPECT_EQ(paid["status"], "reconcile") << dry.dump(2);
  EXPECT_EQ(Json({"reconcile", "--apply", "--json"})["applied"], true);
  for (const json& item : Json({"reconcile", "--json"})["objects"]) {
    if (item["model"] == "paid_orders") {
      EXPECT_EQ(item["status"], "in_sync");
    }
  }

  json janitor = Json({"janitor", "--retention-days", "0", "--json"});
  ASSERT_EQ(janitor["drops"].size(), 2u) << janitor.dump(2);
  EXPECT_EQ(janitor["drops"][0]["type"], "materialized_view");
  EXPECT_TRUE(Exists("tbl__paid_orders__" + kOld)) << "a dry run drops nothing";
  ProcessResult applied = Sluice({"janitor", "--retention-days", "0", "--apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.err;
  EXPECT_FALSE(Exists("mv__paid_orders__" + kOld));
  EXPECT_FALSE(Exists("tbl__paid_orders__" + kOld));
  EXPECT_TRUE(Exists("tbl__paid_orders__" + kLive));
}

TEST_F(DeploymentOperationsE2e, ADirectProjectIsRefusedBeforeConnecting) {
  project_.Write("streambuild_project.toml",
                 "name = \"ch_shop\"\ndefault_target = \"test\"\n[connection]\nhost = \"localhost\"\n"
                 "[targets.test]\ndatabase = \"ch_shop\"\n");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"doctor"}, {"janitor"}, {"reconcile"}, {"deployment", "list"}}) {
    ProcessResult result = Sluice(args);
    EXPECT_EQ(result.exit_code, 1) << args[0];
    EXPECT_NE(result.err.find("SLU-DEPLOY-046"), std::string::npos) << result.err;
  }
}

}  // namespace
}  // namespace sluice::testing
