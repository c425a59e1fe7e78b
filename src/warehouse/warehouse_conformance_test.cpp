// One suite every Warehouse backend passes: DuckDB on a temporary file, ClickHouse on the 18.16 test server (a fresh
// database per test), PostgreSQL on the 15 test server (a fresh database per test). The SELECTs differ only in type names, so each backend runs the same cases.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"
#include "support/clickhouse_test_server.hpp"
#include "support/postgres_test_server.hpp"
#include "warehouse/registry.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

Date D(const char* text) { return *Date::Parse(text); }

LedgerEntry Entry(std::string asset, std::string run_id) {
  LedgerEntry entry;
  entry.asset = std::move(asset);
  entry.run_id = std::move(run_id);
  entry.sql_hash = "hash-" + entry.run_id;
  return entry;
}

std::string CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front().code;
  }
  return "no error";
}

class WarehouseConformance : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    namespace_ = testing::UniqueClickHouseDatabase("conf");
    if (GetParam() == "duckdb") {
      dir_ = fs::temp_directory_path() / ("sluice_conformance_" + namespace_);
      fs::create_directories(dir_);
      WarehouseConfig config;
      config.adapter = "duckdb";
      config.connection = {{"path", (dir_ / "w.duckdb").string()}};
      warehouse_ = OpenWarehouse(config);
      int_ = "BIGINT";
      date_ = "DATE";
      text_ = "VARCHAR";
    } else if (GetParam() == "postgres") {
      testing::PostgresTestServer server = testing::RequirePostgresTestServer();
      dir_ = fs::temp_directory_path() / ("sluice_conformance_" + namespace_);
      fs::create_directories(dir_);
      warehouse_ = OpenWarehouse(testing::PostgresTestConfig(server, testing::CreatePostgresTestDatabase(server, "conf")));
      int_ = "BIGINT";
      date_ = "DATE";
      text_ = "TEXT";
    } else {
      testing::ClickHouseTestServer server = testing::RequireClickHouseTestServer();
      dir_ = fs::temp_directory_path() / ("sluice_conformance_" + namespace_);
      fs::create_directories(dir_);
      warehouse_ = OpenWarehouse(testing::ClickHouseTestConfig(server, namespace_));
      int_ = "Int64";
      date_ = "Date";
      text_ = "String";
    }
    warehouse_->EnsureSchema(namespace_);
  }
  void TearDown() override {
    if (warehouse_ != nullptr && GetParam() == "clickhouse") {
      warehouse_->Execute("DROP DATABASE IF EXISTS " + sql::QuoteIdentifier(sql::Dialect::kClickHouse, namespace_));
    }
    warehouse_.reset();
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // SELECT … UNION ALL SELECT …, each row "id, 'YYYY-MM-DD'[, text]".
  std::string Select(const std::vector<std::tuple<int, std::string>>& rows) {
    std::string sql;
    for (const auto& [id, day] : rows) {
      sql += (sql.empty() ? "" : " UNION ALL ") + std::string("SELECT CAST(") + std::to_string(id) + " AS " + int_ +
             ") AS id, CAST('" + day + "' AS " + date_ + ") AS d";
    }
    return sql;
  }
  std::string Scalar(const std::string& sql) {
    Rows rows = warehouse_->Query(sql);
    return rows.rows.empty() ? "<no row>" : rows.rows[0][0].value_or("NULL");
  }
  std::string Count(const Relation& relation, const std::string& where = "") {
    return Scalar("SELECT count(*) FROM " + warehouse_->QualifiedName(relation) + (where.empty() ? "" : " WHERE " + where));
  }
  Relation R(std::string name) { return Relation{namespace_, std::move(name)}; }
  // The ledger rows of this test's relations (a ClickHouse server's ledger is shared by every test).
  std::vector<LedgerEntry> Ledger() {
    std::vector<LedgerEntry> mine;
    for (LedgerEntry& entry : warehouse_->ReadLedger()) {
      if (entry.relation && entry.relation->name_space == namespace_) mine.push_back(std::move(entry));
    }
    return mine;
  }

  std::string namespace_;
  fs::path dir_;
  std::unique_ptr<Warehouse> warehouse_;
  std::string int_, date_, text_;
};

