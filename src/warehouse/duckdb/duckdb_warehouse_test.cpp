// Integration tests of the DuckDB backend on real database files, each test in its own temporary folder.
#include "warehouse/duckdb/duckdb_warehouse.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <functional>
#include <thread>

#include "core/diagnostic.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

Date D(const char* text) { return *Date::Parse(text); }

std::string CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front().code;
  }
  return "no error";
}

Error ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  return Error(Diagnostic{"no error", "no error", {}, "", {}});
}

std::string MessageOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front().message;
  }
  return "no error";
}

LedgerEntry Entry(std::string asset, std::string run_id, std::optional<DateWindow> window = std::nullopt) {
  LedgerEntry entry;
  entry.asset = std::move(asset);
  entry.run_id = std::move(run_id);
  entry.window = window;
  entry.sql_hash = "hash-" + entry.run_id;
  return entry;
}

bool WaitForFile(const fs::path& path, std::chrono::seconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

class DuckDbWarehouseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "sluice-warehouse-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    file_ = dir_ / "nested" / "dev.duckdb";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::unique_ptr<DuckDbWarehouse> OpenWritable() { return DuckDbWarehouse::Open(file_, false, {}); }

  // All rows of `relation` as text, ordered by every column.
  static std::vector<std::vector<std::optional<std::string>>> Contents(Warehouse& warehouse,
                                                                       const std::string& relation) {
    return warehouse.Query("SELECT * FROM " + relation + " ORDER BY ALL").rows;
  }
  static std::string Scalar(Warehouse& warehouse, const std::string& sql) {
    return warehouse.Query(sql).rows.at(0).at(0).value_or("NULL");
  }

  fs::path dir_;
  fs::path file_;
};

TEST_F(DuckDbWarehouseTest, ReplaceTableCreatesThenReplacesAndRecordsTheLedger) {
  auto warehouse = OpenWritable();
  EXPECT_TRUE(warehouse->capabilities().transactions);
  EXPECT_TRUE(warehouse->capabilities().create_or_replace_view);
  EXPECT_FALSE(warehouse->capabilities().exchange_tables);
  EXPECT_FALSE(warehouse->capabilities().native_date_partitioning);
  EXPECT_TRUE(warehouse->capabilities().double_colon_cast);
  EXPECT_TRUE(warehouse->capabilities().window_functions);
  EXPECT_FALSE(warehouse->capabilities().datetime64);
  EXPECT_FALSE(warehouse->capabilities().is_not_distinct_from);
  EXPECT_EQ(warehouse->capabilities().server_version.rfind("v1.", 0), 0u) << warehouse->capabilities().server_version;
  EXPECT_TRUE(warehouse->ReadLedger().empty());

  warehouse->EnsureSchema("gold");
  Relation revenue{"gold", "revenue"};
  WriteResult first =
      warehouse->ReplaceTable(revenue, "SELECT range AS id FROM range(3)", Entry("gold.revenue", "r1"));
  EXPECT_EQ(first.rows_written, 3);
  WriteResult second = warehouse->ReplaceTable(
      revenue, "SELECT 'x' AS name, 10 AS amount; -- trailing comment", Entry("gold.revenue", "r2"));
  EXPECT_EQ(second.rows_written, 1);

  Rows rows = warehouse->Query("SELECT * FROM gold.revenue");
  EXPECT_EQ(rows.columns, (std::vector<std::string>{"name", "amount"}));
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.rows[0][0], "x");
  EXPECT_EQ(rows.rows[0][1], "10");

  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[0].asset, "gold.revenue");
  EXPECT_EQ(ledger[0].run_id, "r1");
  EXPECT_EQ(ledger[0].row_count, 3);
  EXPECT_EQ(ledger[0].sql_hash, "hash-r1");
  EXPECT_EQ(ledger[0].relation, revenue);
  EXPECT_FALSE(ledger[0].window.has_value());
  EXPECT_EQ(ledger[1].run_id, "r2");
  EXPECT_EQ(ledger[1].row_count, 1);
  ASSERT_EQ(ledger[1].written_at.size(), std::string("2026-01-01T00:00:00.000Z").size());
  EXPECT_EQ(ledger[1].written_at[10], 'T');
  EXPECT_EQ(ledger[1].written_at.back(), 'Z');
}

