// The Definitions value on hand-built assets: ordering, lookups, graph queries, the validation of its
// construction (unique keys, known upstreams, cycles, spans) and the rendering of a model's SQL.
#include "definitions/definitions.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <algorithm>
#include <map>
#include <random>

#include "definitions/definitions_test_support.hpp"
#include "definitions/deployment_inspection.hpp"
#include "definitions/model_sql.hpp"

namespace sluice {
namespace {

Diagnostic DiagnosticOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", {}};
}

std::vector<std::string> Names(const std::vector<AssetKey>& keys) {
  std::vector<std::string> names;
  for (const AssetKey& key : keys) names.push_back(key.ToString());
  return names;
}

using testing::HandBuiltModel;
using testing::HandBuiltSeed;

// A model of pipeline "p" reading each of `upstreams` (the first as its driving input).
Asset Model(const std::string& name_space, const std::string& name, const std::vector<AssetKey>& upstreams) {
  std::string body = "SELECT *";
  std::map<std::string, AssetKey> keys;
  for (size_t i = 0; i < upstreams.size(); ++i) {
    body += (i == 0 ? " FROM __ref(\"" : " JOIN __ref(\"") + upstreams[i].name() + "\")";
    keys.emplace(upstreams[i].name(), upstreams[i]);
  }
  return HandBuiltModel(name_space, "p", name, body, keys);
}

Asset Seed(const std::string& name_space, const std::string& name) {
  return HandBuiltSeed(name_space, name, "seeds/" + name + ".csv");
}

std::vector<Asset> Chain() {
  std::vector<Asset> assets;
  assets.push_back(Model("gold", "report", {AssetKey::Of("silver", "clean"), AssetKey::Of("raw", "users")}));
  assets.push_back(Model("silver", "clean", {AssetKey::Of("raw", "events")}));
  assets.push_back(Seed("raw", "users"));
  assets.push_back(Seed("raw", "events"));
  return assets;
}

TEST(DefinitionsTest, KeepsAssetsInKeyOrderAndFindsThemByKeyAndName) {
  const Definitions definitions(Chain(), {});
  EXPECT_EQ(Names({definitions.assets()[0].key, definitions.assets()[1].key, definitions.assets()[2].key,
                   definitions.assets()[3].key}),
            (std::vector<std::string>{"gold.report", "raw.events", "raw.users", "silver.clean"}));
  ASSERT_NE(definitions.Find(AssetKey::Of("silver", "clean")), nullptr);
  EXPECT_EQ(definitions.Find(AssetKey::Of("silver", "clean"))->relation_name, "clean");
  EXPECT_EQ(definitions.Find(AssetKey::Of("silver", "nothing")), nullptr);
  ASSERT_NE(definitions.FindByName("users"), nullptr);
  EXPECT_EQ(definitions.FindByName("users")->key.ToString(), "raw.users");
  EXPECT_EQ(definitions.FindByName("nothing"), nullptr);
}

TEST(DefinitionsTest, GraphQueriesFollowTheDependencies) {
  const Definitions definitions(Chain(), {});
  EXPECT_EQ(Names(definitions.TopologicalOrder()),
            (std::vector<std::string>{"raw.events", "raw.users", "silver.clean", "gold.report"}));
  EXPECT_EQ(Names(definitions.UpstreamClosure({AssetKey::Of("silver", "clean")})),
            (std::vector<std::string>{"raw.events", "silver.clean"}));
  EXPECT_EQ(Names(definitions.DownstreamClosure({AssetKey::Of("raw", "events")})),
            (std::vector<std::string>{"gold.report", "raw.events", "silver.clean"}));
  EXPECT_EQ(Names(definitions.Downstream(AssetKey::Of("raw", "users"))), (std::vector<std::string>{"gold.report"}));
  EXPECT_THROW(definitions.Downstream(AssetKey::Of("raw", "nothing")), std::out_of_range);
}

TEST(DefinitionsTest, CarriesTheProjectItsChecksAndMacrosSortedByName) {
  Definitions::Parts parts;
  parts.project = ProjectInfo{"shop", "dev", "duckdb"};
  parts.assets = Chain();
  parts.pipelines = {Pipeline{"zeta", "pipelines/zeta", "gold", {"report"}, std::nullopt},
                     Pipeline{"alpha", "pipelines/alpha", "silver", {"clean"}, "events"}};
  parts.tests = {TestSpec{"t2", "tests/t2.sql", "compiled/tests/t2.sql", {}, TestMode::kModel, "SELECT 1\n"},
                 TestSpec{"t1", "tests/t1.sql", "compiled/tests/t1.sql", {}, TestMode::kMacro, "SELECT 1\n"}};
  parts.audits = {AuditSpec{}};
  parts.audits[0].name = "positive";
  parts.macros = {MacroSource{"b", "macros/m.py", "def b(): ..."}, MacroSource{"a", "macros/m.py", ""}};
  const Definitions definitions(std::move(parts));
  EXPECT_EQ(definitions.project().name, "shop");
  EXPECT_EQ(definitions.project().target, "dev");
  EXPECT_EQ(definitions.pipelines()[0].name, "alpha");
  ASSERT_NE(definitions.FindPipeline("zeta"), nullptr);
  EXPECT_EQ(definitions.FindPipeline("zeta")->name_space, "gold");
  EXPECT_EQ(definitions.tests()[0].name, "t1");
  EXPECT_EQ(definitions.audits()[0].name, "positive");
  EXPECT_EQ(definitions.macros()[0].name, "a");
}

TEST(DefinitionsTest, RejectsTwoAssetsWithOneKey) {
  std::vector<Asset> assets = Chain();
  assets.push_back(Seed("raw", "users"));
  Diagnostic d = DiagnosticOf([&] { Definitions(std::move(assets), {}); });
  EXPECT_EQ(d.code, "SLU-GRAPH-004");
  EXPECT_NE(d.message.find("raw.users"), std::string::npos) << d.message;
}

TEST(DefinitionsTest, RejectsAnUnknownUpstreamAtTheReference) {
  std::vector<Asset> assets = Chain();
  assets.push_back(Model("gold", "broken", {AssetKey::Of("raw", "missing")}));
  Diagnostic d = DiagnosticOf([&] { Definitions(std::move(assets), {}); });
  EXPECT_EQ(d.code, "SLU-GRAPH-002");
  EXPECT_EQ(d.message, "gold.broken depends on unknown asset raw.missing");
  EXPECT_EQ(d.location.file, "hand_built/broken");
}

TEST(DefinitionsTest, RejectsACycleNamingItAtTheClosingReference) {
  std::vector<Asset> assets;
  assets.push_back(Model("m", "a", {AssetKey::Of("m", "c")}));
  assets.push_back(Model("m", "b", {AssetKey::Of("m", "a")}));
  assets.push_back(Model("m", "c", {AssetKey::Of("m", "b")}));
  Diagnostic d = DiagnosticOf([&] { Definitions(std::move(assets), {}); });
  EXPECT_EQ(d.code, "SLU-GRAPH-001");
  EXPECT_EQ(d.message, "dependency cycle: m.a -> m.b -> m.c -> m.a");
  EXPECT_EQ(d.location.file, "hand_built/b");
}

TEST(DefinitionsTest, RejectsSpansOutsideTheBodyOutOfOrderOrOverlapping) {
  std::vector<Asset> assets = Chain();
  auto& compute = std::get<SqlCompute>(assets[0].compute);
  compute.references[0].call.end = compute.body.size() + 1;
  EXPECT_EQ(DiagnosticOf([&] { Definitions(std::move(assets), {}); }).code, "SLU-DEFS-001");

  assets = Chain();
  auto& swapped = std::get<SqlCompute>(assets[0].compute);
  std::swap(swapped.references[0], swapped.references[1]);
  EXPECT_EQ(DiagnosticOf([&] { Definitions(std::move(assets), {}); }).code, "SLU-DEFS-001");

  assets = Chain();
  auto& overlapping = std::get<SqlCompute>(assets[0].compute);
  overlapping.partition_bounds.push_back(PartitionBoundCall{overlapping.references[0].call.begin + 1,
                                                            overlapping.references[0].call.end + 2,
                                                            PartitionBound::kStart,
                                                            {}});
  EXPECT_EQ(DiagnosticOf([&] { Definitions(std::move(assets), {}); }).code, "SLU-DEFS-001");
}

TEST(DefinitionsTest, AssetKindNamesAreTheManifests) {
  std::vector<Asset> assets = Chain();
  EXPECT_EQ(AssetKindName(assets[0]), "table");
  EXPECT_EQ(AssetKindName(assets[2]), "seed");
  std::get<SqlCompute>(assets[0].compute).kind = ModelKind::kView;
  EXPECT_EQ(AssetKindName(assets[0]), "view");
  assets[2].compute = ExternalTable{};
  EXPECT_EQ(AssetKindName(assets[2]), "stream_table");
  assets[2].compute = KafkaSource{};
  EXPECT_EQ(AssetKindName(assets[2]), "kafka");
  assets[2].compute = PostgresSource{};
  EXPECT_EQ(AssetKindName(assets[2]), "postgres");
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

TEST(DefinitionsGraphTest, AHundredThousandModelChainIsOrderedAndWalkedWithoutRecursion) {
  Definitions definitions(Chain(100000, false), {});
  std::vector<AssetKey> order = definitions.TopologicalOrder();
  ASSERT_EQ(order.size(), 100000u);
  EXPECT_EQ(order.front().ToString(), "core.m00000");
  EXPECT_EQ(order.back().ToString(), "core.m99999");
  EXPECT_EQ(definitions.UpstreamClosure({order.back()}).size(), 100000u);
}

// Assets given in any order end up in key order (sorted in two halves in parallel, then merged), each with its
// own dependencies (the permutation is applied in place, along its cycles), and are found by key and by name.
TEST(DefinitionsGraphTest, AssetsInAnyOrderAreKeptInKeyOrder) {
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
TEST(DefinitionsGraphTest, TheFirstAssetInKeyOrderWithAnUnknownUpstreamIsReported) {
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

TEST(DefinitionsGraphTest, ALongCycleIsNamedWithItsMiddleElided) {
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

TEST(ModelSqlTest, ReplacesReferencesAndPartitionBoundsInTextOrderKeepingEveryOtherByte) {
  SqlCompute model;
  model.body = "SELECT * FROM __ref(\"a\") WHERE d >= @partition_start() AND d < @partition_end() -- end";
  const size_t ref = model.body.find("__ref");
  model.references.push_back(ResolvedReference{
      {sql::ReferenceKind::kRef, "a", std::nullopt, ref, ref + 10}, AssetKey::Of("x", "a"), EdgeType::kDrivingInput, {}});
  const size_t start = model.body.find("@partition_start()");
  const size_t end = model.body.find("@partition_end()");
  model.partition_bounds.push_back(PartitionBoundCall{start, start + 18, PartitionBound::kStart, {}});
  model.partition_bounds.push_back(PartitionBoundCall{end, end + 16, PartitionBound::kEnd, {}});

  auto relation = [](const ResolvedReference& reference) { return reference.upstream.ToString(); };
  auto bound = [](const PartitionBoundCall& call) {
    return std::string(call.bound == PartitionBound::kStart ? "DATE '2026-01-01'" : "DATE '2026-01-02'");
  };
  EXPECT_EQ(RenderModelSql(model, relation, bound),
            "SELECT * FROM x.a WHERE d >= DATE '2026-01-01' AND d < DATE '2026-01-02' -- end");
  EXPECT_EQ(RenderModelSql(model, relation),
            "SELECT * FROM x.a WHERE d >= @partition_start() AND d < @partition_end() -- end");
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// Definitions built by hand skip the loader's checks; deployment inspection holds their partitioned models to the
// same rules.
TEST(DeploymentInspectionTest, RejectsAPartitionColumnThatIsMissingOrNotADate) {
  auto daily = [](const std::string& name, ModelColumns columns) {
    Asset asset = testing::HandBuiltModel("gold", "p", name, "SELECT d FROM __ref(\"events\")",
                                          {{"events", AssetKey::Of("raw", "events")}}, std::move(columns));
    asset.partitions = PartitionSpec{"d", DailyPartitions(*Date::Parse("2026-01-01"))};
    return asset;
  };
  std::vector<Asset> assets;
  assets.push_back(daily("good", {{"d", "DATE"}, {"n", "BIGINT"}}));
  assets.push_back(daily("text", {{"d", "VARCHAR"}}));
  assets.push_back(daily("missing", {{"day", "DATE"}}));
  assets.push_back(testing::HandBuiltSeed("raw", "events", "seeds/events.csv"));
  Definitions definitions(std::move(assets), {});
  InspectionReport report = InspectDefinitions(definitions);
  ASSERT_EQ(report.assets.size(), 4u);
  EXPECT_EQ(report.assets[0].partitioning, "daily from 2026-01-01 by d");
  EXPECT_EQ(report.assets[0].backfill_policy, "single_run");
  ASSERT_EQ(report.rejected.size(), 2u);
  EXPECT_EQ(report.rejected[0].diagnostic.code, "SLU-INSPECT-011");
  EXPECT_EQ(report.rejected[0].asset, "gold.missing");
  EXPECT_EQ(report.rejected[1].diagnostic.code, "SLU-INSPECT-012");
  EXPECT_NE(report.rejected[1].diagnostic.message.find("is VARCHAR, not a DATE"), std::string::npos);
  EXPECT_EQ(report.rejected[1].diagnostic.location.file, "hand_built/text");
}

}  // namespace
}  // namespace sluice
