// The ClickHouse backend against the real server the `clickhouse` CTest fixture starts (Debian's 18.16): capabilities,
// credentials and connection errors, the old-server fallbacks as run, failures and kills in the middle of a write.
#include "warehouse/clickhouse/clickhouse_warehouse.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"
#include "support/clickhouse_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

Date D(const char* text) { return *Date::Parse(text); }

LedgerEntry Entry(std::string asset, std::string run_id) {
  LedgerEntry entry;
  entry.asset = std::move(asset);
  entry.run_id = std::move(run_id);
  return entry;
}

Error ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(Diagnostic{"no error", "no error", {}, "", {}});
}

// Everything an error shows: its code, message, hint and what().
std::string Everything(const Error& error) {
  std::string text = error.what();
  for (const Diagnostic& d : error.diagnostics()) text += "\n" + d.code + "\n" + d.message + "\n" + d.hint;
  return text;
}

bool WaitForFile(const fs::path& file, std::chrono::seconds limit) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (fs::exists(file)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class ClickHouseWarehouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::RequireClickHouseTestServer();
    database_ = testing::UniqueClickHouseDatabase("ch");
    warehouse_ = Open();
    warehouse_->EnsureSchema(database_);
  }
  void TearDown() override {
    if (warehouse_ != nullptr) warehouse_->Execute("DROP DATABASE IF EXISTS " + Quoted(database_));
  }
  std::unique_ptr<Warehouse> Open() { return OpenWarehouse(testing::ClickHouseTestConfig(server_, database_)); }
  static std::string Quoted(const std::string& name) { return sql::QuoteIdentifier(sql::Dialect::kClickHouse, name); }
  std::string Scalar(const std::string& sql) {
    Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "<no row>" : rows.rows[0][0].value_or("NULL");
  }
  std::string Count(const Relation& relation) { return Scalar("SELECT count() FROM " + warehouse_->QualifiedName(relation)); }
  std::string StagingTables(const Relation& relation) {
    return Scalar("SELECT count() FROM system.tables WHERE database = '_sluice' AND startsWith(name, '" +
                  StagingPrefix(relation) + "')");
  }
  int LedgerRows(const Relation& relation) {
    int rows = 0;
    for (const LedgerEntry& entry : warehouse_->ReadLedger()) rows += entry.relation == relation ? 1 : 0;
    return rows;
  }

  testing::ClickHouseTestServer server_;
  std::string database_;
  std::unique_ptr<Warehouse> warehouse_;
};

TEST_F(ClickHouseWarehouseTest, Debian1816LacksEveryProbedFeature) {
  const Capabilities& capabilities = warehouse_->capabilities();
  EXPECT_EQ(capabilities.server_version, "18.16.1");
  EXPECT_FALSE(capabilities.transactions);
  EXPECT_TRUE(capabilities.native_date_partitioning);
  EXPECT_FALSE(capabilities.datetime64);
  EXPECT_FALSE(capabilities.ttl);
  EXPECT_FALSE(capabilities.double_colon_cast);
  EXPECT_FALSE(capabilities.window_functions);
  EXPECT_FALSE(capabilities.is_not_distinct_from);
  EXPECT_FALSE(capabilities.drop_sync);
  EXPECT_FALSE(capabilities.atomic_databases);
  EXPECT_FALSE(capabilities.create_or_replace_view);
  EXPECT_FALSE(capabilities.exchange_tables);
  // The DDL probes name a database that does not exist, and create nothing.
  EXPECT_EQ(Scalar("SELECT count() FROM system.databases WHERE name = '_sluice_capability_probe_absent'"), "0");
}