TEST_F(DuckDbWarehouseTest, AnErrorInTheSelectCarriesItsOffsetInTheSelect) {
  auto warehouse = OpenWritable();
  warehouse->ReplaceTable(Relation{"main", "source"}, "SELECT 'x' AS s", Entry("main.source", "r0"));
  auto offset_of = [&](const std::function<void()>& write) -> std::optional<size_t> {
    try {
      write();
    } catch (const SqlError& error) {
      return error.offset();
    } catch (const Error&) {
      return std::nullopt;
    }
    return std::nullopt;
  };
  const std::string binder = "SELECT s,\n  nope FROM main.source;";
  EXPECT_EQ(offset_of([&] { warehouse->ReplaceTable(Relation{"main", "t"}, binder, Entry("main.t", "r1")); }),
            binder.find("nope"));
  EXPECT_EQ(offset_of([&] { warehouse->ReplaceView(Relation{"main", "v"}, binder, Entry("main.v", "r1")); }),
            binder.find("nope"));
  const std::string conversion = "SELECT CAST(s AS INTEGER) AS n FROM main.source";
  EXPECT_EQ(offset_of([&] {
              warehouse->ReplaceDateRange(Relation{"main", "d"}, conversion, "n",
                                          DateWindow{D("2026-01-01"), D("2026-01-02")}, Entry("main.d", "r1"));
            }),
            conversion.find("CAST"));
  EXPECT_EQ(CodeOf([&] { warehouse->ReplaceTable(Relation{"main", "t"}, conversion, Entry("main.t", "r1")); }),
            "SLU-WAREHOUSE-025");
  // The message reads as DuckDB prints it, not as JSON.
  EXPECT_EQ(MessageOf([&] { warehouse->ReplaceTable(Relation{"main", "t"}, binder, Entry("main.t", "r1")); })
                .find("writing main.t failed: Binder Error: Referenced column \"nope\" not found"),
            0u);
}

TEST_F(DuckDbWarehouseTest, ALedgerWithoutRelationColumnsIsReadAndThenExtended) {
  {
    auto warehouse = OpenWritable();
    warehouse->Execute("CREATE SCHEMA _sluice");
    warehouse->Execute(
        "CREATE TABLE _sluice.ledger (asset VARCHAR, window_start DATE, window_end DATE, run_id VARCHAR,"
        " row_count BIGINT, sql_hash VARCHAR, written_at TIMESTAMP)");
    warehouse->Execute("INSERT INTO _sluice.ledger VALUES ('gold.old', NULL, NULL, 'r0', 1, 'h', TIMESTAMP '2026-01-01')");
  }
  {
    auto reader = DuckDbWarehouse::Open(file_, true, {});
    std::vector<LedgerEntry> ledger = reader->ReadLedger();
    ASSERT_EQ(ledger.size(), 1u);
    EXPECT_FALSE(ledger[0].relation.has_value());
  }
  auto warehouse = OpenWritable();
  warehouse->ReplaceTable(Relation{"gold", "new"}, "SELECT 1 AS id", Entry("gold.new", "r1"));
  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_FALSE(ledger[0].relation.has_value());
  EXPECT_EQ(ledger[1].relation, (Relation{"gold", "new"}));
}

TEST_F(DuckDbWarehouseTest, ReplaceViewRecordsTheLedgerAndModelsMayChangeKind) {
  auto warehouse = OpenWritable();
  Relation source{"main", "source"};
  Relation model{"main", "model"};
  warehouse->ReplaceTable(source, "SELECT range AS id FROM range(4)", Entry("main.source", "r0"));

  WriteResult view =
      warehouse->ReplaceView(model, "SELECT id * 2 AS doubled FROM main.source", Entry("main.model", "r1"));
  EXPECT_EQ(view.rows_written, 0);
  ASSERT_TRUE(warehouse->Describe(model).has_value());
  EXPECT_TRUE(warehouse->Describe(model)->is_view);
  EXPECT_EQ(Scalar(*warehouse, "SELECT max(doubled) FROM main.model"), "6");

  // A failing view definition keeps the old view and the ledger.
  EXPECT_EQ(CodeOf([&] {
              warehouse->ReplaceView(model, "SELECT nope FROM main.source", Entry("main.model", "bad"));
            }),
            "SLU-WAREHOUSE-024");
  EXPECT_EQ(Scalar(*warehouse, "SELECT max(doubled) FROM main.model"), "6");

  // View → table → view.
  warehouse->ReplaceTable(model, "SELECT 1 AS doubled", Entry("main.model", "r2"));
  EXPECT_FALSE(warehouse->Describe(model)->is_view);
  warehouse->ReplaceView(model, "SELECT 3 AS doubled", Entry("main.model", "r3"));
  EXPECT_TRUE(warehouse->Describe(model)->is_view);
  EXPECT_EQ(Scalar(*warehouse, "SELECT doubled FROM main.model"), "3");

  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
  ASSERT_EQ(ledger.size(), 4u);
  EXPECT_EQ(ledger[1].run_id, "r1");
  EXPECT_EQ(ledger[3].run_id, "r3");
}

TEST_F(DuckDbWarehouseTest, FirstWriteCreatesAMissingSchema) {
  auto warehouse = OpenWritable();
  warehouse->ReplaceTable({"silver", "orders"}, "SELECT 1 AS id", Entry("silver.orders", "r1"));
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM silver.orders"), "1");
}

