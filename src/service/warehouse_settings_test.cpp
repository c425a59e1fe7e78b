// A code program's warehouse from SEGMENTSTREAM_WAREHOUSE_*: every engine, the errors, and that it is read lazily.
#include <gtest/gtest.h>

#include <map>

#include "sdk/sdk_definitions.hpp"
#include "service/warehouse_settings.hpp"
#include "sluice/dg.hpp"

namespace sluice::service {
namespace {

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
  dg::AssetSpec spec;
  spec.key = dg::AssetKey("t");
  spec.io_manager_key = WAREHOUSE_IO_MANAGER_KEY;
  sdk::InspectCode(dg::Definitions{
      {dg::asset(std::move(spec), [] { return ibis::memtable({{{"n", int64_t{1}}}}, {{"n", "int64"}}); })},
      warehouse_resources()});
  EXPECT_FALSE(lazy.read());
  EXPECT_TRUE(asked.empty());
  EXPECT_EQ(lazy.Get().default_namespace, "main");
  size_t reads = asked.size();
  lazy.Get();
  EXPECT_EQ(asked.size(), reads);
}

}  // namespace
}  // namespace sluice::service
