// The SDK's offline half: deployment inspection of code definitions (every rule) and their conversion into
// Definitions.
#include <gtest/gtest.h>

#include <set>

#include "sdk/sdk_definitions.hpp"
#include "sluice/dg.hpp"

namespace sluice::sdk {
namespace {

namespace ibis = sluice::ibis;

dg::AssetsDefinition Memtable(dg::AssetSpec spec) {
  return dg::asset(std::move(spec), [] {
    return ibis::memtable({{{"event_date", *Date::Parse("2026-01-01")}, {"n", int64_t{1}}}},
                          {{"event_date", "date"}, {"n", "int64"}});
  });
}

dg::AssetSpec Spec(dg::AssetKey key) {
  dg::AssetSpec spec;
  spec.key = std::move(key);
  spec.io_manager_key = WAREHOUSE_IO_MANAGER_KEY;
  return spec;
}

dg::AssetSpec Daily(dg::AssetKey key, dagster::DailyPartitionsDefinition daily = {"2026-01-01"}) {
  dg::AssetSpec spec = Spec(std::move(key));
  spec.partitions_def = daily;
  spec.metadata = warehouse_asset_metadata({.partition_by_date = "event_date"});
  return spec;
}

std::set<std::string> Codes(const InspectionReport& report) {
  std::set<std::string> codes;
  for (const InspectionFinding& finding : report.rejected) codes.insert(finding.diagnostic.code);
  return codes;
}

InspectionReport InspectOne(dg::AssetSpec spec) {
  return InspectCode(dg::Definitions{{Memtable(std::move(spec))}, warehouse_resources()});
}

TEST(SdkInspection, AcceptsTheSeedShapes) {
  dg::AssetSpec silver = Spec({"silver", "orders"});
  silver.ins = {{"orders", dg::AssetIn({"bronze", "orders"})}};
  dg::AssetSpec daily = Daily({"silver", "daily_orders"});
  daily.backfill_policy = dg::BackfillPolicy::multi_run(10);
  InspectionReport report = InspectCode(
      dg::Definitions{{Memtable(Spec({"bronze", "orders"})), Memtable(silver), Memtable(daily), Memtable(Spec("t"))},
                      warehouse_resources()});
  EXPECT_TRUE(report.ok());
  ASSERT_EQ(report.assets.size(), 4u);
  EXPECT_EQ(report.assets[1].key, "silver.daily_orders");
  EXPECT_EQ(report.assets[1].partitioning, "daily from 2026-01-01 by event_date");
  EXPECT_EQ(report.assets[1].backfill_policy, "multi_run(10)");
  EXPECT_EQ(report.assets[3].relation, "<default namespace>.t");
  EXPECT_EQ(report.assets[3].defined_at.file, __FILE__);
}

TEST(SdkInspection, RejectsKeysOfOtherShapes) {
  for (dg::AssetKey key : {dg::AssetKey{"a", "b", "c"}, dg::AssetKey(std::vector<std::string>{}),
                           dg::AssetKey{"bronze", "my-orders"}}) {
    InspectionReport report = InspectOne(Spec(key));
    EXPECT_EQ(Codes(report), std::set<std::string>{"SLU-INSPECT-001"}) << key.ToUserString();
  }
  InspectionReport report = InspectOne(Spec({"a", "b", "c"}));
  EXPECT_NE(report.rejected[0].diagnostic.message.find("asset a.b.c: key a/b/c has 3 part(s)"), std::string::npos)
      << report.rejected[0].diagnostic.message;
  EXPECT_EQ(report.rejected[0].diagnostic.location.file, __FILE__);
}

TEST(SdkInspection, RejectsCatalogOverrides) {
  for (const char* name : {"catalog", "project", "database", "segmentstream/Project"}) {
    dg::AssetSpec spec = Spec({"bronze", "orders"});
    spec.metadata[name] = "elsewhere";
    EXPECT_EQ(Codes(InspectOne(spec)), std::set<std::string>{"SLU-INSPECT-002"}) << name;
  }
}

TEST(SdkInspection, RejectsPartitionsOtherThanDefaultDaily) {
  dg::AssetSpec hourly = Daily({"a", "b"});
  hourly.partitions_def = dagster::HourlyPartitionsDefinition{"2026-01-01-00:00"};
  EXPECT_EQ(Codes(InspectOne(hourly)), std::set<std::string>{"SLU-INSPECT-003"});
  dg::AssetSpec fixed = Daily({"a", "b"});
  fixed.partitions_def = dagster::StaticPartitionsDefinition{{"x", "y"}};
  InspectionReport report = InspectOne(fixed);
  EXPECT_NE(report.rejected[0].diagnostic.message.find("StaticPartitionsDefinition"), std::string::npos);

  std::vector<dagster::DailyPartitionsDefinition> odd(6, dagster::DailyPartitionsDefinition("2026-01-01"));
  odd[0].hour_offset = 6;
  odd[1].minute_offset = 30;
  odd[2].timezone = "Europe/Berlin";
  odd[3].fmt = "%Y%m%d";
  odd[4].end_offset = 1;
  odd[5].start_date = "January";
  for (const auto& daily : odd) {
    InspectionReport one = InspectOne(Daily({"a", "b"}, daily));
    EXPECT_EQ(Codes(one), std::set<std::string>{"SLU-INSPECT-004"}) << one.rejected.size();
  }
}

TEST(SdkInspection, RejectsDailyAssetsWithoutTheirDateColumn) {
  dg::AssetSpec spec = Daily({"a", "b"});
  spec.metadata.clear();
  EXPECT_EQ(Codes(InspectOne(spec)), std::set<std::string>{"SLU-INSPECT-005"});
  dg::AssetSpec unpartitioned = Spec({"a", "b"});
  unpartitioned.metadata = warehouse_asset_metadata({.partition_by_date = "event_date"});
  EXPECT_EQ(Codes(InspectOne(unpartitioned)), std::set<std::string>{"SLU-INSPECT-006"});
  dg::AssetSpec bad_column = Daily({"a", "b"});
  bad_column.metadata = warehouse_asset_metadata({.partition_by_date = "event date"});
  EXPECT_EQ(Codes(InspectOne(bad_column)), std::set<std::string>{"SLU-INSPECT-006"});
}

TEST(SdkInspection, RejectsOtherIoManagersUnknownInputsDuplicatesAndEmptyPolicies) {
  dg::AssetSpec io = Spec({"a", "b"});
  io.io_manager_key = "io_manager";
  EXPECT_EQ(Codes(InspectOne(io)), std::set<std::string>{"SLU-INSPECT-007"});
  dg::AssetSpec input = Spec({"a", "b"});
  input.ins = {{"x", dg::AssetIn({"a", "missing"})}};
  EXPECT_EQ(Codes(InspectOne(input)), std::set<std::string>{"SLU-INSPECT-008"});
  dg::AssetSpec policy = Daily({"a", "b"});
  policy.backfill_policy = dg::BackfillPolicy::multi_run(0);
  EXPECT_EQ(Codes(InspectOne(policy)), std::set<std::string>{"SLU-INSPECT-010"});
  InspectionReport twice =
      InspectCode(dg::Definitions{{Memtable(Spec({"a", "b"})), Memtable(Spec({"a", "b"}))}, warehouse_resources()});
  EXPECT_EQ(Codes(twice), std::set<std::string>{"SLU-INSPECT-009"});
}

TEST(SdkDefinitions, OnePartKeysLiveInTheDefaultNamespaceAndPoliciesFollowDagster) {
  dg::AssetSpec downstream = Daily("daily");
  downstream.ins = {{"raw", dg::AssetIn("raw")}};
  dg::AssetSpec ranged = Daily({"gold", "ranged"});
  ranged.backfill_policy = dg::BackfillPolicy::single_run();
  Definitions definitions = ToDefinitions(
      dg::Definitions{{Memtable(Spec("raw")), Memtable(downstream), Memtable(ranged)}, warehouse_resources()},
      "analytics");
  const Asset* daily = definitions.Find(AssetKey::Of("analytics", "daily"));
  ASSERT_NE(daily, nullptr);
  EXPECT_EQ(AssetKindName(*daily), "code");
  EXPECT_FALSE(daily->is_source());
  ASSERT_TRUE(daily->partitions);
  EXPECT_EQ(daily->partitions->column, "event_date");
  EXPECT_EQ(daily->backfill_policy, BackfillPolicy::MultiRun(1));  // no policy: one partition per run
  ASSERT_EQ(daily->deps.size(), 1u);
  EXPECT_EQ(daily->deps[0].upstream, AssetKey::Of("analytics", "raw"));
  EXPECT_EQ(definitions.Find(AssetKey::Of("gold", "ranged"))->backfill_policy, BackfillPolicy::SingleRun());
  EXPECT_EQ(definitions.TopologicalOrder().front(), AssetKey::Of("analytics", "raw"));
}

TEST(SdkDefinitions, RefusesDefinitionsInspectionRejectsWithEveryFinding) {
  dg::AssetSpec bad = Spec({"a", "b", "c"});
  dg::AssetSpec worse = Daily({"x", "y"});
  worse.metadata["catalog"] = "other";
  try {
    ToDefinitions(dg::Definitions{{Memtable(bad), Memtable(worse)}, warehouse_resources()}, "main");
    FAIL() << "expected a rejection";
  } catch (const Error& error) {
    ASSERT_EQ(error.diagnostics().size(), 2u);
    EXPECT_EQ(error.diagnostics()[0].code, "SLU-INSPECT-001");
    EXPECT_EQ(error.diagnostics()[1].code, "SLU-INSPECT-002");
  }
}

TEST(SdkDefinitions, TheComputeFunctionSeesItsContextAndInputs) {
  dg::AssetSpec spec = Daily({"a", "b"});
  spec.ins = {{"up", dg::AssetIn({"a", "up"})}};
  std::vector<std::string> logged;
  auto definition = dg::asset(spec, [&](const dg::AssetExecutionContext& context, const dg::Inputs& inputs) {
    context.log().info("keys " + std::to_string(context.partition_keys().size()));
    EXPECT_EQ(context.partition_time_window().start, "2026-01-02");
    EXPECT_EQ(context.partition_time_window().end, "2026-01-04");
    EXPECT_THROW(context.partition_key(), Error);
    EXPECT_THROW(inputs["nope"], Error);
    return inputs["up"];
  });
  Definitions definitions =
      ToDefinitions(dg::Definitions{{Memtable(Spec({"a", "up"})), definition}, warehouse_resources()}, "main");
  const auto& code = std::get<CodeCompute>(definitions.Find(AssetKey::Of("a", "b"))->compute);
  rel::Table up = rel::Memtable({}, {{"event_date", "date"}});
  CodeContext context{AssetKey::Of("a", "b"), "run", {"2026-01-02", "2026-01-03"},
                      DateWindow{*Date::Parse("2026-01-02"), *Date::Parse("2026-01-04")},
                      [&](const std::string& line) { logged.push_back(line); }};
  rel::Table out = code.function(context, CodeInputs{{"up", up}});
  EXPECT_EQ(out.node(), up.node());
  EXPECT_EQ(logged, std::vector<std::string>{"INFO keys 2"});
}

}  // namespace
}  // namespace sluice::sdk
