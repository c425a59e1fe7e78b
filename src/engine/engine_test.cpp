// Unit tests of run planning, selection and model SQL rendering, on the `shop` fixture's definitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>

#include "engine/model_sql.hpp"
#include "engine/run_plan.hpp"
#include "engine/selection.hpp"
#include "project/project_loader.hpp"

namespace sluice {
namespace {

const Project& Shop() {
  static const Project project =
      LoadProject(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / "shop", LoadOptions{});
  return project;
}

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

TEST(ColumnListTest, KeepsNamesAndTypesInOrderWithEmptyOnes) {
  ColumnList columns;
  EXPECT_TRUE(columns.empty());
  columns.reserve(3, 20);
  columns.push_back("id", "UInt64");
  columns.push_back("", "String");  // an empty name or type stays where it is
  columns.push_back("at", "");
  columns.push_back("payload", "Map(String, Array(Nullable(Int64)))");
  ASSERT_EQ(columns.size(), 4u);
  EXPECT_EQ(columns[0], (ColumnList::value_type{"id", "UInt64"}));
  EXPECT_EQ(columns[1], (ColumnList::value_type{"", "String"}));
  EXPECT_EQ(columns[2], (ColumnList::value_type{"at", ""}));
  EXPECT_EQ(columns[3], (ColumnList::value_type{"payload", "Map(String, Array(Nullable(Int64)))"}));
  std::vector<std::string> seen;
  for (const auto& [name, type] : columns) seen.push_back(std::string(name) + ":" + std::string(type));
  EXPECT_EQ(seen,
            (std::vector<std::string>{"id:UInt64", ":String", "at:", "payload:Map(String, Array(Nullable(Int64)))"}));
  EXPECT_EQ(
      columns,
      (ColumnList{{"id", "UInt64"}, {"", "String"}, {"at", ""}, {"payload", "Map(String, Array(Nullable(Int64)))"}}));
  EXPECT_NE(columns, (ColumnList{{"id", "UInt64"}}));
  EXPECT_NE((ColumnList{{"ab", "c"}}), (ColumnList{{"a", "bc"}}));  // same text, different split
  auto found = std::find_if(columns.begin(), columns.end(), [](const auto& column) { return column.first == "at"; });
  EXPECT_EQ(std::distance(columns.begin(), found), 2);
}

TEST(ColumnListTest, AModelCarriesItsContractColumns) {
  const Asset* clean_events = Shop().definitions.FindByName("clean_events");
  ASSERT_NE(clean_events, nullptr);
  EXPECT_EQ(std::get<SqlCompute>(clean_events->compute).columns,
            (ColumnList{{"event_id", "BIGINT"}, {"user_id", "BIGINT"}, {"event_date", "DATE"}, {"amount", "BIGINT"}}));
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

TEST(ModelSql, ReplacesReferencesAndKeepsTheAuthorsBytes) {
  const Definitions& d = Shop().definitions;
  std::string sql = RenderModelSql(d, *d.FindByName("user_totals"), std::nullopt, sql::Dialect::kDuckDb);
  EXPECT_NE(sql.find(R"(FROM "core"."clean_events" AS e)"), std::string::npos) << sql;
  EXPECT_NE(sql.find(R"(JOIN "raw"."dim_users" AS u ON u.user_id = e.user_id)"), std::string::npos) << sql;
  EXPECT_NE(sql.find("CAST(e.user_id AS BIGINT) AS user_id"), std::string::npos) << sql;
  // A trailing comment and `;` are dropped so the SELECT can be embedded as a subquery.
  std::string dim = RenderModelSql(d, *d.FindByName("dim_users"), std::nullopt, sql::Dialect::kDuckDb);
  EXPECT_EQ(dim.find(';'), std::string::npos) << dim;
  EXPECT_EQ(dim.substr(dim.size() - 13), R"("raw"."users")") << dim;
  std::string clean = RenderModelSql(d, *d.FindByName("clean_events"), std::nullopt, sql::Dialect::kDuckDb);
  EXPECT_EQ(clean.find("not_a_ref"), std::string::npos) << clean;
}

TEST(ModelSql, PartitionedInputsAreFilteredToTheWindow) {
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
  downstream.deps = {AssetDependency{project.definitions.FindByName("daily_totals")->key, EdgeType::kDrivingInput}};
  assets.push_back(downstream);
  Definitions definitions(assets, pipelines);
  DateWindow window{*Date::Parse("2026-03-02"), *Date::Parse("2026-03-03")};
  std::string sql = RenderModelSql(definitions, *definitions.Find(downstream.key), window, sql::Dialect::kDuckDb);
  EXPECT_EQ(sql,
            "SELECT * FROM (SELECT * FROM \"core\".\"daily_totals\" WHERE \"event_date\" >= DATE '2026-03-02' AND "
            "\"event_date\" < DATE '2026-03-03') WHERE event_date < DATE '2026-03-03'");
  EXPECT_EQ(ErrorCode([&] {
              RenderModelSql(definitions, *definitions.Find(downstream.key), std::nullopt, sql::Dialect::kDuckDb);
            }),
            "SLU-RUN-002");
}

// Assets m00000 … m<n-1>, each reading the one before; with `closed`, m00000 reads the last one.
std::vector<Asset> Chain(size_t n, bool closed) {
  auto key = [](size_t i) {
    std::string digits = std::to_string(i);
    return AssetKey::FromParts({"core", "m" + std::string(5 - std::min<size_t>(5, digits.size()), '0') + digits});
  };
  std::vector<Asset> assets;
  assets.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    Asset& asset = assets.emplace_back(Asset{key(i), {}, "core", {}, {}, {}, SqlCompute{}, {}});
    if (i > 0 || closed) asset.deps = {AssetDependency{key((i + n - 1) % n), EdgeType::kDrivingInput}};
  }
  return assets;
}

TEST(Definitions, AHundredThousandModelChainIsOrderedAndWalkedWithoutRecursion) {
  Definitions definitions(Chain(100000, false), {});
  std::vector<AssetKey> order = definitions.TopologicalOrder();
  ASSERT_EQ(order.size(), 100000u);
  EXPECT_EQ(order.front().ToString(), "core.m00000");
  EXPECT_EQ(order.back().ToString(), "core.m99999");
  EXPECT_EQ(definitions.UpstreamClosure({order.back()}).size(), 100000u);
}

// Assets given in any order end up in key order (sorted in two halves in parallel, then merged), each with its
// own dependencies (the permutation is applied in place, along its cycles), and are found by key and by name.
TEST(Definitions, AssetsInAnyOrderAreKeptInKeyOrder) {
  std::vector<Asset> assets = Chain(5000, false);
  std::mt19937 random(7);
  std::shuffle(assets.begin(), assets.end(), random);
  Definitions definitions(std::move(assets), {});
  ASSERT_EQ(definitions.assets().size(), 5000u);
  for (size_t i = 0; i < 5000; ++i) {
    const Asset& asset = definitions.assets()[i];
    std::string digits = std::to_string(i);
    EXPECT_EQ(asset.name(), "m" + std::string(5 - digits.size(), '0') + digits);
    if (i > 0) {
      ASSERT_EQ(asset.deps.size(), 1u);
      EXPECT_EQ(asset.deps[0].upstream, definitions.assets()[i - 1].key);
    }
    EXPECT_EQ(definitions.Find(asset.key), &asset);
    EXPECT_EQ(definitions.FindByName(asset.name()), &asset);
  }
}

// Upstreams are looked up in parallel; the error names the first asset in key order that reads an unknown one,
// and the downstream edges of a valid graph are each asset's readers.
TEST(Definitions, TheFirstAssetInKeyOrderWithAnUnknownUpstreamIsReported) {
  std::vector<Asset> assets = Chain(2000, false);
  for (size_t i : {1700u, 300u, 900u}) {
    assets[i].deps.push_back(
        AssetDependency{AssetKey::FromParts({"core", "ghost" + std::to_string(i)}), EdgeType::kReference});
  }
  std::mt19937 random(11);
  std::shuffle(assets.begin(), assets.end(), random);
  try {
    Definitions definitions(std::move(assets), {});
    FAIL() << "the unknown upstreams were accepted";
  } catch (const Error& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].code, "SLU-GRAPH-002");
    EXPECT_EQ(e.diagnostics()[0].message, "core.m00300 depends on unknown asset core.ghost300");
  }
  Definitions chain(Chain(2000, false), {});
  for (size_t i = 0; i + 1 < 2000; ++i) {
    const AssetKey& key = chain.assets()[i].key;
    EXPECT_EQ(chain.Downstream(key), std::vector<AssetKey>{chain.assets()[i + 1].key}) << key.ToString();
  }
  EXPECT_TRUE(chain.Downstream(chain.assets().back().key).empty());
}