TEST_F(ClickHouseWarehouseTest, TheOldServerPathRenamesAndDropsWithoutSync) {
  std::vector<std::string> statements;
  warehouse_->ObserveStatements([&](const Relation&, const std::vector<std::string>& sent) {
    statements.insert(statements.end(), sent.begin(), sent.end());
  });
  Relation orders{database_, "orders"};
  warehouse_->ReplaceTable(orders, "SELECT 1 AS id", Entry("o", "r1"));
  warehouse_->ReplaceTable(orders, "SELECT 2 AS id", Entry("o", "r2"));
  warehouse_->ReplaceView({database_, "v"}, "SELECT 1 AS x", Entry("v", "r3"));
  warehouse_->ReplaceView({database_, "v"}, "SELECT 2 AS x", Entry("v", "r4"));
  std::string all;
  for (const std::string& sql : statements) all += sql + "\n";
  EXPECT_EQ(all.find("EXCHANGE"), std::string::npos) << all;
  EXPECT_EQ(all.find(" SYNC"), std::string::npos) << all;
  EXPECT_EQ(all.find("OR REPLACE"), std::string::npos) << all;
  EXPECT_NE(all.find("RENAME TABLE " + Quoted(database_) + ".`orders` TO `_sluice`."), std::string::npos) << all;
  EXPECT_NE(all.find("CREATE VIEW `_sluice`."), std::string::npos) << all;
  EXPECT_EQ(all.find("sluice-test-secret"), std::string::npos);
  EXPECT_EQ(Count(orders), "1");
  EXPECT_EQ(Scalar("SELECT x FROM " + warehouse_->QualifiedName({database_, "v"})), "2");
  EXPECT_EQ(StagingTables(orders), "0");
  EXPECT_EQ(StagingTables({database_, "v"}), "0");
}

TEST_F(ClickHouseWarehouseTest, DateRangeTablesArePartitionedByDay) {
  Relation events{database_, "events"};
  warehouse_->ReplaceDateRange(events, "SELECT toDate('2026-01-01') + number AS d, number AS x FROM numbers(3)", "d",
                               DateWindow{D("2026-01-01"), D("2026-01-04")}, Entry("e", "r1"));
  EXPECT_EQ(Scalar("SELECT partition_key FROM system.tables WHERE database = '" + database_ + "' AND name = 'events'"),
            "d");
  EXPECT_EQ(Scalar("SELECT uniqExact(partition) FROM system.parts WHERE active AND database = '" + database_ +
                   "' AND table = 'events'"),
            "3");
  // Retyping a column to a wider type is fine; to an unrelated one is SLU-WAREHOUSE-013.
  warehouse_->ReplaceDateRange(events, "SELECT toDate('2026-01-02') AS d, toUInt32(7) AS x", "d",
                               DateWindow{D("2026-01-02"), D("2026-01-03")}, Entry("e", "r2"));
  EXPECT_EQ(ErrorOf([&] {
              warehouse_->ReplaceDateRange(events, "SELECT toDate('2026-01-02') AS d, 'seven' AS x", "d",
                                           DateWindow{D("2026-01-02"), D("2026-01-03")}, Entry("e", "r3"));
            }).diagnostics().front().code,
            "SLU-WAREHOUSE-013");
  EXPECT_EQ(ErrorOf([&] {
              warehouse_->ReplaceDateRange(events, "SELECT CAST(NULL AS Nullable(Date)) AS d", "d",
                                           DateWindow{D("2026-01-02"), D("2026-01-03")}, Entry("e", "r4"));
            }).diagnostics().front().code,
            "SLU-WAREHOUSE-014");
  EXPECT_EQ(Count(events), "3");
  EXPECT_EQ(StagingTables(events), "0");
}

TEST_F(ClickHouseWarehouseTest, AWrongPasswordIsRefusedAndNeverShown) {
  WarehouseConfig config = testing::ClickHouseTestConfig(server_, database_);
  config.connection["password"] = "wrong-horse-battery";
  Error error = ErrorOf([&] { OpenWarehouse(config); });
  EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-030");
  EXPECT_NE(error.diagnostics().front().message.find("default"), std::string::npos);
  EXPECT_EQ(Everything(error).find("wrong-horse-battery"), std::string::npos) << Everything(error);
}

TEST_F(ClickHouseWarehouseTest, DriverErrorsNeverShowThePasswordEvenWhenTheServerEchoesIt) {
  // The server quotes the failing part of a statement: here it holds the password, which must be masked.
  Error syntax = ErrorOf([&] { warehouse_->Execute("SELECT 1 FROM FROM " + server_.password); });
  EXPECT_EQ(syntax.diagnostics().front().code, "SLU-WAREHOUSE-022");
  EXPECT_EQ(Everything(syntax).find(server_.password), std::string::npos) << Everything(syntax);
  Error missing = ErrorOf([&] { warehouse_->Query("SELECT * FROM " + Quoted(database_) + ".`absent`"); });
  EXPECT_EQ(missing.diagnostics().front().code, "SLU-WAREHOUSE-021");
  EXPECT_EQ(Everything(missing).find(server_.password), std::string::npos);
}

