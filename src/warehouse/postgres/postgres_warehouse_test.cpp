// PostgreSQL specifics on the 15 test server (a fresh database per test): daily partitions made in the write's
// transaction, atomic windows under a concurrent reader, dependent views kept, Interrupt, error translation with
// positions, hostile names, partition name length.
#include "warehouse/postgres/postgres_warehouse.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/diagnostic.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

Date D(const char* text) { return *Date::Parse(text); }

LedgerEntry Entry(std::string run_id) {
  LedgerEntry entry;
  entry.asset = "s.events";
  entry.run_id = std::move(run_id);
  entry.sql_hash = "h";
  return entry;
}

std::string Rows(const std::vector<std::pair<int, std::string>>& rows) {
  std::string sql;
  for (const auto& [id, day] : rows) {
    sql += (sql.empty() ? "" : " UNION ALL ") + std::string("SELECT CAST(") + std::to_string(id) +
           " AS BIGINT) AS id, DATE '" + day + "' AS d";
  }
  return sql;
}

class PostgresWarehouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = testing::RequirePostgresTestServer();
    database_ = testing::CreatePostgresTestDatabase(server_, "pgw");
    warehouse_ = OpenWarehouse(testing::PostgresTestConfig(server_, database_));
    warehouse_->EnsureSchema("s");
  }
  std::unique_ptr<Warehouse> Another() { return OpenWarehouse(testing::PostgresTestConfig(server_, database_)); }
  std::string Scalar(const std::string& sql) {
    sluice::Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "<no row>" : rows.rows[0][0].value_or("NULL");
  }
  std::string Partitions(const std::string& table) {
    return Scalar(
        "SELECT string_agg(c.relname, ',' ORDER BY c.relname) FROM pg_inherits i JOIN pg_class c ON c.oid = "
        "i.inhrelid WHERE i.inhparent = '\"s\".\"" +
        table + "\"'::regclass");
  }

  testing::PostgresTestServer server_;
  std::string database_;
  std::unique_ptr<Warehouse> warehouse_;
  Relation events_{"s", "events"};
};

TEST_F(PostgresWarehouseTest, OpensWithCapabilitiesFromTheServer) {
  const Capabilities& capabilities = warehouse_->capabilities();
  EXPECT_TRUE(capabilities.transactions);
  EXPECT_TRUE(capabilities.create_or_replace_view);
  EXPECT_TRUE(capabilities.native_date_partitioning);
  EXPECT_TRUE(capabilities.window_functions);
  EXPECT_EQ(capabilities.server_version.rfind("15", 0), 0u) << capabilities.server_version;
  EXPECT_EQ(warehouse_->dialect(), sql::Dialect::kPostgres);
  EXPECT_EQ(warehouse_->QualifiedName(events_), "\"s\".\"events\"");
}

TEST_F(PostgresWarehouseTest, DateRangeWritesMakeOnePartitionPerDay) {
  warehouse_->ReplaceDateRange(events_, Rows({{1, "2026-01-01"}, {2, "2026-01-02"}, {3, "2026-01-02"}}), "d",
                               DateWindow{D("2026-01-01"), D("2026-01-05")}, Entry("r1"));
  EXPECT_EQ(Scalar("SELECT pg_get_partkeydef('\"s\".\"events\"'::regclass)"), "RANGE (d)");
  EXPECT_EQ(Partitions("events"), "events_p20260101,events_p20260102");
  EXPECT_EQ(Scalar("SELECT count(*) FROM s.events_p20260102"), "2");
  warehouse_->ReplaceDateRange(events_, Rows({{4, "2026-01-02"}, {5, "2026-01-03"}}), "d",
                               DateWindow{D("2026-01-02"), D("2026-01-04")}, Entry("r2"));
  EXPECT_EQ(Partitions("events"), "events_p20260101,events_p20260102,events_p20260103");
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM s.events"), "1,4,5");
  // Partitions are not listed as relations.
  std::vector<TableInfo> relations = warehouse_->ListRelations();
  ASSERT_EQ(relations.size(), 1u);
  EXPECT_EQ(relations[0].relation, events_);
}