TEST_P(WarehouseConformance, ReplaceTableReplacesTheContentsAndAppendsALedgerRow) {
  Relation orders = R("orders");
  EXPECT_EQ(warehouse_->ReplaceTable(orders, Select({{1, "2026-01-01"}, {2, "2026-01-01"}, {3, "2026-01-02"}}),
                                     Entry("s.orders", "r1")).rows_written, 3);
  WriteResult second = warehouse_->ReplaceTable(orders, Select({{7, "2026-01-05"}}), Entry("s.orders", "r2"));
  EXPECT_EQ(second.rows_written, 1);
  EXPECT_EQ(Count(orders), "1");
  EXPECT_EQ(Scalar("SELECT id FROM " + warehouse_->QualifiedName(orders)), "7");
  std::vector<LedgerEntry> ledger = Ledger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[0].run_id, "r1");
  EXPECT_EQ(ledger[0].row_count, 3);
  EXPECT_EQ(ledger[1].run_id, "r2");
  EXPECT_EQ(ledger[1].written_at, second.written_at);
  EXPECT_EQ(ledger[1].relation, orders);
  EXPECT_FALSE(ledger[1].window);
}

TEST_P(WarehouseConformance, ReplaceDateRangeOwnsExactlyItsWindowIncludingEmptyDays) {
  Relation events = R("events");
  warehouse_->ReplaceDateRange(events, Select({{1, "2026-01-01"}, {2, "2026-01-02"}, {3, "2026-01-03"}, {4, "2026-01-03"}}),
                               "d", DateWindow{D("2026-01-01"), D("2026-01-04")}, Entry("s.events", "r1"));
  EXPECT_EQ(Count(events), "4");
  // The new window [02, 04) has rows on the 2nd only: the 3rd must end up empty; rows of the 1st and the 5th are
  // outside the window, dropped and counted, and the 1st keeps its old row.
  WriteResult result = warehouse_->ReplaceDateRange(
      events, Select({{20, "2026-01-02"}, {21, "2026-01-02"}, {10, "2026-01-01"}, {50, "2026-01-05"}}), "d",
      DateWindow{D("2026-01-02"), D("2026-01-04")}, Entry("s.events", "r2"));
  EXPECT_EQ(result.rows_written, 2);
  EXPECT_EQ(result.rows_dropped, 2);
  EXPECT_EQ(Count(events), "3");
  EXPECT_EQ(Count(events, "id = 1"), "1");
  EXPECT_EQ(Count(events, "id = 2 OR id = 3 OR id = 4 OR id = 10 OR id = 50"), "0");
  EXPECT_EQ(Count(events, "id = 20 OR id = 21"), "2");
  std::vector<LedgerEntry> ledger = Ledger();
  ASSERT_EQ(ledger.size(), 2u);
  EXPECT_EQ(ledger[1].window, (DateWindow{D("2026-01-02"), D("2026-01-04")}));
  EXPECT_EQ(ledger[1].row_count, 2);
}

TEST_P(WarehouseConformance, ReplaceDateRangeAddsNewColumnsAndRefusesRemovedOnes) {
  Relation events = R("events");
  warehouse_->ReplaceDateRange(events, Select({{1, "2026-01-01"}}), "d", DateWindow{D("2026-01-01"), D("2026-01-02")},
                               Entry("s.events", "r1"));
  std::string with_note = "SELECT CAST(2 AS " + int_ + ") AS id, CAST('2026-01-02' AS " + date_ + ") AS d, CAST('n' AS " +
                          text_ + ") AS note";
  warehouse_->ReplaceDateRange(events, with_note, "d", DateWindow{D("2026-01-02"), D("2026-01-03")},
                               Entry("s.events", "r2"));
  std::optional<TableInfo> info = warehouse_->Describe(events);
  ASSERT_TRUE(info);
  ASSERT_EQ(info->columns.size(), 3u);
  EXPECT_EQ(info->columns[2].name, "note");
  EXPECT_EQ(Scalar("SELECT note FROM " + warehouse_->QualifiedName(events) + " WHERE id = 1"), "NULL");
  EXPECT_EQ(Scalar("SELECT note FROM " + warehouse_->QualifiedName(events) + " WHERE id = 2"), "n");

  std::string without_id = "SELECT CAST('2026-01-02' AS " + date_ + ") AS d, CAST('n' AS " + text_ + ") AS note";
  EXPECT_EQ(CodeOf([&] {
              warehouse_->ReplaceDateRange(events, without_id, "d", DateWindow{D("2026-01-02"), D("2026-01-03")},
                                           Entry("s.events", "r3"));
            }),
            "SLU-WAREHOUSE-013");
  EXPECT_EQ(Count(events), "2");  // untouched
  // A full refresh takes the SELECT's columns.
  warehouse_->ReplaceDateRange(events, without_id, "d", DateWindow{D("2026-01-02"), D("2026-01-03")},
                               Entry("s.events", "r4"), Warehouse::DateRangeMode::kWholeTable);
  EXPECT_EQ(Count(events), "1");
  EXPECT_EQ(warehouse_->Describe(events)->columns.size(), 2u);
}