TEST_F(ClickHouseWarehouseTest, ConnectionRefusedNamesHostAndPort) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  int port = ntohs(address.sin_port);
  ::close(fd);  // nothing listens on it now
  WarehouseConfig config = testing::ClickHouseTestConfig(server_, database_);
  config.connection["port"] = std::to_string(port);
  Error error = ErrorOf([&] { OpenWarehouse(config); });
  EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-031");
  EXPECT_NE(error.diagnostics().front().message.find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << error.diagnostics().front().message;
  EXPECT_NE(error.diagnostics().front().hint.find("port"), std::string::npos);
  EXPECT_EQ(Everything(error).find(server_.password), std::string::npos);
}

TEST_F(ClickHouseWarehouseTest, AFailureMidWriteLeavesTheOldDataAndNoStagingTable) {
  Relation orders{database_, "orders"};
  warehouse_->ReplaceTable(orders, "SELECT number AS id FROM numbers(3)", Entry("o", "r1"));
  Error error = ErrorOf([&] {
    warehouse_->ReplaceTable(orders, "SELECT throwIf(number = 5) AS id FROM numbers(10)", Entry("o", "r2"));
  });
  EXPECT_EQ(error.diagnostics().front().code, "SLU-WAREHOUSE-020");
  EXPECT_NE(error.diagnostics().front().message.find(orders.ToString()), std::string::npos);
  EXPECT_EQ(Count(orders), "3");
  EXPECT_EQ(StagingTables(orders), "0");
  EXPECT_EQ(LedgerRows(orders), 1);
}

TEST_F(ClickHouseWarehouseTest, ASyntaxErrorInTheSelectIsASqlErrorAtItsOffset) {
  const std::string select = "SELECT 1 AS id,, 2";
  try {
    warehouse_->ReplaceTable({database_, "t"}, select, Entry("t", "r"));
    FAIL() << "expected an error";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-022");
    EXPECT_EQ(e.offset(), select.find(",,") + 1);
  }
}

TEST_F(ClickHouseWarehouseTest, InterruptKillsTheStatementInFlightAndRefusesLaterOnes) {
  std::string code;
  std::thread query([&] {
    code = ErrorOf([&] {
             warehouse_->Query("SELECT sleepEachRow(1) FROM numbers(120) SETTINGS max_block_size = 1");
           }).diagnostics().front().code;
  });
  auto other = Open();
  while (other->Query("SELECT count() FROM system.processes WHERE query LIKE '%sleepEachRow(1)%numbers(120)%'"
                      " AND query NOT LIKE '%system.processes%'").rows[0][0] == std::optional<std::string>("0")) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  warehouse_->Interrupt();
  query.join();
  EXPECT_EQ(code, "SLU-WAREHOUSE-008");
  EXPECT_EQ(ErrorOf([&] { warehouse_->Query("SELECT 1"); }).diagnostics().front().code, "SLU-WAREHOUSE-008");
  warehouse_ = std::move(other);  // for TearDown
}

// Forks a child that opens the warehouse and runs `write` with SLUICE_TEST_PAUSE_AT=`point`, and SIGKILLs it there.
void KillAt(const testing::ClickHouseTestServer& server, const std::string& database, const std::string& point,
            const std::function<void(Warehouse&)>& write) {
  fs::path marker = fs::temp_directory_path() / (database + "_" + point + ".paused");
  fs::remove(marker);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("SLUICE_TEST_PAUSE_AT", point.c_str(), 1);
    ::setenv("SLUICE_TEST_PAUSE_MARKER", marker.c_str(), 1);
    try {
      auto warehouse = OpenWarehouse(testing::ClickHouseTestConfig(server, database));
      write(*warehouse);
    } catch (const Error&) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  bool paused = WaitForFile(marker, std::chrono::seconds(60));
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  fs::remove(marker);
  ASSERT_TRUE(paused);
  EXPECT_TRUE(WIFSIGNALED(status));
}

