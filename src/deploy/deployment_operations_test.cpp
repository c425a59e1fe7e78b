// Deployment operations (inventory, diff, doctor, repair, reconcile, janitor) against the real engines: a DuckDB file
// and the ClickHouse test server, one suite run on both. Deployments are set up as the backfill and publish leave
// them: physical relations created by hand, metadata rows appended with DeploymentMetadata, views bound with BindViews.
#include "deploy/deployment_operations.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

#include "core/virtual_names.hpp"
#include "deploy/virtual_plan.hpp"
#include "project/project_loader.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

enum class Engine { kDuckDb, kClickHouse };

std::string EngineName(const ::testing::TestParamInfo<Engine>& info) {
  return info.param == Engine::kDuckDb ? "DuckDb" : "ClickHouse";
}

// Deployment ids: their time orders them.
const std::string kA = "20260101T000000Z_aaa";
const std::string kB = "20260102T000000Z_bbb";
const std::string kC = "20260103T000000Z_ccc";
const std::string kD = "20260104T000000Z_ddd";
const std::string kE = "20260105T000000Z_eee";
const std::string kF = "20260106T000000Z_fff";

class DeploymentOperationsTest : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    std::random_device device;
    root_ = std::filesystem::temp_directory_path() /
            ("sluice_deployment_operations_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
    std::filesystem::create_directories(root_);
    WarehouseConfig config;
    if (clickhouse()) {
      ns_ = testing::UniqueClickHouseDatabase("ops");
      config = testing::ClickHouseTestConfig(testing::RequireClickHouseTestServer(), ns_);
    } else {
      ns_ = "shop";
      config.adapter = "duckdb";
      config.connection = {{"path", (root_ / "warehouse.duckdb").string()}};
      config.project_dir = root_;
      config.target = "test";
    }
    warehouse_ = OpenWarehouse(config);
    warehouse_->EnsureSchema(ns_);
    if (clickhouse()) {
      Exec("CREATE TABLE " + Name("events_raw") +
           " (order_id UInt64, amount Float64, status String, _replay_partition Int32, _replay_offset Int64, "
           "_replay_timestamp DateTime) ENGINE = MergeTree() ORDER BY (_replay_partition, _replay_offset)");
    }
    WriteProject();
    project_ = std::make_unique<Project>(LoadProject(root_, LoadOptions{}));
  }

  void TearDown() override {
    if (warehouse_ && clickhouse()) warehouse_->Execute("DROP DATABASE IF EXISTS " + ns_);
    warehouse_.reset();
    std::filesystem::remove_all(root_);
  }

  bool clickhouse() const { return GetParam() == Engine::kClickHouse; }

  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::trunc) << text;
  }

  // Four virtual models: tables paid_orders, daily_totals and other, and the view v_orders.
  void WriteProject() {
    std::string toml = "name = \"ops\"\nadapter = \"" + std::string(clickhouse() ? "clickhouse" : "duckdb") +
                       "\"\ndefault_target = \"test\"\n[defaults]\npipeline_mode = \"virtual\"\n[targets.test]\n"
                       "database = \"" +
                       ns_ + "\"\n";
    if (!clickhouse()) toml += "[targets.test.connection]\npath = \"warehouse.duckdb\"\n";
    Write("streambuild_project.toml", toml);
    if (clickhouse()) {
      Write("sources/events.yml",
            "sources:\n  - kind: stream_table\n    name: events\n    table_name: events_raw\n    replay_boundary:\n"
            "      mode: offsets\n      columns:\n        _replay_partition: _replay_partition\n"
            "        _replay_offset: _replay_offset\n        _replay_timestamp: _replay_timestamp\n");
      Write(
          "pipelines/shop/paid_orders.sql",
          "MODEL (order_by [\"_replay_partition\", \"_replay_offset\"]);\n"
          "SELECT CAST(order_id AS UInt64) AS order_id, CAST(amount AS Float64) AS amount,\n"
          "  CAST(_replay_partition AS Int32) AS _replay_partition, CAST(_replay_offset AS Int64) AS _replay_offset,\n"
          "  CAST(_replay_timestamp AS DateTime) AS _replay_timestamp\n"
          "FROM __source(\"events\") WHERE status = 'paid'\n");
      Write("pipelines/shop/daily_totals.sql",
            "MODEL (engine \"SummingMergeTree()\", order_by [\"day\"]);\n"
            "SELECT CAST(toDate(_replay_timestamp) AS Date) AS day, CAST(count() AS UInt64) AS orders\n"
            "FROM __ref(\"paid_orders\") GROUP BY day\n");
      Write("pipelines/shop/other.sql",
            "MODEL (order_by [\"order_id\"]);\nSELECT CAST(order_id AS UInt64) AS order_id FROM "
            "__ref(\"paid_orders\")\n");
      Write("pipelines/shop/v_orders.sql",
            "MODEL (kind view);\nSELECT CAST(order_id AS UInt64) AS order_id FROM __ref(\"paid_orders\")\n");
    } else {
      Write("sources/events.yml", "sources:\n  - kind: seed\n    name: events\n    path: seeds/events.csv\n");
      Write("seeds/events.csv", "order_id,amount\n1,2.5\n");
      Write("pipelines/shop/paid_orders.sql",
            "MODEL ();\nSELECT CAST(order_id AS BIGINT) AS order_id, CAST(amount AS DOUBLE) AS amount\n"
            "FROM __source(\"events\")\n");
      Write("pipelines/shop/daily_totals.sql",
            "MODEL ();\nSELECT CAST(order_id AS BIGINT) AS order_id FROM __ref(\"paid_orders\")\n");
      Write("pipelines/shop/other.sql",
            "MODEL ();\nSELECT CAST(order_id AS BIGINT) AS order_id FROM __ref(\"paid_orders\")\n");
      Write("pipelines/shop/v_orders.sql",
            "MODEL (kind view);\nSELECT CAST(order_id AS BIGINT) AS order_id FROM __ref(\"paid_orders\")\n");
    }
  }

  const Asset& Model(const std::string& name) const { return *project_->definitions.Find(AssetKey::Of(ns_, name)); }
  std::string Logical(const std::string& model) const { return Model(model).relation_name; }

  void Exec(const std::string& sql) { warehouse_->Execute(sql); }
  std::string Name(const std::string& relation) const { return warehouse_->QualifiedName(Relation{ns_, relation}); }
  bool Exists(const std::string& relation) { return warehouse_->Describe(Relation{ns_, relation}).has_value(); }

  // A physical table with exactly the model's columns and storage, plus `extra` columns ("name Type").
  void CreateModelTable(const std::string& model, const std::string& physical, const std::string& extra = "") {
    const SqlCompute& compute = std::get<SqlCompute>(Model(model).compute);
    std::string columns;
    for (const ModelColumn& column : compute.columns) {
      columns += (columns.empty() ? "" : ", ") + std::string(column.name) + " " + std::string(column.type);
    }
    if (!extra.empty()) columns += ", " + extra;
    std::string sql = "CREATE TABLE " + Name(physical) + " (" + columns + ")";
    if (clickhouse()) {
      std::string order_by;
      for (const std::string& key : compute.storage.order_by) order_by += (order_by.empty() ? "" : ", ") + key;
      sql += " ENGINE = " + compute.storage.engine + " ORDER BY (" + order_by + ")";
    }
    Exec(sql);
  }

  // On ClickHouse, the materialized view `mv__<model>__<id>` writing to a paid_orders-shaped `target`.
  void CreateFeed(const std::string& view, const std::string& target) {
    if (!clickhouse()) return;
    Exec("CREATE MATERIALIZED VIEW " + Name(view) + " TO " + Name(target) +
         " AS SELECT order_id, amount, _replay_partition, _replay_offset, _replay_timestamp FROM " +
         Name("events_raw"));
  }

  void InsertOrders(const std::string& physical, int count) {
    std::string values;
    for (int i = 1; i <= count; ++i) values += (values.empty() ? "(" : ", (") + std::to_string(i) + ")";
    Exec("INSERT INTO " + Name(physical) + " (order_id) VALUES " + values);
  }

  void RecordState(const std::string& id, DeploymentState state, const std::string& at) {
    DeploymentRow row;
    row.deployment_id = id;
    row.name_space = ns_;
    row.state = state;
    row.recorded_at = at;
    metadata().Append(row);
  }

  // An object row of deployment `id` for `logical`: its own physical (create) or `kept` (no_op).
  void RecordObject(const std::string& id, const std::string& logical, const std::string& type,
                    const std::string& kept = "", const std::string& fingerprint = "f",
                    const std::string& at = "2026-01-01T00:00:00.000Z") {
    ObjectRow row;
    row.deployment_id = id;
    row.kind = "deployment";
    row.name_space = ns_;
    row.logical = logical;
    row.object_type = type;
    row.physical = kept.empty() ? PhysicalName(logical, id) : kept;
    row.action = kept.empty() ? "create" : "no_op";
    row.fingerprint = fingerprint;
    row.columns_json = "[]";
    row.recorded_at = at;
    metadata().Append(std::vector<ObjectRow>{row});
  }

  void Publish(const std::string& id, const std::vector<std::string>& logicals, const std::string& at) {
    std::vector<PublicationRow> rows;
    std::vector<ViewBinding> bindings;
    for (const std::string& logical : logicals) {
      rows.push_back(PublicationRow{"pub_" + id, id, "promote", "", ns_, logical, PhysicalName(logical, id), at});
      bindings.push_back({logical, PhysicalName(logical, id)});
    }
    BindViews(*warehouse_, ns_, bindings);
    metadata().Append(rows);
  }

  // A backfilled deployment of `logical` whose table exists (paid_orders' shape).
  void Backfilled(const std::string& id, const std::string& logical, const std::string& at) {
    CreateModelTable("paid_orders", PhysicalName(logical, id));
    RecordState(id, DeploymentState::kPlanned, at);
    RecordObject(id, logical, "table", "", "f", at);
    // Later than `planned`: the metadata orders a deployment's states by their time.
    RecordState(id, DeploymentState::kBackfilled, at.substr(0, 20) + "500Z");
  }

  DeploymentMetadata& metadata() {
    if (!metadata_) metadata_ = std::make_unique<DeploymentMetadata>(*warehouse_);
    return *metadata_;
  }

  DeploymentInventory Inventory() { return ReadDeploymentInventory(*warehouse_, ns_); }

  std::filesystem::path root_;
  std::string ns_;
  std::unique_ptr<Warehouse> warehouse_;
  std::unique_ptr<Project> project_;
  std::unique_ptr<DeploymentMetadata> metadata_;
};