TEST_P(WarehouseConformance, ReplaceDateRangeNeedsTheDateColumn) {
  EXPECT_EQ(CodeOf([&] {
              warehouse_->ReplaceDateRange(R("e"), Select({{1, "2026-01-01"}}), "day",
                                           DateWindow{D("2026-01-01"), D("2026-01-02")}, Entry("s.e", "r"));
            }),
            "SLU-WAREHOUSE-010");
  EXPECT_FALSE(warehouse_->Describe(R("e")));
}

TEST_P(WarehouseConformance, ReplaceViewCreatesAndReplacesAView) {
  Relation view = R("recent");
  warehouse_->ReplaceView(view, "SELECT CAST(1 AS " + int_ + ") AS x", Entry("s.recent", "r1"));
  warehouse_->ReplaceView(view, "SELECT CAST(2 AS " + int_ + ") AS x, CAST(3 AS " + int_ + ") AS y",
                          Entry("s.recent", "r2"));
  EXPECT_EQ(Scalar("SELECT x + y FROM " + warehouse_->QualifiedName(view)), "5");
  std::optional<TableInfo> info = warehouse_->Describe(view);
  ASSERT_TRUE(info);
  EXPECT_TRUE(info->is_view);
  EXPECT_EQ(info->columns.size(), 2u);
  // A model may change kind: a table write replaces the view, and a view write the table.
  warehouse_->ReplaceTable(view, Select({{1, "2026-01-01"}}), Entry("s.recent", "r3"));
  EXPECT_FALSE(warehouse_->Describe(view)->is_view);
  warehouse_->ReplaceView(view, "SELECT CAST(9 AS " + int_ + ") AS x", Entry("s.recent", "r4"));
  EXPECT_TRUE(warehouse_->Describe(view)->is_view);
  EXPECT_EQ(Ledger().size(), 4u);
}

TEST_P(WarehouseConformance, LoadSeedReadsEmptyAsNullAndQuotedEmptyAsText) {
  fs::path csv = dir_ / "people.csv";
  std::ofstream(csv) << "id,name,joined\n1,\"Ann, A.\",2026-01-01\n2,,2026-01-02\n3,\"\",\n";
  Relation people = R("people");
  WriteResult result = warehouse_->LoadSeed(people, SeedFile{csv.string(), {}}, Entry("s.people", "r1"));
  EXPECT_EQ(result.rows_written, 3);
  EXPECT_EQ(Count(people), "3");
  EXPECT_EQ(Count(people, "name IS NULL"), "1");
  EXPECT_EQ(Count(people, "name = ''"), "1");
  EXPECT_EQ(Scalar("SELECT name FROM " + warehouse_->QualifiedName(people) + " WHERE id = 1"), "Ann, A.");
  EXPECT_EQ(CodeOf([&] { warehouse_->LoadSeed(people, SeedFile{(dir_ / "missing.csv").string(), {}}, Entry("x", "r")); }),
            "SLU-WAREHOUSE-012");
  EXPECT_EQ(Ledger().size(), 1u);
}

