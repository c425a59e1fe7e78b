// Unit tests of run planning, selection and model SQL rendering, on the `shop` fixture's definitions.
#include <gtest/gtest.h>

#include <unistd.h>

#include <functional>

#include "engine/asset_status.hpp"
#include "engine/run_sql.hpp"
#include "engine/run_plan.hpp"
#include "engine/selection.hpp"
#include "project/project_loader.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice {
namespace {

const Project& Shop() {
  static const Project project =
      LoadProject(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / "shop", LoadOptions{});
  return project;
}

// A DuckDB file named shop.duckdb (catalog "shop") in a fresh folder, for rendering SQL as it names relations.
class ShopWarehouse {
 public:
  ShopWarehouse() {
    folder_ = std::filesystem::temp_directory_path() / ("sluice_engine_test_" + std::to_string(::getpid()));
    warehouse_ = DuckDbWarehouse::Open(folder_ / "shop.duckdb", false, {});
  }
  ~ShopWarehouse() {
    warehouse_.reset();
    std::filesystem::remove_all(folder_);
  }
  const Warehouse& operator*() const { return *warehouse_; }

 private:
  std::filesystem::path folder_;
  std::unique_ptr<DuckDbWarehouse> warehouse_;
};

std::vector<std::string> Names(const std::vector<AssetKey>& keys) {
  std::vector<std::string> names;
  for (const AssetKey& key : keys) names.push_back(key.ToString());
  return names;
}

std::string ErrorCode(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front().code;
  }
  return "no error";
}

TEST(LoadedModels, AModelCarriesItsContractColumns) {
  const Asset* clean_events = Shop().definitions.FindByName("clean_events");
  ASSERT_NE(clean_events, nullptr);
  EXPECT_EQ(std::get<SqlCompute>(clean_events->compute).columns,
            (ModelColumns{
                {"event_id", "BIGINT"}, {"user_id", "BIGINT"}, {"event_date", "DATE"}, {"amount", "BIGINT"}}));
}

TEST(Selection, BareNameIsPipelineThenModelThenSource) {
  const Definitions& d = Shop().definitions;
  EXPECT_EQ(Names(ResolveSelection(d, {"people"})), (std::vector<std::string>{"raw.dim_users", "raw.users"}));
  EXPECT_EQ(Names(ResolveSelection(d, {"user_totals"})), (std::vector<std::string>{"core.user_totals"}));
  EXPECT_EQ(Names(ResolveSelection(d, {"events"})), (std::vector<std::string>{"raw.events"}));
  EXPECT_EQ(Names(ResolveSelection(d, {"model:dim_users"})), (std::vector<std::string>{"raw.dim_users"}));
  EXPECT_EQ(Names(ResolveSelection(d, {"core.top_users"})), (std::vector<std::string>{"core.top_users"}));
  EXPECT_EQ(ResolveSelection(d, {}).size(), d.assets().size());
}

TEST(Selection, PlusAddsUpstreamOrDownstreamClosure) {
  const Definitions& d = Shop().definitions;
  EXPECT_EQ(
      Names(ResolveSelection(d, {"+user_totals"})),
      (std::vector<std::string>{"core.clean_events", "core.user_totals", "raw.dim_users", "raw.events", "raw.users"}));
  EXPECT_EQ(Names(ResolveSelection(d, {"dim_users+"})),
            (std::vector<std::string>{"core.top_users", "core.user_totals", "raw.dim_users"}));
  EXPECT_EQ(Names(ResolveSelection(d, {"top_users dim_users"})),
            (std::vector<std::string>{"core.top_users", "raw.dim_users"}));
}

TEST(Selection, UnknownAndMalformedItemsAreErrors) {
  const Definitions& d = Shop().definitions;
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {"nope"}); }), "SLU-SELECT-001");
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {"model:events"}); }), "SLU-SELECT-001");
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {"pipeline:user_totals"}); }), "SLU-SELECT-001");
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {"tag:x"}); }), "SLU-SELECT-002");
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {"+"}); }), "SLU-SELECT-002");
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {""}); }), "SLU-SELECT-002");
  EXPECT_EQ(ErrorCode([&] { ResolveSelection(d, {"events", " \t "}); }), "SLU-SELECT-002");
}