template <typename F>
std::string CodeOf(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.diagnostics().front().code;
  }
  return "";
}

TEST_P(DeploymentOperationsTest, InventoryGivesEachDeploymentItsState) {
  const std::string orders = Logical("paid_orders");
  Backfilled(kA, orders, "2026-01-01T00:00:00.000Z");
  Publish(kA, {orders}, "2026-01-01T01:00:00.000Z");
  Backfilled(kB, orders, "2026-01-02T00:00:00.000Z");
  Publish(kB, {orders}, "2026-01-02T01:00:00.000Z");
  Backfilled(kC, orders, "2026-01-03T00:00:00.000Z");
  CreateModelTable("paid_orders", PhysicalName(orders, kD));
  RecordState(kD, DeploymentState::kPlanned, "2026-01-04T00:00:00.000Z");
  CreateModelTable("paid_orders", PhysicalName(orders, kE));  // no metadata
  RecordState(kF, DeploymentState::kBackfilled, "2026-01-06T00:00:00.000Z");
  RecordObject(kF, orders, "table");  // its table was never created
  metadata().Append(std::vector<BoundaryRow>{
      {kB, ns_, orders, ns_ + ".events_raw", "offsets", "0", std::nullopt, "41", "2026-01-02T00:00:00.000Z"}});

  const DeploymentInventory inventory = Inventory();
  std::vector<std::pair<std::string, std::string>> states;
  for (const DeploymentSummary& summary : inventory.deployments) {
    states.emplace_back(summary.deployment_id, InventoryStateName(summary.state));
  }
  EXPECT_EQ(states, (std::vector<std::pair<std::string, std::string>>{{kF, "physical_missing"},
                                                                      {kE, "metadata_missing"},
                                                                      {kD, "incomplete"},
                                                                      {kC, "staged"},
                                                                      {kB, "active"},
                                                                      {kA, "superseded"}}));
  const DeploymentSummary& active = FindDeployment(inventory, kB);
  EXPECT_EQ(active.active_logicals, std::vector<std::string>{orders});
  EXPECT_EQ(active.last_published_at, "2026-01-02T01:00:00.000Z");
  EXPECT_EQ(active.created_at, "2026-01-02T00:00:00.000Z");
  ASSERT_EQ(active.objects.size(), 1u);
  EXPECT_EQ(active.objects[0].physical, PhysicalName(orders, kB));
  EXPECT_TRUE(active.objects[0].present);
  ASSERT_EQ(active.relations.size(), 1u);
  EXPECT_EQ(active.relations[0].name, PhysicalName(orders, kB));
  EXPECT_EQ(FindDeployment(inventory, kF).missing, std::vector<std::string>{PhysicalName(orders, kF)});
  EXPECT_EQ(FindDeployment(inventory, kE).created_at, "2026-01-05T00:00:00.000Z") << "the id's time";
  EXPECT_EQ(std::count_if(inventory.boundaries.begin(), inventory.boundaries.end(),
                          [&](const BoundaryRow& row) { return row.deployment_id == kB; }),
            1);
  EXPECT_EQ(CodeOf([&] { FindDeployment(inventory, "20991231T000000Z_zzz"); }), "SLU-DEPLOY-041");
  EXPECT_EQ(CodeOf([&] { FindDeployment(inventory, "latest"); }), "SLU-DEPLOY-040");
}