TEST_F(PostgresWarehouseTest, AFailedWriteLeavesNoNewPartitionAndTheOldRows) {
  warehouse_->ReplaceDateRange(events_, Rows({{1, "2026-01-01"}}), "d", DateWindow{D("2026-01-01"), D("2026-01-02")},
                               Entry("r1"));
  // The new day's partition is created, then the INSERT fails on a constraint of the table: all is rolled back.
  warehouse_->Execute("ALTER TABLE s.events ADD CONSTRAINT positive CHECK (id > 0)");
  try {
    warehouse_->ReplaceDateRange(events_, Rows({{2, "2026-01-01"}, {-3, "2026-01-02"}}), "d",
                                 DateWindow{D("2026-01-01"), D("2026-01-03")}, Entry("r2"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.diagnostics().front().message.find("positive"), std::string::npos) << e.what();
  }
  EXPECT_EQ(Partitions("events"), "events_p20260101");
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',') FROM s.events"), "1");
  EXPECT_EQ(warehouse_->ReadLedger().size(), 1u);
}

TEST_F(PostgresWarehouseTest, AConcurrentReaderNeverSeesAPartialWindow) {
  // Each write replaces the window [01, 04) with 300 rows whose ids all carry the write's generation.
  auto generation = [](int g) {
    return "SELECT CAST(" + std::to_string(g) +
           " AS BIGINT) AS id, DATE '2026-01-01' + (n % 3) AS d FROM "
           "generate_series(1, 300) AS n";
  };
  warehouse_->ReplaceDateRange(events_, generation(0), "d", DateWindow{D("2026-01-01"), D("2026-01-04")}, Entry("g0"));
  std::atomic<bool> done{false};
  std::vector<std::string> seen;
  std::thread reader([&] {
    std::unique_ptr<Warehouse> other = Another();
    while (!done) {
      sluice::Rows rows = other->Query("SELECT count(*), count(DISTINCT id) FROM s.events");
      seen.push_back(rows.rows[0][0].value_or("") + "/" + rows.rows[0][1].value_or(""));
    }
  });
  for (int g = 1; g <= 15; ++g) {
    warehouse_->ReplaceDateRange(events_, generation(g), "d", DateWindow{D("2026-01-01"), D("2026-01-04")},
                                 Entry("g" + std::to_string(g)));
  }
  done = true;
  reader.join();
  ASSERT_FALSE(seen.empty());
  for (const std::string& s : seen) EXPECT_EQ(s, "300/1");
}

TEST_F(PostgresWarehouseTest, ReplaceTableKeepsDependentViews) {
  Relation orders{"s", "orders"};
  warehouse_->ReplaceTable(orders, Rows({{1, "2026-01-01"}}), Entry("r1"));
  warehouse_->Execute("CREATE VIEW s.recent AS SELECT id FROM s.orders; CREATE VIEW s.top AS SELECT * FROM s.recent");
  warehouse_->ReplaceTable(orders, Rows({{7, "2026-01-02"}, {8, "2026-01-02"}}), Entry("r2"));
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM s.top"), "7,8");
  // A full refresh of a date-range table keeps them too.
  warehouse_->ReplaceDateRange(orders, Rows({{9, "2026-01-03"}}), "d", DateWindow{D("2026-01-03"), D("2026-01-04")},
                               Entry("r3"), Warehouse::DateRangeMode::kWholeTable);
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',') FROM s.top"), "9");
  // A new table without the column a view reads fails the write and keeps everything.
  try {
    warehouse_->ReplaceTable(orders, "SELECT DATE '2026-01-01' AS d", Entry("r4"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-042") << e.what();
    EXPECT_NE(e.diagnostics().front().message.find("s.recent"), std::string::npos);
  }
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',') FROM s.top"), "9");
}

TEST_F(PostgresWarehouseTest, ReplaceViewChangesColumnsKeepingDependents) {
  Relation view{"s", "v"};
  warehouse_->ReplaceView(view, "SELECT 1 AS a, 2 AS b", Entry("r1"));
  warehouse_->Execute("CREATE VIEW s.w AS SELECT a FROM s.v");
  warehouse_->ReplaceView(view, "SELECT 'x' AS a", Entry("r2"));  // retyped, b dropped: not OR REPLACE-able
  EXPECT_EQ(Scalar("SELECT a FROM s.w"), "x");
}

