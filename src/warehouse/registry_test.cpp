#include "warehouse/registry.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "core/diagnostic.hpp"
#include "warehouse/duckdb/duckdb_warehouse.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

class RegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sluice-registry-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(RegistryTest, DuckDbDefaultsToTheTargetFileUnderDotSluice) {
  WarehouseConfig config{"duckdb", {}, dir_, "dev", AccessMode::kReadWrite, nullptr};
  auto warehouse = OpenWarehouse(config);
  auto* duckdb = dynamic_cast<DuckDbWarehouse*>(warehouse.get());
  ASSERT_NE(duckdb, nullptr);
  EXPECT_EQ(duckdb->file(), dir_ / ".sluice" / "dev.duckdb");
  EXPECT_TRUE(fs::exists(dir_ / ".sluice" / "dev.duckdb"));
}

TEST_F(RegistryTest, DuckDbPathResolvesAgainstTheProject) {
  WarehouseConfig config{"duckdb", {{"path", "data/wh.duckdb"}}, dir_,
                         "dev",    AccessMode::kReadWrite,       nullptr};
  auto warehouse = OpenWarehouse(config);
  EXPECT_EQ(dynamic_cast<DuckDbWarehouse&>(*warehouse).file(), dir_ / "data" / "wh.duckdb");

  WarehouseConfig absolute{
      "duckdb", {{"path", (dir_ / "abs.duckdb").string()}}, "/elsewhere", "dev", AccessMode::kReadWrite,
      nullptr};
  EXPECT_EQ(dynamic_cast<DuckDbWarehouse&>(*OpenWarehouse(absolute)).file(), dir_ / "abs.duckdb");
}

TEST_F(RegistryTest, ReadOnlyModeNeedsAnExistingFile) {
  WarehouseConfig config{"duckdb", {}, dir_, "prod", AccessMode::kReadOnly, nullptr};
  try {
    OpenWarehouse(config);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-003");
  }
}

TEST_F(RegistryTest, OtherAdaptersAreNotSupportedYet) {
  for (std::string adapter : {"oracle", "snowflake"}) {
    WarehouseConfig config{adapter, {}, dir_, "dev", AccessMode::kReadWrite, nullptr};
    try {
      OpenWarehouse(config);
      FAIL() << "expected an error for " << adapter;
    } catch (const Error& e) {
      EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-001");
      EXPECT_NE(e.diagnostics().front().message.find(adapter), std::string::npos);
      EXPECT_NE(e.diagnostics().front().hint.find("duckdb"), std::string::npos);
    }
  }
  EXPECT_EQ(SupportedAdapters(), (std::vector<std::string>{"bigquery", "clickhouse", "duckdb", "postgres"}));
}

TEST_F(RegistryTest, BigQueryWithoutAProjectIsRefusedBeforeConnecting) {
  WarehouseConfig config{"bigquery", {{"location", "EU"}}, dir_, "dev", AccessMode::kReadWrite, {}};
  try {
    OpenWarehouse(config);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-057");
    EXPECT_NE(e.diagnostics().front().message.find("project"), std::string::npos);
  }
}

TEST_F(RegistryTest, ClickHouseWithANonNumericPortIsRefusedBeforeConnecting) {
  WarehouseConfig config{"clickhouse", {{"port", "http"}, {"password", "p4ssw0rd"}}, dir_, "dev",
                         AccessMode::kReadWrite, {}};
  try {
    OpenWarehouse(config);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-031");
    EXPECT_EQ(std::string(e.what()).find("p4ssw0rd"), std::string::npos);
  }
}

TEST_F(RegistryTest, PostgresWithANonNumericPortIsRefusedBeforeConnecting) {
  WarehouseConfig config{"postgres", {{"port", "pg"}, {"password", "p4ssw0rd"}}, dir_, "dev",
                         AccessMode::kReadWrite, {}};
  try {
    OpenWarehouse(config);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-031");
    EXPECT_EQ(std::string(e.what()).find("p4ssw0rd"), std::string::npos);
  }
}

}  // namespace
}  // namespace sluice