TEST_P(WarehouseConformance, CatalogListsUserRelationsWithColumnsAndDropRemovesThem) {
  warehouse_->ReplaceTable(R("t"), Select({{1, "2026-01-01"}}), Entry("s.t", "r"));
  warehouse_->ReplaceView(R("v"), "SELECT CAST(1 AS " + int_ + ") AS x", Entry("s.v", "r"));
  std::vector<TableInfo> mine;
  for (TableInfo& info : warehouse_->ListRelations()) {
    EXPECT_NE(info.relation.name_space, "_sluice");
    if (info.relation.name_space == namespace_) mine.push_back(info);
  }
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].relation, R("t"));
  EXPECT_FALSE(mine[0].is_view);
  ASSERT_EQ(mine[0].columns.size(), 2u);
  EXPECT_EQ(mine[0].columns[0].name, "id");
  EXPECT_EQ(mine[0].columns[1].name, "d");
  EXPECT_EQ(mine[1].relation, R("v"));
  EXPECT_TRUE(mine[1].is_view);
  EXPECT_FALSE(warehouse_->Describe(R("absent")));

  warehouse_->DropRelation(R("t"));
  warehouse_->DropRelation(R("v"));
  warehouse_->DropRelation(R("never"));
  EXPECT_FALSE(warehouse_->Describe(R("t")));
  EXPECT_FALSE(warehouse_->Describe(R("v")));
}

TEST_P(WarehouseConformance, IdentifiersThatNeedQuotesWork) {
  sql::Dialect dialect = warehouse_->dialect();
  Relation odd = R("Order Items-2026");
  std::string select = "SELECT CAST(1 AS " + int_ + ") AS " + sql::QuoteIdentifier(dialect, "Unit Price") +
                       ", CAST('2026-01-01' AS " + date_ + ") AS " + sql::QuoteIdentifier(dialect, "Event Day");
  warehouse_->ReplaceTable(odd, select, Entry("s.odd", "r1"));
  warehouse_->ReplaceTable(odd, select, Entry("s.odd", "r2"));
  warehouse_->ReplaceDateRange(R("Daily Items"), select, "Event Day", DateWindow{D("2026-01-01"), D("2026-01-02")},
                               Entry("s.daily", "r3"));
  warehouse_->ReplaceDateRange(R("Daily Items"), select, "Event Day", DateWindow{D("2026-01-01"), D("2026-01-02")},
                               Entry("s.daily", "r4"));
  EXPECT_EQ(Count(odd), "1");
  EXPECT_EQ(Count(R("Daily Items")), "1");
  std::optional<TableInfo> info = warehouse_->Describe(odd);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->columns[0].name, "Unit Price");
}

TEST_P(WarehouseConformance, QueryRendersValuesAsTextAndNullAsNullopt) {
  Rows rows = warehouse_->Query(GetParam() == "clickhouse" ? "SELECT CAST(NULL AS Nullable(String)) AS a, 'x' AS b"
                                                          : "SELECT CAST(NULL AS " + text_ + ") AS a, 'x' AS b");
  ASSERT_EQ(rows.rows.size(), 1u);
  EXPECT_EQ(rows.columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rows.rows[0][0], std::nullopt);
  EXPECT_EQ(rows.rows[0][1], std::optional<std::string>("x"));
}

// ---- Catalog facts and the Capabilities flags deploy/ asks instead of the dialect ----------------------------------

TEST_P(WarehouseConformance, CatalogOfANamespaceListsItsRelationsWithKindAndViewText) {
  warehouse_->ReplaceTable(R("orders"), Select({{1, "2026-01-01"}}), Entry("s.orders", "r1"));
  warehouse_->ReplaceView(R("recent"), "SELECT CAST(1 AS " + int_ + ") AS x", Entry("s.recent", "r2"));
  const std::vector<CatalogEntry> entries = warehouse_->CatalogOf(namespace_);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].relation, R("orders"));
  EXPECT_EQ(entries[0].kind, RelationKind::kTable);
  EXPECT_EQ(entries[0].definition, "");
  EXPECT_EQ(entries[1].relation, R("recent"));
  EXPECT_EQ(entries[1].kind, RelationKind::kView);
  EXPECT_NE(entries[1].definition, "");
  EXPECT_FALSE(entries[1].target.has_value());
  // Engines and keys are there exactly where the backend says tables have them.
  EXPECT_EQ(!entries[0].engine.empty(), warehouse_->capabilities().table_engines) << entries[0].engine;
  EXPECT_EQ(!entries[0].engine_full.empty(), warehouse_->capabilities().table_engines);
}