TEST_P(DeploymentOperationsTest, DiffComparesColumnsAndRowCountsPerLogicalRelation) {
  const std::string orders = Logical("paid_orders");
  Backfilled(kA, orders, "2026-01-01T00:00:00.000Z");
  CreateModelTable("paid_orders", PhysicalName("tbl__legacy", kA));
  RecordObject(kA, "tbl__legacy", "table");
  Publish(kA, {orders, "tbl__legacy"}, "2026-01-01T01:00:00.000Z");
  InsertOrders(PhysicalName(orders, kA), 2);

  CreateModelTable("paid_orders", PhysicalName(orders, kC), clickhouse() ? "country String" : "country VARCHAR");
  InsertOrders(PhysicalName(orders, kC), 3);
  Exec("CREATE VIEW " + Name(PhysicalName("view__x", kC)) + " AS SELECT * FROM " + Name(PhysicalName(orders, kC)));
  RecordState(kC, DeploymentState::kBackfilled, "2026-01-03T00:00:00.000Z");
  RecordObject(kC, orders, "table");
  RecordObject(kC, "view__x", "view");
  RecordObject(kC, "tbl__gone", "table");  // never created

  EXPECT_EQ(ParseDiffSides(kC), (std::pair<std::string, std::string>{"active", kC}));
  const DeploymentInventory inventory = Inventory();
  const DeploymentDiff diff = DiffDeployments(*warehouse_, inventory, "active", kC);
  std::map<std::string, std::string> changes;
  for (const RelationDiff& item : diff.relations) changes[item.logical] = RelationChangeName(item.change);
  EXPECT_EQ(
      changes,
      (std::map<std::string, std::string>{
          {orders, "changed"}, {"tbl__gone", "physical_missing"}, {"tbl__legacy", "removed"}, {"view__x", "added"}}));
  const RelationDiff& changed = *std::find_if(diff.relations.begin(), diff.relations.end(),
                                              [&](const RelationDiff& item) { return item.logical == orders; });
  EXPECT_EQ(changed.from->rows, 2);
  EXPECT_EQ(changed.to->rows, 3);
  EXPECT_EQ(changed.columns.added, std::vector<std::string>{"country"});

  for (const RelationDiff& item : DiffDeployments(*warehouse_, inventory, kA, "active").relations) {
    EXPECT_EQ(item.change, RelationChange::kUnchanged) << item.logical;
  }
  EXPECT_EQ(CodeOf([] { ParseDiffSides("a:b:c"); }), "SLU-DEPLOY-042");
  EXPECT_EQ(CodeOf([] { ParseDiffSides(":"); }), "SLU-DEPLOY-042");
  EXPECT_EQ(CodeOf([] { ParseDiffSides("active:nope"); }), "SLU-DEPLOY-040");
  EXPECT_EQ(CodeOf([&] { DiffDeployments(*warehouse_, inventory, "active", "20991231T000000Z_zzz"); }),
            "SLU-DEPLOY-041");
}