TEST_F(DuckDbWarehouseTest, FailingSelectKeepsPreviousContentsAndLedger) {
  auto warehouse = OpenWritable();
  Relation orders{"main", "orders"};
  warehouse->ReplaceTable(orders, "SELECT range AS id FROM range(5)", Entry("main.orders", "good"));
  auto before = Contents(*warehouse, "main.orders");

  EXPECT_EQ(CodeOf([&] {
              warehouse->ReplaceTable(orders, "SELECT error('boom') AS id", Entry("main.orders", "bad"));
            }),
            "SLU-WAREHOUSE-020");
  std::string message = MessageOf(
      [&] { warehouse->ReplaceTable(orders, "SELECT 'abc'::INTEGER AS id", Entry("main.orders", "bad")); });
  EXPECT_NE(message.find("main.orders"), std::string::npos) << message;
  EXPECT_NE(message.find("abc"), std::string::npos) << message;
  EXPECT_EQ(CodeOf([&] {
              warehouse->ReplaceTable(orders, "SELECT * FROM no_such_table", Entry("main.orders", "bad"));
            }),
            "SLU-WAREHOUSE-021");
  EXPECT_EQ(CodeOf([&] { warehouse->ReplaceTable(orders, "SELEC 1", Entry("main.orders", "bad")); }),
            "SLU-WAREHOUSE-022");

  EXPECT_EQ(Contents(*warehouse, "main.orders"), before);
  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
  ASSERT_EQ(ledger.size(), 1u);
  EXPECT_EQ(ledger[0].run_id, "good");
}

TEST_F(DuckDbWarehouseTest, ReaderSeesOldOrNewContentsDuringWrites) {
  auto warehouse = OpenWritable();
  Relation numbers{"main", "numbers"};
  warehouse->ReplaceTable(numbers, "SELECT 1 AS v FROM range(20000)", Entry("main.numbers", "seed"));

  std::atomic<bool> done{false};
  std::atomic<int> bad_reads{0};
  std::atomic<int> reads{0};
  std::thread reader([&] {
    while (!done) {
      // Old contents: 20000 rows of 1; new contents: 40000 rows of 2. Anything else is a torn read.
      Rows rows = warehouse->Query("SELECT count(*), min(v), max(v) FROM main.numbers");
      std::string count = rows.rows[0][0].value_or("");
      std::string low = rows.rows[0][1].value_or("");
      std::string high = rows.rows[0][2].value_or("");
      bool old_contents = count == "20000" && low == "1" && high == "1";
      bool new_contents = count == "40000" && low == "2" && high == "2";
      if (!old_contents && !new_contents) ++bad_reads;
      ++reads;
    }
  });
  for (int i = 0; i < 10; ++i) {
    if (i % 2 == 0) {
      warehouse->ReplaceTable(numbers, "SELECT 2 AS v FROM range(40000)", Entry("main.numbers", "big"));
    } else {
      warehouse->ReplaceTable(numbers, "SELECT 1 AS v FROM range(20000)", Entry("main.numbers", "small"));
    }
    EXPECT_EQ(CodeOf([&] {
                warehouse->ReplaceTable(
                    numbers,
                    "SELECT CASE WHEN range < 30000 THEN 3 ELSE error('late') END AS v FROM range(40000)",
                    Entry("main.numbers", "failing"));
              }),
              "SLU-WAREHOUSE-020");
  }
  done = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(bad_reads.load(), 0);
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM main.numbers WHERE v = 1"), "20000");
}

TEST_F(DuckDbWarehouseTest, ReplaceDateRangeReplacesOnlyItsWindowAndCountsDroppedRows) {
  auto warehouse = OpenWritable();
  Relation events{"main", "events"};
  // Days 2026-01-01 .. 2026-01-05, two rows each, plus a NULL date: first write owns Jan 1..3.
  std::string select =
      "SELECT DATE '2026-01-01' + CAST(range // 2 AS INTEGER) AS event_date, range AS id, 'first' AS source "
      "FROM range(10) UNION ALL SELECT NULL, 100, 'first'";
  WriteResult first =
      warehouse->ReplaceDateRange(events, select, "event_date", {D("2026-01-01"), D("2026-01-04")},
                                  Entry("main.events", "w1", DateWindow{D("2026-01-01"), D("2026-01-04")}));
  EXPECT_EQ(first.rows_written, 6);
  EXPECT_EQ(first.rows_dropped, 5);  // four rows on Jan 4 and 5, one with a NULL date
  auto table = warehouse->Describe(events);
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->columns.at(0), (ColumnInfo{"event_date", "DATE"}));

  auto other_dates_before = Contents(*warehouse, "main.events WHERE event_date <> DATE '2026-01-02'");

  // The second write owns only Jan 2, with different rows (columns in another order, matched by name).
  WriteResult second = warehouse->ReplaceDateRange(
      events,
      "SELECT 'second' AS source, 7 AS id, DATE '2026-01-02' AS event_date UNION ALL "
      "SELECT 'second', 8, DATE '2026-01-03'",
      "event_date", {D("2026-01-02"), D("2026-01-03")},
      Entry("main.events", "w2", DateWindow{D("2026-01-02"), D("2026-01-03")}));
  EXPECT_EQ(second.rows_written, 1);
  EXPECT_EQ(second.rows_dropped, 1);

  EXPECT_EQ(Contents(*warehouse, "main.events WHERE event_date <> DATE '2026-01-02'"), other_dates_before);
  Rows jan2 = warehouse->Query("SELECT source, id FROM main.events WHERE event_date = DATE '2026-01-02'");
  ASSERT_EQ(jan2.rows.size(), 1u);
  EXPECT_EQ(jan2.rows[0][0], "second");
  EXPECT_EQ(jan2.rows[0][1], "7");
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM main.events"), "5");

  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[0].window, (DateWindow{D("2026-01-01"), D("2026-01-04")}));
  EXPECT_EQ(ledger[0].row_count, 6);
  EXPECT_EQ(ledger[1].window, (DateWindow{D("2026-01-02"), D("2026-01-03")}));
  EXPECT_EQ(ledger[1].row_count, 1);

  // No staging table outlives its write.
  EXPECT_EQ(
      Scalar(*warehouse, "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE '_sluice_staging%'"),
      "0");
}