TEST_F(ClickHouseWarehouseTest, AKillBeforeTheSwapLeavesTheOldDataAndTheNextWriteCleansUp) {
  Relation orders{database_, "orders"};
  Relation events{database_, "events"};
  warehouse_->ReplaceTable(orders, "SELECT number AS id FROM numbers(3)", Entry("o", "old"));
  warehouse_->ReplaceDateRange(events, "SELECT toDate('2026-01-01') + number AS d FROM numbers(2)", "d",
                               DateWindow{D("2026-01-01"), D("2026-01-03")}, Entry("e", "old"));
  KillAt(server_, database_, "after_write_before_commit", [&](Warehouse& w) {
    w.ReplaceTable(orders, "SELECT number AS id FROM numbers(1000)", Entry("o", "new"));
  });
  KillAt(server_, database_, "after_write_before_commit", [&](Warehouse& w) {
    w.ReplaceDateRange(events, "SELECT toDate('2026-01-01') AS d FROM numbers(50)", "d",
                       DateWindow{D("2026-01-01"), D("2026-01-03")}, Entry("e", "new"));
  });
  EXPECT_EQ(Count(orders), "3");
  EXPECT_EQ(Count(events), "2");
  EXPECT_EQ(LedgerRows(orders), 1);
  EXPECT_EQ(LedgerRows(events), 1);
  EXPECT_NE(StagingTables(orders), "0");  // left behind by the killed writes
  EXPECT_NE(StagingTables(events), "0");

  warehouse_->ReplaceTable(orders, "SELECT number AS id FROM numbers(5)", Entry("o", "next"));
  warehouse_->ReplaceDateRange(events, "SELECT toDate('2026-01-02') AS d", "d",
                               DateWindow{D("2026-01-02"), D("2026-01-03")}, Entry("e", "next"));
  EXPECT_EQ(Count(orders), "5");
  EXPECT_EQ(Count(events), "2");
  EXPECT_EQ(StagingTables(orders), "0");
  EXPECT_EQ(StagingTables(events), "0");
}

// Two processes may write one relation at once: a write drops only the staging tables whose writer is gone.
TEST_F(ClickHouseWarehouseTest, AWriteDropsOnlyTheStagingTablesOfWritersThatAreGone) {
  Relation orders{database_, "orders"};
  warehouse_->ReplaceTable(orders, "SELECT number AS id FROM numbers(3)", Entry("o", "old"));
  pid_t gone = ::fork();
  ASSERT_GE(gone, 0);
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, nullptr, 0), gone);
  const std::string prefix = StagingPrefix(orders);
  const std::vector<std::string> kept = {
      prefix + StagingOwner(::getppid()) + "_orders_r1_0_new",  // a live process of this host
      prefix + "0000beef_12_orders_r2_0_new",                   // another host's, made just now
      prefix + "orders_r3_4_new",                               // no owner in the name, made just now
  };
  const std::string dropped = prefix + StagingOwner(gone) + "_orders_r4_0_new";  // a process that ended
  for (const std::string& name : kept) {
    warehouse_->Execute("CREATE TABLE `_sluice`." + Quoted(name) + " (x UInt8) ENGINE = MergeTree() ORDER BY tuple()");
  }
  warehouse_->Execute("CREATE TABLE `_sluice`." + Quoted(dropped) + " (x UInt8) ENGINE = MergeTree() ORDER BY tuple()");
  EXPECT_EQ(StagingTables(orders), "4");

  warehouse_->ReplaceTable(orders, "SELECT number AS id FROM numbers(5)", Entry("o", "next"));
  EXPECT_EQ(Count(orders), "5");
  EXPECT_EQ(StagingTables(orders), "3");
  EXPECT_EQ(Scalar("SELECT count() FROM system.tables WHERE database = '_sluice' AND name = '" + dropped + "'"), "0");
  for (const std::string& name : kept) warehouse_->Execute("DROP TABLE `_sluice`." + Quoted(name));
}

TEST_F(ClickHouseWarehouseTest, AKillAfterTheSwapLeavesTheNewDataWithoutItsLedgerRow) {
  Relation orders{database_, "orders"};
  warehouse_->ReplaceTable(orders, "SELECT number AS id FROM numbers(3)", Entry("o", "old"));
  KillAt(server_, database_, "after_swap_before_ledger", [&](Warehouse& w) {
    w.ReplaceTable(orders, "SELECT number AS id FROM numbers(1000)", Entry("o", "new"));
  });
  EXPECT_EQ(Count(orders), "1000");
  std::vector<LedgerEntry> ledger = warehouse_->ReadLedger();
  int rows = 0;
  for (const LedgerEntry& entry : ledger) {
    if (entry.relation == orders) {
      ++rows;
      EXPECT_EQ(entry.run_id, "old");
    }
  }
  EXPECT_EQ(rows, 1);
  warehouse_->ReplaceTable(orders, "SELECT 1 AS id", Entry("o", "next"));
  EXPECT_EQ(StagingTables(orders), "0");
}

}  // namespace
}  // namespace sluice