TEST_P(DeploymentOperationsTest, DoctorNamesTheFourStatesOfALogicalName) {
  CreateModelTable("paid_orders", PhysicalName(Logical("paid_orders"), kA));
  BindViews(*warehouse_, ns_, {{Logical("paid_orders"), PhysicalName(Logical("paid_orders"), kA)}});
  CreateModelTable("daily_totals", PhysicalName(Logical("daily_totals"), kA));
  CreateModelTable("daily_totals", PhysicalName(Logical("daily_totals"), kB));
  CreateModelTable("other", Logical("other"));  // left by a direct build: a table, not a view

  std::map<std::string, LogicalDiagnosis> by_logical;
  for (LogicalDiagnosis& diagnosis : Doctor(project_->definitions, Inventory())) {
    by_logical[diagnosis.logical] = std::move(diagnosis);
  }
  ASSERT_EQ(by_logical.size(), 4u);
  const LogicalDiagnosis& active = by_logical[Logical("paid_orders")];
  EXPECT_EQ(LogicalStateKindName(active.state_kind), "active_view_present");
  EXPECT_EQ(active.active_deployment_id, kA);
  EXPECT_TRUE(active.active_physical_present);
  EXPECT_EQ(active.candidate_ids, std::vector<std::string>{kA});
  const LogicalDiagnosis& missing = by_logical[Logical("daily_totals")];
  EXPECT_EQ(LogicalStateKindName(missing.state_kind), "logical_view_missing");
  EXPECT_EQ(missing.candidate_ids, (std::vector<std::string>{kB, kA})) << "newest first";
  EXPECT_EQ(LogicalStateKindName(by_logical[Logical("other")].state_kind), "invalid_active_view");
  EXPECT_EQ(LogicalStateKindName(by_logical[Logical("v_orders")].state_kind), "greenfield");

  Exec("DROP TABLE " + Name(Logical("other")));
  Exec("CREATE VIEW " + Name(Logical("other")) + " AS SELECT 1 AS order_id");
  for (const LogicalDiagnosis& diagnosis : Doctor(project_->definitions, Inventory())) {
    if (diagnosis.logical == Logical("other")) {
      EXPECT_EQ(diagnosis.state_kind, LogicalStateKind::kInvalidActiveView) << "a view over no deployment's object";
    }
  }
}