TEST_F(DuckDbWarehouseTest, ReplaceDateRangeFailureKeepsTheWindowIntact) {
  auto warehouse = OpenWritable();
  Relation events{"main", "events"};
  DateWindow window{D("2026-01-01"), D("2026-01-03")};
  warehouse->ReplaceDateRange(events, "SELECT DATE '2026-01-01' AS d, 1 AS v", "d", window,
                              Entry("main.events", "ok", window));
  EXPECT_EQ(CodeOf([&] {
              warehouse->ReplaceDateRange(events,
                                          "SELECT DATE '2026-01-01' AS d, error('boom')::INTEGER AS v", "d",
                                          window, Entry("main.events", "bad", window));
            }),
            "SLU-WAREHOUSE-020");
  EXPECT_EQ(Scalar(*warehouse, "SELECT v FROM main.events"), "1");
  EXPECT_EQ(warehouse->ReadLedger().size(), 1u);
}

TEST_F(DuckDbWarehouseTest, ReplaceDateRangeAddsNewColumnsAndRefusesOtherChanges) {
  auto warehouse = OpenWritable();
  Relation events{"main", "events"};
  DateWindow first{D("2026-01-01"), D("2026-01-02")};
  DateWindow second{D("2026-01-02"), D("2026-01-03")};
  warehouse->ReplaceDateRange(events, "SELECT DATE '2026-01-01' AS d, 1 AS v", "d", first,
                              Entry("main.events", "r1", first));
  warehouse->ReplaceDateRange(events, "SELECT DATE '2026-01-02' AS d, 2 AS v, 'x' AS label", "d", second,
                              Entry("main.events", "r2", second));
  EXPECT_EQ(Scalar(*warehouse, "SELECT string_agg(coalesce(label, 'null'), ',' ORDER BY d) FROM main.events"),
            "null,x");

  auto retyped = [&] {
    warehouse->ReplaceDateRange(events, "SELECT DATE '2026-01-02' AS d, 'two' AS v, 'x' AS label", "d", second,
                                Entry("main.events", "r3", second));
  };
  EXPECT_EQ(CodeOf(retyped), "SLU-WAREHOUSE-013");
  EXPECT_NE(MessageOf(retyped).find("column \"v\" was INTEGER and is now VARCHAR"), std::string::npos)
      << MessageOf(retyped);
  auto removed = [&] {
    warehouse->ReplaceDateRange(events, "SELECT DATE '2026-01-02' AS d, 'x' AS label", "d", second,
                                Entry("main.events", "r4", second));
  };
  EXPECT_EQ(CodeOf(removed), "SLU-WAREHOUSE-013");
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM main.events"), "2");
  EXPECT_EQ(warehouse->ReadLedger().size(), 2u);

  DateWindow all{D("2026-01-01"), D("2026-01-03")};
  WriteResult rebuilt = warehouse->ReplaceDateRange(
      events, "SELECT DATE '2026-01-01' + INTERVAL (range) DAY AS d, 'v' || range AS v FROM range(5)", "d", all,
      Entry("main.events", "r5", all), Warehouse::DateRangeMode::kWholeTable);
  EXPECT_EQ(rebuilt.rows_written, 2);
  EXPECT_EQ(rebuilt.rows_dropped, 3);
  EXPECT_EQ(Scalar(*warehouse, "SELECT string_agg(v, ',' ORDER BY d) FROM main.events"), "v0,v1");
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM information_schema.columns WHERE table_name = 'events'"), "2");
}

TEST_F(DuckDbWarehouseTest, ReplaceDateRangeWithoutTheDateColumnNamesRelationAndColumn) {
  auto warehouse = OpenWritable();
  Relation events{"main", "events"};
  DateWindow window{D("2026-01-01"), D("2026-01-02")};
  auto write = [&] {
    warehouse->ReplaceDateRange(events, "SELECT 1 AS id", "event_date", window,
                                Entry("main.events", "r", window));
  };
  EXPECT_EQ(CodeOf(write), "SLU-WAREHOUSE-010");
  std::string message = MessageOf(write);
  EXPECT_NE(message.find("main.events"), std::string::npos) << message;
  EXPECT_NE(message.find("event_date"), std::string::npos) << message;
  EXPECT_FALSE(warehouse->Describe(events).has_value());
  EXPECT_TRUE(warehouse->ReadLedger().empty());
}