TEST(RunPlan, OrdersStepsAndGivesPartitionedModelsTheirWindow) {
  const Definitions& d = Shop().definitions;
  Date today = *Date::Parse("2026-04-01");
  RunPlan plan = PlanRun(d, RunRequest{{"+daily_totals"}, "2026-03-02", "2026-03-04"}, today);
  ASSERT_EQ(plan.steps.size(), 3u);
  EXPECT_EQ(plan.steps[0].key.ToString(), "raw.events");
  EXPECT_EQ(plan.steps[1].key.ToString(), "core.clean_events");
  EXPECT_EQ(plan.steps[2].key.ToString(), "core.daily_totals");
  EXPECT_FALSE(plan.steps[1].window);
  EXPECT_EQ(plan.steps[2].window, (DateWindow{*Date::Parse("2026-03-02"), *Date::Parse("2026-03-05")}));
  EXPECT_EQ(plan.steps[2].upstream_steps, (std::vector<size_t>{1}));
  EXPECT_EQ(plan.selection_text, "+daily_totals");
}

TEST(RunPlan, DefaultWindowIsYesterdayAndKeysAreValidated) {
  const Definitions& d = Shop().definitions;
  Date today = *Date::Parse("2026-04-01");
  RunPlan plan = PlanRun(d, RunRequest{{"daily_totals"}, std::nullopt, std::nullopt}, today);
  EXPECT_EQ(plan.steps[0].window, (DateWindow{*Date::Parse("2026-03-31"), today}));
  EXPECT_EQ(ErrorCode([&] {
              PlanRun(d, RunRequest{{"daily_totals"}, "2026-02-28", "2026-02-28"}, today);
            }),
            "SLU-PARTITION-002");
  EXPECT_EQ(ErrorCode([&] {
              PlanRun(d, RunRequest{{"daily_totals"}, "2026-04-01", "2026-04-01"}, today);
            }),
            "SLU-PARTITION-003");
  EXPECT_EQ(ErrorCode([&] {
              PlanRun(d, RunRequest{{"daily_totals"}, std::nullopt, std::nullopt}, *Date::Parse("2026-03-01"));
            }),
            "SLU-PARTITION-004");
}

TEST(RunSql, ReplacesReferencesAndKeepsTheAuthorsBytes) {
  const Definitions& d = Shop().definitions;
  ShopWarehouse warehouse;
  std::string sql = RenderRunSql(d, *d.FindByName("user_totals"), std::nullopt, *warehouse).text;
  // Relations carry the DuckDB catalog (the file's stem), so a schema named like the file is not ambiguous.
  EXPECT_NE(sql.find(R"(FROM "shop"."core"."clean_events" AS e)"), std::string::npos) << sql;
  EXPECT_NE(sql.find(R"(JOIN "shop"."raw"."dim_users" AS u ON u.user_id = e.user_id)"), std::string::npos) << sql;
  EXPECT_NE(sql.find("CAST(e.user_id AS BIGINT) AS user_id"), std::string::npos) << sql;
  // The trailing `;` is not part of the model's statement, so the SELECT can be embedded as a subquery; a
  // comment after it is kept byte for byte (the warehouse puts the subquery's parenthesis on a line of its own).
  std::string dim = RenderRunSql(d, *d.FindByName("dim_users"), std::nullopt, *warehouse).text;
  EXPECT_EQ(dim.find(';'), std::string::npos) << dim;
  EXPECT_TRUE(dim.ends_with(R"("shop"."raw"."users")")) << dim;
  std::string clean = RenderRunSql(d, *d.FindByName("clean_events"), std::nullopt, *warehouse).text;
  EXPECT_TRUE(clean.ends_with(R"("shop"."raw"."events" -- a comment with __ref("not_a_ref"))")) << clean;
}