TEST_P(DeploymentOperationsTest, RepairRebindsAnExistingPhysicalAndWritesNoMetadata) {
  const std::string orders = Logical("paid_orders");
  CreateModelTable("paid_orders", PhysicalName(orders, kA));
  CreateModelTable("paid_orders", PhysicalName(orders, kB));
  BindViews(*warehouse_, ns_, {{orders, PhysicalName(orders, kB)}});

  EXPECT_EQ(CodeOf([&] { RepairActiveView(*warehouse_, ns_, orders, kC); }), "SLU-DEPLOY-043");
  EXPECT_EQ(CodeOf([&] { RepairActiveView(*warehouse_, ns_, orders, "nope"); }), "SLU-DEPLOY-040");
  EXPECT_EQ(CodeOf([&] { RepairActiveView(*warehouse_, ns_, PhysicalName(orders, kA), kA); }), "SLU-DEPLOY-044");
  const ViewBinding binding = RepairActiveView(*warehouse_, ns_, orders, kA);
  EXPECT_EQ(binding.physical, PhysicalName(orders, kA));
  const DeploymentInventory inventory = Inventory();
  EXPECT_EQ(FindDeployment(inventory, kA).state, InventoryState::kActive);
  EXPECT_EQ(FindDeployment(inventory, kB).state, InventoryState::kMetadataMissing);
  EXPECT_TRUE(inventory.objects.empty() && inventory.publications.empty());
}

TEST_P(DeploymentOperationsTest, ReconcileRecordsMatchingLiveTablesOnlyWhenApplied) {
  const std::string orders = Logical("paid_orders");
  const std::string totals = Logical("daily_totals");
  CreateModelTable("paid_orders", PhysicalName(orders, kA));
  CreateFeed("mv__paid_orders__" + kA, PhysicalName(orders, kA));
  CreateModelTable("daily_totals", PhysicalName(totals, kA), clickhouse() ? "extra String" : "extra VARCHAR");
  RecordState(kA, DeploymentState::kBackfilled, "2026-01-01T00:00:00.000Z");
  RecordObject(kA, orders, "table", "", "an older spec");
  RecordObject(kA, totals, "table", "", "an older spec");
  Publish(kA, {orders, totals}, "2026-01-01T01:00:00.000Z");

  const FixedClock clock(*ParseUtc("2026-02-01T12:00:00Z"));
  const size_t rows_before = metadata().Objects(ns_).size();
  const ReconcileReport dry = Reconcile(*warehouse_, project_->definitions, ns_, {}, clock);
  EXPECT_EQ(dry.reconcile_id, "reconcile_20260201T120000Z");
  EXPECT_FALSE(dry.applied);
  std::map<std::string, ReconcileItem> items;
  for (const ReconcileItem& item : dry.items) items[item.model] = item;
  EXPECT_EQ(items["paid_orders"].status, ReconcileStatus::kReconcile) << items["paid_orders"].reason;
  EXPECT_EQ(items["daily_totals"].status, ReconcileStatus::kMismatch);
  EXPECT_NE(items["daily_totals"].reason.find("-extra"), std::string::npos) << items["daily_totals"].reason;
  EXPECT_EQ(items["v_orders"].status, ReconcileStatus::kRejected);
  EXPECT_EQ(items["v_orders"].reason, "views are not reconciled");
  EXPECT_EQ(items["other"].status, ReconcileStatus::kNotDeployed);
  ASSERT_EQ(dry.rows.size(), 1u);
  EXPECT_EQ(metadata().Objects(ns_).size(), rows_before) << "a dry run records nothing";

  VirtualActualState actual = ReadVirtualActualState(*warehouse_, ns_);
  auto action = [&](const VirtualActualState& state) {
    const VirtualPlan plan = PlanVirtual(project_->definitions, state, warehouse_->capabilities(), {}, clock);
    for (const VirtualObject& object : plan.objects) {
      if (object.logical == orders) return ObjectActionName(object.action);
    }
    return std::string("absent");
  };
  EXPECT_EQ(action(actual), "rebuild");

  const ReconcileReport applied = Reconcile(*warehouse_, project_->definitions, ns_, {{}, true}, clock);
  EXPECT_TRUE(applied.applied);
  const std::vector<ObjectRow> rows = metadata().Objects(ns_);
  ASSERT_EQ(rows.size(), rows_before + 1);
  EXPECT_EQ(rows.back().kind, "reconcile");
  EXPECT_EQ(rows.back().deployment_id, "reconcile_20260201T120000Z");
  EXPECT_EQ(rows.back().physical, PhysicalName(orders, kA));
  EXPECT_EQ(rows.back().fingerprint, ObjectFingerprint(project_->definitions, Model("paid_orders")));
  EXPECT_EQ(action(ReadVirtualActualState(*warehouse_, ns_)), "no_op");
  EXPECT_EQ(Reconcile(*warehouse_, project_->definitions, ns_, {}, clock).rows.size(), 0u) << "now in sync";
}

