// The SDK's offline half: deployment inspection of code definitions (every rule), their conversion into Definitions,
// and the lazy warehouse settings.
#include <gtest/gtest.h>

#include <set>

#include "sdk/sdk_definitions.hpp"
#include "sdk/warehouse_settings.hpp"
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

EnvironmentLookup Environment(std::map<std::string, std::string> values, std::vector<std::string>* asked = nullptr) {
  return [values, asked](const std::string& name) -> std::optional<std::string> {
    if (asked != nullptr) asked->push_back(name);
    auto found = values.find(name);
    if (found == values.end()) return std::nullopt;
    return found->second;
  };
}

TEST(WarehouseSettings, NamesTheMissingVariable) {
  for (const char* missing : {"SEGMENTSTREAM_WAREHOUSE_ENGINE", "SEGMENTSTREAM_WAREHOUSE_CATALOG",
                              "SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE"}) {
    std::map<std::string, std::string> values{{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "duckdb"},
                                              {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "w.duckdb"},
                                              {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "analytics"}};
    values[missing] = "";
    try {
      ReadWarehouseSettings(Environment(values));
      FAIL() << missing;
    } catch (const Error& error) {
      EXPECT_EQ(error.diagnostics()[0].code, "SLU-SDK-001");
      EXPECT_NE(error.diagnostics()[0].message.find(missing), std::string::npos);
    }
  }
}

TEST(WarehouseSettings, DuckDbAndClickHouse) {
  WarehouseSettings duck = ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "duckdb"},
                                                              {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "w.duckdb"},
                                                              {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "main"},
                                                              {"SEGMENTSTREAM_WAREHOUSE_LOCATION", "EU"}}));
  EXPECT_EQ(duck.config.adapter, "duckdb");
  EXPECT_EQ(duck.config.connection.at("path"), "w.duckdb");
  EXPECT_EQ(duck.location, "EU");
  WarehouseSettings ch = ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "clickhouse"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "http://db1:8124/"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "raw"},
                                                            {"STREAMBUILD_CLICKHOUSE_USERNAME", "u"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_PASSWORD", "p"},
                                                            {"STREAMBUILD_CLICKHOUSE_PASSWORD", "other"}}));
  EXPECT_EQ(ch.config.connection.at("host"), "db1");
  EXPECT_EQ(ch.config.connection.at("port"), "8124");
  EXPECT_EQ(ch.config.connection.at("database"), "raw");
  EXPECT_EQ(ch.config.connection.at("username"), "u");
  EXPECT_EQ(ch.config.connection.at("password"), "p");
  auto code_of = [](std::map<std::string, std::string> values) {
    try {
      ReadWarehouseSettings(Environment(values));
    } catch (const Error& error) {
      return error.diagnostics()[0].code;
    }
    return std::string("none");
  };
  EXPECT_EQ(code_of({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "oracle"}, {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "x"},
                     {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "a"}}),
            "SLU-SDK-002");
  EXPECT_EQ(code_of({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "duckdb"}, {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "x"},
                     {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "a-b"}}),
            "SLU-SDK-003");
  EXPECT_EQ(code_of({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "clickhouse"}, {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "h:port"},
                     {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "a"}}),
            "SLU-SDK-004");
}

TEST(WarehouseSettings, BigQueryTakesTheProjectFromTheCatalogAndTheDatasetsLocation) {
  WarehouseSettings bq = ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "bigquery"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "acme-analytics"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "marts"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_LOCATION", "EU"}}));
  EXPECT_EQ(bq.config.adapter, "bigquery");
  EXPECT_EQ(bq.config.connection,
            (std::map<std::string, std::string>{{"project", "acme-analytics"}, {"location", "EU"}}));
  EXPECT_EQ(bq.default_namespace, "marts");
  WarehouseSettings us = ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "bigquery"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "acme-analytics"},
                                                            {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "marts"}}));
  EXPECT_EQ(us.config.connection.count("location"), 0u);  // the backend's default, US
  try {
    ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "bigquery"},
                                       {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "marts"}}));
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics()[0].code, "SLU-SDK-001");
    EXPECT_NE(error.diagnostics()[0].hint.find("SEGMENTSTREAM_WAREHOUSE_CATALOG=my-gcp-project"), std::string::npos)
        << error.diagnostics()[0].hint;
  }
}

TEST(WarehouseSettings, PostgresFromAUrlOrHostAndDatabaseWithCredentialsFromTheEnvironment) {
  WarehouseSettings url = ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "postgres"},
                                                             {"SEGMENTSTREAM_WAREHOUSE_CATALOG",
                                                              "postgresql://db1:5433/shop?sslmode=require"},
                                                             {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "raw"},
                                                             {"SEGMENTSTREAM_WAREHOUSE_USERNAME", "u"},
                                                             {"PGUSER", "other"},
                                                             {"PGPASSWORD", "p"}}));
  EXPECT_EQ(url.config.adapter, "postgres");
  EXPECT_EQ(url.config.connection,
            (std::map<std::string, std::string>{{"host", "db1"},
                                                {"port", "5433"},
                                                {"dbname", "shop"},
                                                {"sslmode", "require"},
                                                {"database", "raw"},
                                                {"username", "u"},
                                                {"password", "p"}}));
  WarehouseSettings plain = ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "postgres"},
                                                               {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "localhost/shop"},
                                                               {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "raw"},
                                                               {"PGUSER", "pg"},
                                                               {"SEGMENTSTREAM_WAREHOUSE_PASSWORD", "s"},
                                                               {"PGPASSWORD", "other"}}));
  EXPECT_EQ(plain.config.connection.at("port"), "5432");
  EXPECT_EQ(plain.config.connection.at("username"), "pg");
  EXPECT_EQ(plain.config.connection.at("password"), "s");
  for (std::string catalog : {"localhost:5432", "h:port/db", "postgresql://u:hunter22@h/db", "h/db?x=1"}) {
    try {
      ReadWarehouseSettings(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "postgres"},
                                         {"SEGMENTSTREAM_WAREHOUSE_CATALOG", catalog},
                                         {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "raw"}}));
      FAIL() << catalog;
    } catch (const Error& error) {
      EXPECT_EQ(error.diagnostics()[0].code, "SLU-SDK-006") << catalog;
      EXPECT_EQ(std::string(error.what()).find("hunter22"), std::string::npos);
      EXPECT_EQ(error.diagnostics()[0].message.find("hunter22"), std::string::npos);
    }
  }
}

TEST(WarehouseSettings, LazySettingsReadTheEnvironmentOnFirstUseOnly) {
  std::vector<std::string> asked;
  LazyWarehouseSettings lazy(Environment({{"SEGMENTSTREAM_WAREHOUSE_ENGINE", "duckdb"},
                                          {"SEGMENTSTREAM_WAREHOUSE_CATALOG", "w.duckdb"},
                                          {"SEGMENTSTREAM_WAREHOUSE_DEFAULT_NAMESPACE", "main"}},
                                         &asked));
  InspectCode(dg::Definitions{{Memtable(Spec("t"))}, warehouse_resources()});
  EXPECT_FALSE(lazy.read());
  EXPECT_TRUE(asked.empty());
  EXPECT_EQ(lazy.Get().default_namespace, "main");
  size_t reads = asked.size();
  lazy.Get();
  EXPECT_EQ(asked.size(), reads);
}

}  // namespace
}  // namespace sluice::sdk