TEST_F(DuckDbWarehouseTest, LoadSeedInfersOrForcesColumnTypes) {
  auto warehouse = OpenWritable();
  fs::path csv = dir_ / "seeds" / "customers.csv";
  fs::create_directories(csv.parent_path());
  std::ofstream(csv) << "id,name,amount,joined\n1,ann,1.50,2026-01-01\n2,bob,2.25,2026-01-02\n";

  WriteResult inferred =
      warehouse->LoadSeed({"main", "customers"}, SeedFile{csv.string(), {}}, Entry("main.customers", "s1"));
  EXPECT_EQ(inferred.rows_written, 2);
  auto table = warehouse->Describe({"main", "customers"});
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->columns,
            (std::vector<ColumnInfo>{
                {"id", "BIGINT"}, {"name", "VARCHAR"}, {"amount", "DOUBLE"}, {"joined", "DATE"}}));

  SeedFile typed{csv.string(), {{"amount", "DECIMAL(18,2)"}, {"id", "INTEGER"}, {"joined", "VARCHAR"}}};
  WriteResult forced = warehouse->LoadSeed({"main", "customers"}, typed, Entry("main.customers", "s2"));
  EXPECT_EQ(forced.rows_written, 2);
  table = warehouse->Describe({"main", "customers"});
  ASSERT_TRUE(table.has_value());
  EXPECT_EQ(table->columns,
            (std::vector<ColumnInfo>{
                {"id", "INTEGER"}, {"name", "VARCHAR"}, {"amount", "DECIMAL(18,2)"}, {"joined", "VARCHAR"}}));
  EXPECT_EQ(Scalar(*warehouse, "SELECT sum(amount) FROM main.customers"), "3.75");
  EXPECT_EQ(warehouse->ReadLedger().size(), 2u);
}

TEST_F(DuckDbWarehouseTest, LoadSeedRejectsAListedColumnMissingFromTheFile) {
  auto warehouse = OpenWritable();
  fs::path csv = dir_ / "seed.csv";
  std::ofstream(csv) << "id,name\n1,ann\n";
  warehouse->LoadSeed({"main", "people"}, SeedFile{csv.string(), {}}, Entry("main.people", "ok"));

  auto load = [&] {
    warehouse->LoadSeed({"main", "people"},
                        SeedFile{csv.string(), {{"id", "INTEGER"}, {"nickname", "VARCHAR"}}},
                        Entry("main.people", "bad"));
  };
  EXPECT_NE(CodeOf(load), "no error");
  std::string message = MessageOf(load);
  EXPECT_NE(message.find("nickname"), std::string::npos) << message;
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM main.people"), "1");
  EXPECT_EQ(warehouse->ReadLedger().size(), 1u);

  EXPECT_EQ(CodeOf([&] {
              warehouse->LoadSeed({"main", "people"}, SeedFile{(dir_ / "missing.csv").string(), {}},
                                  Entry("main.people", "x"));
            }),
            "SLU-WAREHOUSE-012");
}

// Seeds are read in the dialect the project loader checks (core/seed_csv.hpp), with no option left to
// the sniffer: a line starting with `#` is a row, `""` is the empty string and an empty field NULL, types are
// inferred from every row, and a row with an extra field fails the load rather than being read as another header.
TEST_F(DuckDbWarehouseTest, LoadSeedReadsTheSeedCsvDialectStrictly) {
  auto warehouse = OpenWritable();
  fs::path notes = dir_ / "notes.csv";
  std::ofstream(notes) << "id,note\n#1,hash\n2,\"\"\n3,\n";
  WriteResult loaded = warehouse->LoadSeed({"main", "notes"}, SeedFile{notes.string(), {}}, Entry("main.notes", "n"));
  EXPECT_EQ(loaded.rows_written, 3);
  EXPECT_EQ(Scalar(*warehouse,
                   "SELECT string_agg(id || ':' || coalesce('[' || note || ']', 'NULL'), ' ' ORDER BY id) "
                   "FROM main.notes"),
            "#1:[hash] 2:[] 3:NULL");

  fs::path late = dir_ / "late.csv";
  {
    std::ofstream out(late);
    out << "n\n";
    for (int i = 0; i < 30000; ++i) out << i << "\n";
    out << "x\n";
  }
  warehouse->LoadSeed({"main", "late"}, SeedFile{late.string(), {}}, Entry("main.late", "l"));
  EXPECT_EQ(Scalar(*warehouse, "SELECT any_value(typeof(n)) || ' ' || count(*) FROM main.late"), "VARCHAR 30001");

  fs::path wide = dir_ / "wide.csv";
  std::ofstream(wide) << "a,b\n1,x\n2,y,3\n";
  EXPECT_NE(CodeOf([&] {
              warehouse->LoadSeed({"main", "wide"}, SeedFile{wide.string(), {}}, Entry("main.wide", "w"));
            }),
            "no error");
  EXPECT_FALSE(warehouse->Describe({"main", "wide"}).has_value());
}