// ClickHouse only: DuckDB tables have no feeding view.
class ClickHouseOperationsTest : public DeploymentOperationsTest {};

TEST_P(ClickHouseOperationsTest, ReconcileOnClickHouseNeedsTheFeedingMaterializedView) {
  const std::string orders = Logical("paid_orders");
  CreateModelTable("paid_orders", PhysicalName(orders, kA));
  RecordObject(kA, orders, "table", "", "an older spec");
  BindViews(*warehouse_, ns_, {{orders, PhysicalName(orders, kA)}});
  const FixedClock clock(*ParseUtc("2026-02-01T12:00:00Z"));
  for (const ReconcileItem& item : Reconcile(*warehouse_, project_->definitions, ns_, {}, clock).items) {
    if (item.model != "paid_orders") continue;
    EXPECT_EQ(item.status, ReconcileStatus::kMismatch);
    EXPECT_NE(item.reason.find("no materialized view"), std::string::npos) << item.reason;
  }
}

// P1 published both tables long ago; P2 then rebuilt tbl__dim only, keeping P1's tbl__orders (no_op); ACT rebuilt and
// published both; OLD was never published; NEW was staged yesterday.
TEST_P(DeploymentOperationsTest, JanitorKeepsActiveRollbackAndRecentAndWhatTheyUse) {
  const std::string p1 = "20260101T000000Z_p1", p2 = "20260110T000000Z_p2", old = "20260105T000000Z_old",
                    act = "20260201T000000Z_act", fresh = "20260228T000000Z_new";
  Backfilled(p1, "tbl__orders", "2026-01-01T00:00:00.000Z");
  CreateFeed("mv__orders__" + p1, PhysicalName("tbl__orders", p1));
  Backfilled(p1, "tbl__dim", "2026-01-01T00:00:00.000Z");
  CreateFeed("mv__dim__" + p1, PhysicalName("tbl__dim", p1));
  Publish(p1, {"tbl__orders", "tbl__dim"}, "2026-01-02T00:00:00.000Z");
  Backfilled(p2, "tbl__dim", "2026-01-10T00:00:00.000Z");
  CreateFeed("mv__dim__" + p2, PhysicalName("tbl__dim", p2));
  RecordObject(p2, "tbl__orders", "table", PhysicalName("tbl__orders", p1));
  Publish(p2, {"tbl__dim"}, "2026-01-11T00:00:00.000Z");
  Backfilled(old, "tbl__orders", "2026-01-05T00:00:00.000Z");
  Exec("CREATE VIEW " + Name(PhysicalName("view__x", old)) + " AS SELECT * FROM " +
       Name(PhysicalName("tbl__orders", old)));
  Backfilled(act, "tbl__orders", "2026-02-01T00:00:00.000Z");
  Backfilled(act, "tbl__dim", "2026-02-01T00:00:00.000Z");
  Publish(act, {"tbl__orders", "tbl__dim"}, "2026-02-01T01:00:00.000Z");
  Backfilled(fresh, "tbl__orders", "2026-02-28T00:00:00.000Z");

  const auto now = *ParseUtc("2026-03-01T00:00:00Z");
  JanitorPlan plan =
      PlanJanitor(Inventory(), JanitorOptions{7, 1}, now, warehouse_->capabilities(), warehouse_->dialect());
  std::map<std::string, JanitorDeployment> verdicts;
  for (const JanitorDeployment& item : plan.deployments) verdicts[item.deployment_id] = item;
  EXPECT_EQ(verdicts[act].reasons, std::vector<std::string>{"active"});
  EXPECT_EQ(verdicts[p2].reasons, std::vector<std::string>{"rollback point"});
  EXPECT_EQ(verdicts[fresh].reasons, std::vector<std::string>{"created within 7 days"});
  EXPECT_FALSE(verdicts[old].kept);
  EXPECT_FALSE(verdicts[p1].kept);
  std::vector<std::string> protected_objects = {PhysicalName("tbl__orders", p1)};
  if (clickhouse()) protected_objects.insert(protected_objects.begin(), "mv__orders__" + p1);
  EXPECT_EQ(verdicts[p1].protected_objects, protected_objects) << "P2, a rollback point, reads P1's orders";

  auto names = [](const JanitorPlan& janitor) {
    std::vector<std::string> out;
    for (const JanitorDrop& drop : janitor.drops) out.push_back(drop.name);
    return out;
  };
  std::vector<std::string> expected;
  if (clickhouse()) expected.push_back("mv__dim__" + p1);
  expected.insert(expected.end(),
                  {PhysicalName("view__x", old), PhysicalName("tbl__dim", p1), PhysicalName("tbl__orders", old)});
  EXPECT_EQ(names(plan), expected) << "materialized views first, then views, then tables";
  for (const JanitorDrop& drop : plan.drops) {
    if (clickhouse()) {
      EXPECT_EQ(drop.statement.rfind("DROP TABLE IF EXISTS ", 0), 0u) << drop.statement;
      EXPECT_EQ(drop.statement.find(" SYNC") != std::string::npos, warehouse_->capabilities().drop_sync);
    } else {
      const char* verb = drop.type == CatalogObjectType::kView ? "DROP VIEW IF EXISTS " : "DROP TABLE IF EXISTS ";
      EXPECT_EQ(drop.statement.rfind(verb, 0), 0u) << drop.statement;
    }
  }
  for (const std::string& name : names(plan)) EXPECT_TRUE(Exists(name)) << name << ": planning drops nothing";

  // With no rollback point, P2 goes too, and with it what kept P1's orders.
  const JanitorPlan without_rollback =
      PlanJanitor(Inventory(), JanitorOptions{7, 0}, now, warehouse_->capabilities(), warehouse_->dialect());
  expected.clear();
  if (clickhouse()) expected.insert(expected.end(), {"mv__dim__" + p1, "mv__dim__" + p2, "mv__orders__" + p1});
  expected.insert(expected.end(),
                  {PhysicalName("view__x", old), PhysicalName("tbl__dim", p1), PhysicalName("tbl__dim", p2),
                   PhysicalName("tbl__orders", p1), PhysicalName("tbl__orders", old)});
  EXPECT_EQ(names(without_rollback), expected);

  const size_t object_rows = metadata().Objects(ns_).size();
  const size_t publication_rows = metadata().Publications(ns_).size();
  ApplyJanitor(*warehouse_, plan);
  for (const JanitorDrop& drop : plan.drops) {
    EXPECT_TRUE(drop.dropped) << drop.name;
    EXPECT_FALSE(Exists(drop.name)) << drop.name;
  }
  for (const std::string& kept : {PhysicalName("tbl__orders", p1), PhysicalName("tbl__dim", p2),
                                  PhysicalName("tbl__orders", act), PhysicalName("tbl__orders", fresh)}) {
    EXPECT_TRUE(Exists(kept)) << kept;
  }
  if (clickhouse()) {
    EXPECT_TRUE(Exists("mv__orders__" + p1)) << "it fills a table a rollback point reads";
  }
  EXPECT_EQ(metadata().Objects(ns_).size(), object_rows) << "metadata is never deleted";
  EXPECT_EQ(metadata().Publications(ns_).size(), publication_rows);
}