TEST_F(PostgresWarehouseTest, ErrorsInTheSelectPointIntoIt) {
  std::string select = "SELECT 1 AS id,\n  no_such_column AS x";
  try {
    warehouse_->ReplaceTable(Relation{"s", "t"}, select, Entry("r1"));
    FAIL() << "no error";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-024");
    EXPECT_EQ(e.offset(), select.find("no_such_column"));
  }
  std::string bad = "SELECT 'é' AS a, FROM x";  // a multi-byte character before the error
  try {
    warehouse_->ReplaceDateRange(events_, bad, "d", DateWindow{D("2026-01-01"), D("2026-01-02")}, Entry("r2"));
    FAIL() << "no error";
  } catch (const SqlError& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-022");
    EXPECT_EQ(e.offset(), bad.find("FROM"));
  }
  auto code = [&](const std::string& select_sql) {
    try {
      warehouse_->ReplaceTable(Relation{"s", "t"}, select_sql, Entry("r"));
    } catch (const Error& e) {
      return e.diagnostics().front().code;
    }
    return std::string("no error");
  };
  EXPECT_EQ(code("SELECT * FROM s.missing"), "SLU-WAREHOUSE-021");
  EXPECT_EQ(code("SELECT CAST('x' AS INT) AS a"), "SLU-WAREHOUSE-025");
}