TEST_F(DuckDbWarehouseTest, ListRelationsAndDescribeReportUserRelationsOnly) {
  auto warehouse = OpenWritable();
  warehouse->ReplaceTable({"main", "b_table"}, "SELECT 1 AS id, 'x' AS label, [1, 2] AS tags",
                          Entry("main.b_table", "r"));
  warehouse->EnsureSchema("gold");
  warehouse->ReplaceTable({"gold", "a_table"}, "SELECT 1.5::DECIMAL(18,2) AS amount",
                          Entry("gold.a_table", "r"));
  warehouse->Execute("CREATE OR REPLACE VIEW gold.a_view AS SELECT amount FROM gold.a_table");

  std::vector<TableInfo> relations = warehouse->ListRelations();
  ASSERT_EQ(relations.size(), 3u);
  EXPECT_EQ(relations[0].relation, (Relation{"gold", "a_table"}));
  EXPECT_FALSE(relations[0].is_view);
  EXPECT_EQ(relations[0].columns, (std::vector<ColumnInfo>{{"amount", "DECIMAL(18,2)"}}));
  EXPECT_EQ(relations[1].relation, (Relation{"gold", "a_view"}));
  EXPECT_TRUE(relations[1].is_view);
  EXPECT_EQ(relations[2].relation, (Relation{"main", "b_table"}));
  EXPECT_EQ(relations[2].columns,
            (std::vector<ColumnInfo>{{"id", "INTEGER"}, {"label", "VARCHAR"}, {"tags", "INTEGER[]"}}));

  auto view = warehouse->Describe({"gold", "a_view"});
  ASSERT_TRUE(view.has_value());
  EXPECT_TRUE(view->is_view);
  EXPECT_FALSE(warehouse->Describe({"gold", "missing"}).has_value());
  EXPECT_FALSE(warehouse->Describe({"_sluice", "ledger"}).has_value());
}

TEST_F(DuckDbWarehouseTest, QueryRendersEveryValueAsText) {
  auto warehouse = OpenWritable();
  Rows rows = warehouse->Query(
      "SELECT [1, 2] AS list, {'a': 1} AS record, NULL::INTEGER AS nothing, DATE '2026-01-31' AS day, "
      "1.50::DECIMAL(9,2) AS amount");
  EXPECT_EQ(rows.columns, (std::vector<std::string>{"list", "record", "nothing", "day", "amount"}));
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.rows[0][0], "[1, 2]");
  EXPECT_EQ(rows.rows[0][1], "{'a': 1}");
  EXPECT_EQ(rows.rows[0][2], std::nullopt);
  EXPECT_EQ(rows.rows[0][3], "2026-01-31");
  EXPECT_EQ(rows.rows[0][4], "1.50");
  Rows ordered = warehouse->Query("SELECT range AS n FROM range(5) ORDER BY n DESC;");
  ASSERT_EQ(ordered.rows.size(), 5u);
  EXPECT_EQ(ordered.rows.front()[0], "4");
  EXPECT_EQ(ordered.rows.back()[0], "0");
  // Statements that cannot be a subquery still answer.
  EXPECT_FALSE(warehouse->Query("PRAGMA version").rows.empty());
  EXPECT_EQ(CodeOf([&] { warehouse->Query("SELECT * FROM nowhere"); }), "SLU-WAREHOUSE-021");
}

TEST_F(DuckDbWarehouseTest, QuotesAwkwardSchemaTableAndColumnNames) {
  auto warehouse = OpenWritable();
  Relation awkward{"my \"odd\" schema", "table 'with' \"quotes\""};
  warehouse->EnsureSchema(awkward.name_space);
  warehouse->ReplaceTable(awkward, "SELECT 1 AS id", Entry("odd", "r1"));
  DateWindow window{D("2026-02-01"), D("2026-02-02")};
  Relation awkward_events{"my \"odd\" schema", "events \"x\""};
  WriteResult written = warehouse->ReplaceDateRange(
      awkward_events, "SELECT DATE '2026-02-01' AS \"day \"\"of\"\" it\", 'it''s' AS note", "day \"of\" it",
      window, Entry("it's \"odd\"", "r2", window));
  EXPECT_EQ(written.rows_written, 1);

  auto info = warehouse->Describe(awkward);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->relation, awkward);
  std::vector<TableInfo> relations = warehouse->ListRelations();
  ASSERT_EQ(relations.size(), 2u);
  EXPECT_EQ(relations[0].relation, awkward_events);
  EXPECT_EQ(relations[0].columns.at(0).name, "day \"of\" it");
  EXPECT_EQ(warehouse->ReadLedger().at(1).asset, "it's \"odd\"");
}