TEST_P(DeploymentOperationsTest, JanitorDropsTheBindingsOfRemovedModelsFirstAndThenWhatOnlyTheyKept) {
  Backfilled(kA, "tbl__orders", "2026-01-01T00:00:00.000Z");
  Backfilled(kA, "tbl__gone", "2026-01-01T00:00:00.000Z");
  Publish(kA, {"tbl__orders", "tbl__gone"}, "2026-01-01T01:00:00.000Z");
  Backfilled(kB, "tbl__orders", "2026-01-02T00:00:00.000Z");
  Publish(kB, {"tbl__orders"}, "2026-01-02T01:00:00.000Z");
  JanitorOptions options{7, 0, std::set<std::string>{"tbl__orders"}};  // the model of tbl__gone was removed
  JanitorPlan plan = PlanJanitor(Inventory(), options, *ParseUtc("2026-03-01T00:00:00Z"), warehouse_->capabilities(),
                                 warehouse_->dialect());
  ASSERT_FALSE(plan.drops.empty());
  EXPECT_EQ(plan.drops[0].name, "tbl__gone");
  EXPECT_TRUE(plan.drops[0].obsolete_binding);
  std::map<std::string, JanitorDeployment> verdicts;
  for (const JanitorDeployment& item : plan.deployments) verdicts[item.deployment_id] = item;
  EXPECT_FALSE(verdicts[kA].kept) << "bound only through the removed model's view";
  EXPECT_EQ(verdicts[kB].reasons, std::vector<std::string>{"active"});
  ApplyJanitor(*warehouse_, plan);
  EXPECT_FALSE(Exists("tbl__gone"));
  EXPECT_FALSE(Exists(PhysicalName("tbl__gone", kA)));
  EXPECT_FALSE(Exists(PhysicalName("tbl__orders", kA)));
  EXPECT_TRUE(Exists("tbl__orders"));
  EXPECT_TRUE(Exists(PhysicalName("tbl__orders", kB)));
  // Without the project's names, every bound view is a live binding.
  Backfilled(kA, "tbl__gone", "2026-01-01T00:00:00.000Z");
  Publish(kA, {"tbl__gone"}, "2026-01-03T01:00:00.000Z");
  plan = PlanJanitor(Inventory(), JanitorOptions{7, 0}, *ParseUtc("2026-03-01T00:00:00Z"), warehouse_->capabilities(),
                     warehouse_->dialect());
  for (const JanitorDrop& drop : plan.drops) EXPECT_FALSE(drop.obsolete_binding) << drop.name;
}