// The upstream indexes a caller resolved (the project loader) give the same graph as looking them up, for assets
// in key order; for assets in another order they name old places, so they are ignored and the upstreams looked
// up; a count that does not match the dependencies is a caller's bug.
TEST(Definitions, ResolvedUpstreamsGiveTheGraphThatLookingUpGives) {
  // A diamond per four assets: m(4k+1) and m(4k+2) read m(4k), m(4k+3) reads both.
  std::vector<Asset> assets = Chain(2000, false);
  std::vector<size_t> resolved;
  for (size_t i = 0; i < assets.size(); ++i) {
    assets[i].deps.clear();
    auto read = [&](size_t upstream) {
      assets[i].deps.push_back(AssetDependency{assets[upstream].key, EdgeType::kReference});
      resolved.push_back(upstream);
    };
    if (i % 4 == 1 || i % 4 == 2) read(i - i % 4);
    if (i % 4 == 3) {
      read(i - 2);
      read(i - 1);
    }
  }
  Definitions looked_up(assets, {});
  Definitions given(assets, {}, resolved);
  ASSERT_EQ(given.assets().size(), looked_up.assets().size());
  for (const Asset& asset : looked_up.assets()) {
    EXPECT_EQ(given.Downstream(asset.key), looked_up.Downstream(asset.key)) << asset.key.ToString();
    EXPECT_EQ(given.Find(asset.key)->deps, asset.deps);
  }
  EXPECT_EQ(given.TopologicalOrder(), looked_up.TopologicalOrder());
  EXPECT_EQ(given.Downstream(AssetKey::FromParts({"core", "m00000"})),
            (std::vector<AssetKey>{AssetKey::FromParts({"core", "m00001"}), AssetKey::FromParts({"core", "m00002"})}));

  std::vector<Asset> shuffled = assets;
  std::mt19937 random(5);
  std::shuffle(shuffled.begin(), shuffled.end(), random);
  Definitions reordered(std::move(shuffled), {}, resolved);
  for (const Asset& asset : looked_up.assets()) {
    EXPECT_EQ(reordered.Downstream(asset.key), looked_up.Downstream(asset.key)) << asset.key.ToString();
  }

  std::vector<size_t> short_by_one(resolved.begin(), resolved.end() - 1);
  EXPECT_THROW(Definitions(assets, {}, short_by_one), std::invalid_argument);

  // A cycle through resolved upstreams is found as through looked-up ones.
  std::vector<Asset> cycle = Chain(1000, true);
  std::vector<size_t> cycle_upstreams(1000);
  for (size_t i = 0; i < 1000; ++i) cycle_upstreams[i] = (i + 999) % 1000;
  EXPECT_EQ(ErrorCode([&] { Definitions(std::move(cycle), {}, cycle_upstreams); }), "SLU-GRAPH-001");
}

TEST(Definitions, ALongCycleIsNamedWithItsMiddleElided) {
  try {
    Definitions definitions(Chain(1000, true), {});
    FAIL() << "the cycle was accepted";
  } catch (const Error& e) {
    ASSERT_EQ(e.diagnostics().size(), 1u);
    EXPECT_EQ(e.diagnostics()[0].code, "SLU-GRAPH-001");
    EXPECT_EQ(e.diagnostics()[0].message,
              "dependency cycle: core.m00000 -> core.m00001 -> core.m00002 -> core.m00003 -> core.m00004 -> … 991 "
              "more … -> core.m00996 -> core.m00997 -> core.m00998 -> core.m00999 -> core.m00000");
  }
}

}  // namespace
}  // namespace sluice