TEST_F(PostgresWarehouseTest, ConnectionErrorsNeverShowThePassword) {
  WarehouseConfig config = testing::PostgresTestConfig(server_, database_);
  config.connection["password"] = "wrong-secret-123";
  try {
    OpenWarehouse(config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-030");
    EXPECT_EQ(std::string(e.what()).find("wrong-secret-123"), std::string::npos);
    EXPECT_EQ(e.diagnostics().front().message.find("wrong-secret-123"), std::string::npos);
  }
  config = testing::PostgresTestConfig(server_, "no_such_database");
  try {
    OpenWarehouse(config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-040") << e.diagnostics().front().message;
    EXPECT_EQ(e.diagnostics().front().message.find(server_.password), std::string::npos);
  }
  config = testing::PostgresTestConfig(server_, database_);
  config.connection["port"] = "1";
  try {
    OpenWarehouse(config);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-031");
    EXPECT_EQ(e.diagnostics().front().message.find(server_.password), std::string::npos);
  }
}

TEST_F(PostgresWarehouseTest, InterruptCancelsTheRunningWriteAndLaterOnes) {
  warehouse_->ReplaceTable(Relation{"s", "t"}, "SELECT 1 AS a", Entry("r1"));
  std::string code;
  std::thread writer([&] {
    try {
      warehouse_->ReplaceTable(Relation{"s", "t"}, "SELECT 2 AS a FROM pg_sleep(30)", Entry("r2"));
    } catch (const Error& e) {
      code = e.diagnostics().front().code;
    }
  });
  std::unique_ptr<Warehouse> other = Another();
  for (int i = 0; i < 200 && other->Query("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%pg_sleep(30)%' "
                                          "AND pid <> pg_backend_pid()")
                                     .rows[0][0] == "0";
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto begin = std::chrono::steady_clock::now();
  warehouse_->Interrupt();
  writer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
  EXPECT_EQ(code, "SLU-WAREHOUSE-008");
  EXPECT_EQ(other->Query("SELECT a FROM s.t").rows[0][0], "1");
  try {
    warehouse_->Query("SELECT 1");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-008");
  }
}

TEST_F(PostgresWarehouseTest, HostileNamesAreQuotedAndOverlongOnesRefused) {
  Relation hostile{"s\"; DROP SCHEMA s; --", "t\"x'y"};
  warehouse_->EnsureSchema(hostile.name_space);
  warehouse_->ReplaceTable(hostile, "SELECT 1 AS \"a\"\"b\"", Entry("r1"));
  warehouse_->ReplaceDateRange(Relation{hostile.name_space, "d'ay"}, Rows({{1, "2026-01-01"}}), "d",
                               DateWindow{D("2026-01-01"), D("2026-01-02")}, Entry("r2"));
  std::optional<TableInfo> info = warehouse_->Describe(hostile);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->columns[0].name, "a\"b");
  EXPECT_TRUE(warehouse_->Describe(events_) || true);
  EXPECT_EQ(Scalar("SELECT count(*) FROM pg_namespace WHERE nspname = 's'"), "1");
  try {
    warehouse_->ReplaceTable(Relation{"s", std::string(64, 'x')}, "SELECT 1 AS a", Entry("r3"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-WAREHOUSE-041");
  }
}

TEST_F(PostgresWarehouseTest, LongTablesGetShortDistinctPartitionNames) {
  std::string a = std::string(60, 'a') + "_one";
  std::string b = std::string(60, 'a') + "_two";
  a = a.substr(0, 63);
  b = b.substr(0, 62);
  EXPECT_LE(PostgresPartitionName(a, D("2026-01-01")).size(), 63u);
  EXPECT_NE(PostgresPartitionName(a, D("2026-01-01")), PostgresPartitionName(b, D("2026-01-01")));
  EXPECT_EQ(PostgresPartitionName("events", D("2026-12-31")), "events_p20261231");
  std::string multibyte = std::string(50, 'a') + "ééééé";  // 60 bytes: the cut falls inside a character
  std::string name = PostgresPartitionName(multibyte, D("2026-01-01"));
  EXPECT_LE(name.size(), 63u);
  for (const std::string& table : {a, b, multibyte}) {
    warehouse_->ReplaceDateRange(Relation{"s", table}, Rows({{1, "2026-01-01"}, {2, "2026-01-02"}}), "d",
                                 DateWindow{D("2026-01-01"), D("2026-01-03")}, Entry("r"));
    warehouse_->ReplaceDateRange(Relation{"s", table}, Rows({{3, "2026-01-02"}}), "d",
                                 DateWindow{D("2026-01-02"), D("2026-01-03")}, Entry("r"));
    EXPECT_EQ(Scalar("SELECT count(*) FROM \"s\".\"" + table + "\""), "2");
  }
}

TEST_F(PostgresWarehouseTest, AnUnpartitionedTableIsWrittenByWindowAndAFullRefreshPartitionsIt) {
  warehouse_->ReplaceTable(events_, Rows({{1, "2026-01-01"}, {2, "2026-01-02"}}), Entry("r1"));
  warehouse_->ReplaceDateRange(events_, Rows({{3, "2026-01-02"}}), "d", DateWindow{D("2026-01-02"), D("2026-01-03")},
                               Entry("r2"));
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',' ORDER BY id) FROM s.events"), "1,3");
  EXPECT_EQ(Scalar("SELECT pg_get_partkeydef('s.events'::regclass)"), "NULL");
  warehouse_->ReplaceDateRange(events_, Rows({{4, "2026-01-02"}}), "d", DateWindow{D("2026-01-02"), D("2026-01-03")},
                               Entry("r3"), Warehouse::DateRangeMode::kWholeTable);
  EXPECT_EQ(Scalar("SELECT pg_get_partkeydef('s.events'::regclass)"), "RANGE (d)");
  EXPECT_EQ(Scalar("SELECT string_agg(id::text, ',') FROM s.events"), "4");
}

TEST_F(PostgresWarehouseTest, ConnectionsAreReusedWithoutTheCallersSessionState) {
  std::string pid = Scalar("SELECT pg_backend_pid()");
  warehouse_->Execute("SET search_path TO nowhere; CREATE TEMP TABLE scratch (a INT)");
  EXPECT_EQ(Scalar("SELECT pg_backend_pid()"), pid);
  EXPECT_EQ(Scalar("SELECT current_setting('search_path')"), "\"$user\", public");
  EXPECT_EQ(Scalar("SELECT count(*) FROM pg_class WHERE relname = 'scratch'"), "0");
  EXPECT_EQ(Scalar("SELECT current_setting('TimeZone')"), "UTC");
  // A transaction the caller left open is not carried into the next call: that connection is closed.
  warehouse_->Execute("BEGIN; CREATE TABLE s.left_open (a INT)");
  EXPECT_NE(Scalar("SELECT pg_backend_pid()"), pid);
  EXPECT_FALSE(warehouse_->Describe(Relation{"s", "left_open"}));
}

TEST_F(PostgresWarehouseTest, ConcurrentFirstWritesFromSeveralOpensAllSucceed) {
  // Fresh opens, as separate processes would be: each creates the schema and the ledger on its first write.
  std::vector<std::unique_ptr<Warehouse>> opens;
  for (int i = 0; i < 3; ++i) opens.push_back(Another());
  std::vector<std::thread> writers;
  std::atomic<int> failures{0};
  for (int i = 0; i < 6; ++i) {
    writers.emplace_back([&, i] {
      try {
        Warehouse& warehouse = *opens[static_cast<size_t>(i % 3)];
        Relation relation{"fresh", "t" + std::to_string(i)};
        if (i % 2 == 0) {
          warehouse.ReplaceTable(relation, Rows({{i, "2026-01-01"}}), Entry("r"));
        } else {
          warehouse.ReplaceDateRange(relation, Rows({{i, "2026-01-01"}, {i, "2026-01-02"}}), "d",
                                     DateWindow{D("2026-01-01"), D("2026-01-03")}, Entry("r"));
        }
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
        ++failures;
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(warehouse_->ReadLedger().size(), 6u);
  EXPECT_EQ(Scalar("SELECT count(*) FROM pg_tables WHERE schemaname = 'fresh' AND tablename NOT LIKE '%\\_p2026%'"),
            "6");
}

}  // namespace
}  // namespace sluice