TEST_P(DeploymentOperationsTest, JanitorSkipsWhatBecameActiveBeforeItDrops) {
  Backfilled(kA, "tbl__orders", "2026-01-01T00:00:00.000Z");
  Backfilled(kB, "tbl__orders", "2026-01-02T00:00:00.000Z");
  Publish(kB, {"tbl__orders"}, "2026-01-02T01:00:00.000Z");
  JanitorPlan plan = PlanJanitor(Inventory(), JanitorOptions{7, 2}, *ParseUtc("2026-03-01T00:00:00Z"),
                                 warehouse_->capabilities(), warehouse_->dialect());
  ASSERT_EQ(plan.drops.size(), 1u);
  EXPECT_EQ(plan.drops[0].name, PhysicalName("tbl__orders", kA));
  RepairActiveView(*warehouse_, ns_, "tbl__orders", kA);  // between plan and apply
  ApplyJanitor(*warehouse_, plan);
  EXPECT_FALSE(plan.drops[0].dropped);
  EXPECT_EQ(plan.drops[0].skipped, "deployment " + kA + " became active");
  EXPECT_TRUE(Exists(PhysicalName("tbl__orders", kA)));
  EXPECT_EQ(CodeOf([&] {
              PlanJanitor(Inventory(), JanitorOptions{-1, 2}, {}, warehouse_->capabilities(), warehouse_->dialect());
            }),
            "SLU-DEPLOY-045");
}

INSTANTIATE_TEST_SUITE_P(Engines, DeploymentOperationsTest, ::testing::Values(Engine::kDuckDb, Engine::kClickHouse),
                         EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, ClickHouseOperationsTest, ::testing::Values(Engine::kClickHouse), EngineName);

TEST(DeploymentIdOfRelation, ReadsPhysicalNamesAndNumberedMaterializedViews) {
  EXPECT_EQ(DeploymentIdOfRelation("tbl__orders__20260101T000000Z_aaa"), "20260101T000000Z_aaa");
  EXPECT_EQ(DeploymentIdOfRelation("mv__orders__20260101T000000Z_aaa"), "20260101T000000Z_aaa");
  EXPECT_EQ(DeploymentIdOfRelation("mv__orders__20260101T000000Z_aaa__2"), "20260101T000000Z_aaa");
  EXPECT_FALSE(DeploymentIdOfRelation("tbl__orders__20260101T000000Z_aaa__2")) << "only views are numbered";
  EXPECT_FALSE(DeploymentIdOfRelation("tbl__orders"));
}

}  // namespace
}  // namespace sluice