TEST_F(DuckDbWarehouseTest, ConcurrentWritesOfDifferentTablesAllLand) {
  auto warehouse = OpenWritable();
  constexpr int kThreads = 4;
  constexpr int kWritesEach = 5;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWritesEach; ++i) {
        std::string name = "t" + std::to_string(t);
        try {
          if (i % 2 == 0) {
            warehouse->ReplaceTable({"fresh", name},
                                    "SELECT range AS id FROM range(" + std::to_string(100 * (i + 1)) + ")",
                                    Entry("fresh." + name, std::to_string(i)));
          } else {
            DateWindow window{D("2026-01-01"), D("2026-01-02")};
            warehouse->ReplaceDateRange({"fresh", name + "_daily"}, "SELECT DATE '2026-01-01' AS d, 1 AS v",
                                        "d", window,
                                        Entry("fresh." + name + "_daily", std::to_string(i), window));
          }
        } catch (const Error& e) {
          ADD_FAILURE() << e.what();
          ++failures;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(warehouse->ReadLedger().size(), static_cast<size_t>(kThreads * kWritesEach));
  EXPECT_EQ(warehouse->ListRelations().size(), static_cast<size_t>(2 * kThreads));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM fresh.t" + std::to_string(t)), "500");
  }
}

TEST_F(DuckDbWarehouseTest, ReadOnlyOpenNeedsAnExistingFileAndSeesCommittedData) {
  EXPECT_EQ(CodeOf([&] { DuckDbWarehouse::Open(file_, true, {}); }), "SLU-WAREHOUSE-003");
  {
    auto warehouse = OpenWritable();
    warehouse->ReplaceTable({"main", "t"}, "SELECT 42 AS answer", Entry("main.t", "r"));
  }
  auto reader = DuckDbWarehouse::Open(file_, true, {});
  EXPECT_EQ(Scalar(*reader, "SELECT answer FROM main.t"), "42");
  EXPECT_EQ(reader->ReadLedger().size(), 1u);
}

TEST_F(DuckDbWarehouseTest, SecondWriterWaitsForTheLockAndIsTold) {
  fs::path opened = dir_ / "child-opened";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int status = 0;
    try {
      auto warehouse = DuckDbWarehouse::Open(file_, false, {});
      std::ofstream(opened) << "open\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    } catch (const Error&) {
      status = 1;
    }
    ::_exit(status);
  }
  ASSERT_TRUE(WaitForFile(opened, std::chrono::seconds(30)));

  std::vector<std::string> waits;
  auto started = std::chrono::steady_clock::now();
  auto warehouse =
      DuckDbWarehouse::Open(file_, false, WaitPolicy{[&](const std::string& line) { waits.push_back(line); }});
  auto waited = std::chrono::steady_clock::now() - started;

  ASSERT_EQ(waits.size(), 1u);
  EXPECT_NE(waits[0].find(file_.string()), std::string::npos) << waits[0];
  EXPECT_NE(waits[0].find("pid " + std::to_string(child)), std::string::npos) << waits[0];
  EXPECT_GT(waited, std::chrono::milliseconds(200));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  warehouse->ReplaceTable({"main", "after_wait"}, "SELECT 1 AS ok", Entry("main.after_wait", "r"));
  EXPECT_EQ(Scalar(*warehouse, "SELECT ok FROM main.after_wait"), "1");
}

TEST_F(DuckDbWarehouseTest, AReaderInAnotherProcessMakesAWriterWaitWithinItsTimeout) {
  { OpenWritable()->ReplaceTable({"main", "t"}, "SELECT 1 AS x", Entry("main.t", "r")); }
  fs::path opened = dir_ / "reader-opened";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int status = 0;
    try {
      auto reader = DuckDbWarehouse::Open(file_, true, {});
      std::ofstream(opened) << "open\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    } catch (const Error&) {
      status = 1;
    }
    ::_exit(status);
  }
  ASSERT_TRUE(WaitForFile(opened, std::chrono::seconds(30)));

  std::vector<std::string> waits;
  WaitPolicy impatient{[&](const std::string& line) { waits.push_back(line); }, std::chrono::milliseconds(200)};
  Error timeout = ErrorOf([&] { DuckDbWarehouse::Open(file_, false, impatient); });
  EXPECT_EQ(timeout.diagnostics().front().code, "SLU-WAREHOUSE-007");
  EXPECT_NE(timeout.diagnostics().front().message.find("pid " + std::to_string(child)), std::string::npos)
      << timeout.diagnostics().front().message;
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_NE(waits[0].find("pid " + std::to_string(child)), std::string::npos) << waits[0];

  size_t calls = waits.size();
  WaitPolicy no_wait{[&](const std::string& line) { waits.push_back(line); }, std::chrono::milliseconds(0)};
  EXPECT_EQ(ErrorOf([&] { DuckDbWarehouse::Open(file_, false, no_wait); }).diagnostics().front().code,
            "SLU-WAREHOUSE-007");
  EXPECT_EQ(waits.size(), calls);  // giving up at once is not a wait
  EXPECT_NE(DuckDbWarehouse::Open(file_, true, no_wait), nullptr);  // DuckDB lets readers share a file

  std::atomic<bool> cancel{true};
  EXPECT_EQ(ErrorOf([&] { DuckDbWarehouse::Open(file_, false, WaitPolicy{nullptr, std::nullopt, &cancel}); })
                .diagnostics().front().code,
            "SLU-WAREHOUSE-008");

  auto warehouse = DuckDbWarehouse::Open(file_, false, {});  // waits for the reader to exit
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(Scalar(*warehouse, "SELECT x FROM main.t"), "1");
}