TEST(RunSql, PartitionedInputsAreFilteredToTheWindow) {
  // A partitioned model reading a partitioned upstream reads only the window's dates; @partition_start()
  // and @partition_end() render the window's bounds.
  const Project& project = Shop();
  std::vector<Asset> assets = project.definitions.assets();
  std::vector<Pipeline> pipelines = project.definitions.pipelines();
  Asset downstream = *project.definitions.FindByName("daily_totals");
  downstream.key = AssetKey::FromParts({"core", "weekly"});
  downstream.partitions = project.definitions.FindByName("daily_totals")->partitions;
  auto& compute = std::get<SqlCompute>(downstream.compute);
  compute.body = "SELECT * FROM __ref(\"daily_totals\") WHERE event_date < @partition_end()";
  compute.references = {
      ResolvedReference{sql::ReferenceCall{sql::ReferenceKind::kRef, "daily_totals", std::nullopt, 14, 35},
                        project.definitions.FindByName("daily_totals")->key,
                        EdgeType::kDrivingInput,
                        {}}};
  compute.partition_bounds = {PartitionBoundCall{compute.body.find('@'), compute.body.size(), PartitionBound::kEnd, {}}};
  downstream.deps = {AssetDependency{project.definitions.FindByName("daily_totals")->key, EdgeType::kDrivingInput}};
  assets.push_back(downstream);
  Definitions definitions(assets, pipelines);
  DateWindow window{*Date::Parse("2026-03-02"), *Date::Parse("2026-03-03")};
  ShopWarehouse warehouse;
  std::string sql = RenderRunSql(definitions, *definitions.Find(downstream.key), window, *warehouse).text;
  // Named after the relation, as PostgreSQL requires of a subquery in FROM.
  EXPECT_EQ(sql,
            "SELECT * FROM (SELECT * FROM \"shop\".\"core\".\"daily_totals\" WHERE \"event_date\" >= DATE '2026-03-02' AND "
            "\"event_date\" < DATE '2026-03-03') AS \"daily_totals\" WHERE event_date < DATE '2026-03-03'");
  // A model that names the source keeps its own alias, bare or with AS.
  for (const std::string alias : {" AS t", " t", " \"t\""}) {
    Asset named = downstream;
    auto& named_compute = std::get<SqlCompute>(named.compute);
    named_compute.body = "SELECT * FROM __ref(\"daily_totals\")" + alias + " WHERE true";
    named_compute.partition_bounds.clear();
    assets.back() = named;
    Definitions named_definitions(assets, pipelines);
    EXPECT_EQ(RenderRunSql(named_definitions, *named_definitions.Find(named.key), window, *warehouse).text,
              "SELECT * FROM (SELECT * FROM \"shop\".\"core\".\"daily_totals\" WHERE \"event_date\" >= DATE "
              "'2026-03-02' AND \"event_date\" < DATE '2026-03-03')" + alias + " WHERE true");
  }
  EXPECT_EQ(ErrorCode([&] {
              RenderRunSql(definitions, *definitions.Find(downstream.key), std::nullopt, *warehouse).text;
            }),
            "SLU-RUN-002");
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(OrphanRelations, OnASharedServerLedgerOnlyTheProjectsOwnDatabasesCount) {
  static const Project project =
      LoadProject(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / "ch_shop", LoadOptions{});
  ASSERT_EQ(project.definitions.project().adapter, "clickhouse");
  std::vector<LedgerEntry> ledger(3);
  ledger[0].relation = Relation{"ch_shop", "tbl__removed"};
  ledger[1].relation = Relation{"other_project", "tbl__theirs"};
  ledger[2].relation = Relation{"ch_shop", "tbl__paid_orders"};
  std::vector<TableInfo> catalog = {{Relation{"ch_shop", "tbl__paid_orders"}, false, {}},
                                    {Relation{"ch_shop", "tbl__removed"}, false, {}},
                                    {Relation{"other_project", "tbl__theirs"}, false, {}}};
  std::vector<TableInfo> orphans = OrphanRelations(project.definitions, ledger, catalog);
  ASSERT_EQ(orphans.size(), 1u);
  EXPECT_EQ(orphans[0].relation.ToString(), "ch_shop.tbl__removed");
}

}  // namespace
}  // namespace sluice