TEST_P(WarehouseConformance, CatalogOfRelationsFindsThoseThatExistSluiceOwnIncluded) {
  warehouse_->ReplaceTable(R("orders"), Select({{1, "2026-01-01"}}), Entry("s.orders", "r1"));
  EXPECT_TRUE(warehouse_->CatalogOf(std::vector<Relation>{}).empty());
  const std::vector<CatalogEntry> found =
      warehouse_->CatalogOf(std::vector<Relation>{R("absent"), R("orders"), Relation{"_sluice", "ledger"}});
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].relation, (Relation{"_sluice", "ledger"}));
  EXPECT_EQ(found[1].relation, R("orders"));
}

TEST_P(WarehouseConformance, MaterializedViewsWithATargetExistExactlyWhereDeclared) {
  warehouse_->ReplaceTable(R("source"), Select({{1, "2026-01-01"}}), Entry("s.source", "r1"));
  warehouse_->ReplaceTable(R("sink"), Select({{1, "2026-01-01"}}), Entry("s.sink", "r2"));
  const std::string create = "CREATE MATERIALIZED VIEW " + warehouse_->QualifiedName(R("feed")) + " TO " +
                             warehouse_->QualifiedName(R("sink")) + " AS SELECT id, d FROM " +
                             warehouse_->QualifiedName(R("source"));
  const bool created = CodeOf([&] { warehouse_->Execute(create); }) == "no error";
  ASSERT_EQ(created, warehouse_->capabilities().materialized_views);
  if (!created) return;
  const std::vector<CatalogEntry> feed = warehouse_->CatalogOf(std::vector<Relation>{R("feed")});
  ASSERT_EQ(feed.size(), 1u);
  EXPECT_EQ(feed[0].kind, RelationKind::kMaterializedView);
  EXPECT_EQ(feed[0].target, R("sink"));
}

TEST_P(WarehouseConformance, ReplacingAViewChangesItsColumnsExactlyWhereDeclared) {
  if (!warehouse_->capabilities().create_or_replace_view) GTEST_SKIP() << "no CREATE OR REPLACE VIEW on this server";
  const std::string view = warehouse_->QualifiedName(R("v"));
  warehouse_->Execute("CREATE VIEW " + view + " AS SELECT CAST(1 AS " + int_ + ") AS a");
  const std::string code =
      CodeOf([&] { warehouse_->Execute("CREATE OR REPLACE VIEW " + view + " AS SELECT CAST(2 AS " + int_ + ") AS b"); });
  EXPECT_EQ(code == "no error", warehouse_->capabilities().replace_view_changes_columns) << code;
}

TEST_P(WarehouseConformance, UnquotedNamesFoldToLowerCaseExactlyWhereDeclared) {
  warehouse_->ReplaceTable(R("MixedCase"), Select({{1, "2026-01-01"}}), Entry("s.MixedCase", "r1"));
  const std::string code = CodeOf([&] {
    warehouse_->Query("SELECT count(*) FROM " + sql::QuoteIdentifier(warehouse_->dialect(), namespace_) + ".MixedCase");
  });
  EXPECT_EQ(code != "no error", warehouse_->capabilities().folds_unquoted_identifiers) << code;
}

TEST_P(WarehouseConformance, InsertMarksAreReadFromTheCatalogOrRefusedClearly) {
  warehouse_->ReplaceTable(R("orders"), Select({{1, "2026-01-01"}, {2, "2026-01-02"}}), Entry("s.orders", "r1"));
  std::optional<std::map<std::string, int64_t>> counts = warehouse_->CatalogRowCounts(namespace_);
  if (GetParam() != "clickhouse") {
    EXPECT_FALSE(counts.has_value());
    EXPECT_EQ(CodeOf([&] { warehouse_->InsertWatermark(R("orders")); }), "SLU-WAREHOUSE-034");
    EXPECT_EQ(CodeOf([&] { warehouse_->RunningInserts(std::chrono::seconds(1)); }), "SLU-WAREHOUSE-034");
    return;
  }
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ((*counts)["orders"], 2);
  const std::string before = warehouse_->InsertWatermark(R("orders"));
  warehouse_->Execute("INSERT INTO " + warehouse_->QualifiedName(R("orders")) + " SELECT id, d FROM " +
                      warehouse_->QualifiedName(R("orders")));
  EXPECT_NE(warehouse_->InsertWatermark(R("orders")), before);
  EXPECT_EQ(warehouse_->RunningInserts(std::chrono::hours(1)), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, WarehouseConformance, ::testing::Values("duckdb", "clickhouse", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace sluice