TEST_F(DuckDbWarehouseTest, InterruptStopsTheRunningWriteAndRollsItBack) {
  auto warehouse = OpenWritable();
  Relation t{"main", "t"};
  warehouse->ReplaceTable(t, "SELECT range AS id FROM range(3)", Entry("main.t", "old"));
  std::string code;
  std::thread writer([&] {
    code = CodeOf([&] {
      warehouse->ReplaceTable(t, "SELECT sum(a.range * b.range) AS id FROM range(100000) a, range(1000000) b",
                              Entry("main.t", "slow"));
    });
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  warehouse->Interrupt();
  writer.join();
  EXPECT_EQ(code, "SLU-WAREHOUSE-008");
  EXPECT_EQ(CodeOf([&] { warehouse->ReplaceTable(t, "SELECT 1 AS id", Entry("main.t", "later")); }),
            "SLU-WAREHOUSE-008");
  warehouse.reset();
  EXPECT_EQ(Scalar(*OpenWritable(), "SELECT count(*) FROM main.t"), "3");
}

TEST_F(DuckDbWarehouseTest, TheObserverSeesEveryStatementOfAWriteFullyQualified) {
  auto warehouse = OpenWritable();
  std::vector<std::string> seen;
  warehouse->ObserveStatements([&](const Relation& relation, const std::vector<std::string>& statements) {
    EXPECT_EQ(relation.ToString(), "main.t");
    seen = statements;
  });
  warehouse->ReplaceTable({"main", "t"}, "SELECT 1 AS x", Entry("main.t", "r"));
  // The transaction's first statement carries its BEGIN; its last, the ledger row and COMMIT.
  ASSERT_EQ(seen.size(), 2u);
  std::string create = "BEGIN TRANSACTION;\nCREATE OR REPLACE TABLE \"" + file_.stem().string() + "\".\"main\".\"t\"";
  EXPECT_EQ(seen.front().find(create), 0u) << seen.front();
  EXPECT_EQ(seen.back().find("INSERT INTO \"" + file_.stem().string() + "\".\"_sluice\".\"ledger\""), 0u) << seen.back();
  EXPECT_TRUE(seen.back().ends_with(";\nCOMMIT")) << seen.back();

  EXPECT_EQ(CodeOf([&] { warehouse->ReplaceTable({"main", "t"}, "SELECT nope AS x", Entry("main.t", "r")); }),
            "SLU-WAREHOUSE-024");
  EXPECT_EQ(seen.back(), "ROLLBACK");
}

TEST_F(DuckDbWarehouseTest, DropRelationDropsATableOrAView) {
  auto warehouse = OpenWritable();
  warehouse->ReplaceTable({"main", "t"}, "SELECT 1 AS x", Entry("main.t", "r"));
  warehouse->ReplaceView({"main", "v"}, "SELECT 1 AS x", Entry("main.v", "r"));
  warehouse->DropRelation({"main", "t"});
  warehouse->DropRelation({"main", "V"});
  warehouse->DropRelation({"main", "never"});
  EXPECT_TRUE(warehouse->ListRelations().empty());
}

TEST_F(DuckDbWarehouseTest, KillBeforeCommitKeepsOldContentsAndLedger) {
  Relation orders{"main", "orders"};
  {
    auto warehouse = OpenWritable();
    warehouse->ReplaceTable(orders, "SELECT range AS id FROM range(3)", Entry("main.orders", "old"));
  }
  fs::path marker = dir_ / "paused";
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::setenv("SLUICE_TEST_PAUSE_AT", "after_write_before_commit", 1);
    ::setenv("SLUICE_TEST_PAUSE_MARKER", marker.c_str(), 1);
    try {
      auto warehouse = DuckDbWarehouse::Open(file_, false, {});
      warehouse->ReplaceTable(orders, "SELECT range AS id FROM range(1000)", Entry("main.orders", "new"));
    } catch (const Error&) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  bool paused = WaitForFile(marker, std::chrono::seconds(60));
  ::kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(paused);
  EXPECT_TRUE(WIFSIGNALED(status));

  auto warehouse = OpenWritable();
  EXPECT_EQ(Scalar(*warehouse, "SELECT count(*) FROM main.orders"), "3");
  std::vector<LedgerEntry> ledger = warehouse->ReadLedger();
  ASSERT_EQ(ledger.size(), 1u);
  EXPECT_EQ(ledger[0].run_id, "old");
  EXPECT_EQ(ledger[0].row_count, 3);
}

}  // namespace
}  // namespace sluice
