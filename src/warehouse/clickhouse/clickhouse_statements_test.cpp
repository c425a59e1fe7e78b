// The ClickHouse backend's pure parts: statements rendered for an old server (18.16, every flag false) and a modern
// one (flags forced true), exception and result parsing, seed CSV reading, RequireCapability. No server needed; the
// old path also runs against the real 18.16 server in clickhouse_warehouse_test.cpp.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "core/diagnostic.hpp"
#include "warehouse/clickhouse/clickhouse_capabilities.hpp"
#include "warehouse/clickhouse/clickhouse_http.hpp"
#include "warehouse/clickhouse/clickhouse_seed.hpp"
#include "warehouse/clickhouse/clickhouse_statements.hpp"
#include "warehouse/seed_table.hpp"

namespace sluice {
namespace {

Capabilities Old() {
  Capabilities capabilities;
  capabilities.server_version = "18.16.1";
  return capabilities;
}

Capabilities Modern() {
  Capabilities capabilities;
  capabilities.server_version = "25.8.1.1";
  capabilities.create_or_replace_view = capabilities.exchange_tables = capabilities.datetime64 = true;
  capabilities.ttl = capabilities.double_colon_cast = capabilities.window_functions = true;
  capabilities.is_not_distinct_from = capabilities.drop_sync = capabilities.atomic_databases = true;
  return capabilities;
}

const Relation kTarget{"shop", "orders"};
const Relation kStaging{"_sluice", "stage_new"};
const Relation kDisplaced{"_sluice", "stage_old"};

TEST(ClickHouseStatements, OldServerSwapsByOneRenameAndDropsTheDisplacedTable) {
  ClickHouseStatements statements(Old());
  EXPECT_EQ(statements.SwapIn(ExistingKind::kTable, kTarget, kStaging, kDisplaced),
            (std::vector<std::string>{
                "RENAME TABLE `shop`.`orders` TO `_sluice`.`stage_old`, `_sluice`.`stage_new` TO `shop`.`orders`",
                "DROP TABLE IF EXISTS `_sluice`.`stage_old`"}));
}

TEST(ClickHouseStatements, ModernServerExchangesTablesAndDropsSync) {
  ClickHouseStatements statements(Modern());
  EXPECT_EQ(statements.SwapIn(ExistingKind::kTable, kTarget, kStaging, kDisplaced),
            (std::vector<std::string>{"EXCHANGE TABLES `_sluice`.`stage_new` AND `shop`.`orders`",
                                      "DROP TABLE IF EXISTS `_sluice`.`stage_new` SYNC"}));
}

TEST(ClickHouseStatements, ExchangeNeedsAtomicDatabasesSoOrdinaryOnesRename) {
  ClickHouseStatements statements = ClickHouseStatements(Modern()).ForOrdinaryDatabase();
  std::vector<std::string> swap = statements.SwapIn(ExistingKind::kTable, kTarget, kStaging, kDisplaced);
  ASSERT_EQ(swap.size(), 2u);
  EXPECT_EQ(swap[0].rfind("RENAME TABLE", 0), 0u) << swap[0];
  EXPECT_EQ(swap[1], "DROP TABLE IF EXISTS `_sluice`.`stage_old` SYNC");
}

TEST(ClickHouseStatements, AnAbsentTargetOrAViewIsReplacedByRenameOnEveryServer) {
  for (const Capabilities& capabilities : {Old(), Modern()}) {
    ClickHouseStatements statements(capabilities);
    EXPECT_EQ(statements.SwapIn(ExistingKind::kAbsent, kTarget, kStaging, kDisplaced),
              (std::vector<std::string>{"RENAME TABLE `_sluice`.`stage_new` TO `shop`.`orders`"}));
    EXPECT_EQ(statements.SwapIn(ExistingKind::kView, kTarget, kStaging, kDisplaced)[0].rfind("RENAME TABLE", 0), 0u);
  }
}

TEST(ClickHouseStatements, DatabasesAreAtomicWhereTheServerHasThem) {
  EXPECT_EQ(ClickHouseStatements(Old()).CreateDatabase("my db"), "CREATE DATABASE IF NOT EXISTS `my db`");
  EXPECT_EQ(ClickHouseStatements(Modern()).CreateDatabase("shop"),
            "CREATE DATABASE IF NOT EXISTS `shop` ENGINE = Atomic");
}

TEST(ClickHouseStatements, ViewsAreReplacedInPlaceOrStagedAndRenamed) {
  const std::string select = "SELECT 1 AS x -- comment;\n;";
  std::vector<ClickHouseStatement> modern =
      ClickHouseStatements(Modern()).ReplaceView(ExistingKind::kView, kTarget, kStaging, kDisplaced, select);
  ASSERT_EQ(modern.size(), 1u);
  EXPECT_EQ(modern[0].sql, "CREATE OR REPLACE VIEW `shop`.`orders` AS SELECT * FROM (\nSELECT 1 AS x -- comment;\n)");
  EXPECT_EQ(modern[0].sql.substr(modern[0].select_begin, modern[0].select_size), "SELECT 1 AS x -- comment;");

  std::vector<ClickHouseStatement> old =
      ClickHouseStatements(Old()).ReplaceView(ExistingKind::kView, kTarget, kStaging, kDisplaced, select);
  ASSERT_EQ(old.size(), 3u);
  EXPECT_EQ(old[0].sql.rfind("CREATE VIEW `_sluice`.`stage_new` AS SELECT * FROM (", 0), 0u);
  EXPECT_EQ(old[1].sql,
            "RENAME TABLE `shop`.`orders` TO `_sluice`.`stage_old`, `_sluice`.`stage_new` TO `shop`.`orders`");
  EXPECT_EQ(old[2].sql, "DROP TABLE IF EXISTS `_sluice`.`stage_old`");

  // A table in the way is swapped out even where CREATE OR REPLACE VIEW exists (it replaces views only).
  std::vector<ClickHouseStatement> over_table =
      ClickHouseStatements(Modern()).ReplaceView(ExistingKind::kTable, kTarget, kStaging, kDisplaced, select);
  ASSERT_EQ(over_table.size(), 3u);
  EXPECT_EQ(over_table[1].sql.rfind("RENAME TABLE", 0), 0u);
}

TEST(ClickHouseStatements, DatePartitionsAreNamedByDay) {
  Date day = *Date::Parse("2026-01-02");
  EXPECT_EQ(ClickHouseStatements::ReplacePartition(kTarget, day, kStaging),
            "ALTER TABLE `shop`.`orders` REPLACE PARTITION '2026-01-02' FROM `_sluice`.`stage_new`");
  EXPECT_EQ(ClickHouseStatements::DropPartition(kTarget, day), "ALTER TABLE `shop`.`orders` DROP PARTITION '2026-01-02'");
  EXPECT_EQ(ClickHouseStatements::InWindow("event date", DateWindow{day, day.AddDays(2)}),
            "`event date` >= toDate('2026-01-02') AND `event date` < toDate('2026-01-04')");
  EXPECT_EQ(ClickHouseStatements::PartitionKey("d", true), "`d`");
  EXPECT_EQ(ClickHouseStatements::PartitionKey("ts", false), "toDate(`ts`)");
  // The first window write creates its table empty; a concurrent first write finds it made.
  EXPECT_EQ(ClickHouseStatements::CreatePartitionedIfMissing(kTarget, kStaging, "ts", false),
            "CREATE TABLE IF NOT EXISTS `shop`.`orders` ENGINE = MergeTree() PARTITION BY toDate(`ts`) ORDER BY `ts` "
            "AS SELECT * FROM `_sluice`.`stage_new` WHERE 0");
}

TEST(ClickHouseStatements, LedgerValuesAreEscapedLiterals) {
  LedgerEntry entry;
  entry.asset = "shop.o'rders";
  entry.run_id = "run\\1";
  entry.window = DateWindow{*Date::Parse("2026-01-01"), *Date::Parse("2026-01-03")};
  std::string sql = ClickHouseStatements::InsertLedger(kTarget, entry, 7, "2026-01-05T00:00:00.000Z");
  EXPECT_NE(sql.find("'shop.o\\'rders'"), std::string::npos) << sql;
  EXPECT_NE(sql.find("'run\\\\1'"), std::string::npos) << sql;
  EXPECT_NE(sql.find("toDate('2026-01-01'), toDate('2026-01-03')"), std::string::npos) << sql;
  entry.window.reset();
  EXPECT_NE(ClickHouseStatements::InsertLedger(kTarget, entry, 7, "x").find("NULL, NULL"), std::string::npos);
}

TEST(ClickHouseExceptions, BothGenerationsOfTheTextAreParsed) {
  ClickHouseFailure old = ParseClickHouseException(
      "Code: 62, e.displayText() = DB::Exception: Syntax error: failed at position 9: ::Int32. Expected one of: AS, "
      "e.what() = DB::Exception\n");
  EXPECT_EQ(old.code, 62);
  EXPECT_EQ(old.message, "Syntax error: failed at position 9: ::Int32. Expected one of: AS");
  EXPECT_EQ(old.position, 8u);

  ClickHouseFailure modern = ParseClickHouseException(
      "Code: 60. DB::Exception: Table shop.x does not exist. (UNKNOWN_TABLE) (version 25.8.1.1 (official build))\n");
  EXPECT_EQ(modern.code, 60);
  EXPECT_EQ(modern.message, "Table shop.x does not exist");
  EXPECT_FALSE(modern.position);

  ClickHouseFailure other = ParseClickHouseException("<html>Bad gateway</html>");
  EXPECT_EQ(other.code, 0);
  EXPECT_EQ(other.message, "<html>Bad gateway</html>");
}

TEST(ClickHouseResults, TabSeparatedEscapesAndNullsAreUndone) {
  TabSeparatedResult result =
      ParseTabSeparatedWithNamesAndTypes("a\tb\nString\tNullable(String)\nx\\ty\t\\N\n\\\\N\t\n");
  EXPECT_EQ(result.names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(result.types, (std::vector<std::string>{"String", "Nullable(String)"}));
  ASSERT_EQ(result.rows.size(), 2u);
  EXPECT_EQ(result.rows[0][0], std::optional<std::string>("x\ty"));
  EXPECT_EQ(result.rows[0][1], std::nullopt);
  EXPECT_EQ(result.rows[1][0], std::optional<std::string>("\\N"));
  EXPECT_EQ(result.rows[1][1], std::optional<std::string>(""));
  EXPECT_EQ(EscapeTabSeparated(std::string("a\tb\\\n")), "a\\tb\\\\\\n");
  EXPECT_EQ(EscapeTabSeparated(std::nullopt), "\\N");
}

std::string CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front().code;
  }
  return "no error";
}

// The seed file `text`, written to a temporary file, as ReadSeedTable reads it for relation shop.x.
SeedTable ReadSeed(const std::string& text, std::vector<std::pair<std::string, std::string>> columns = {}) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("sluice_seed_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path, std::ios::binary) << text;
  SeedFile seed{path.string(), std::move(columns), "seeds/x.csv"};
  struct Remove {
    std::filesystem::path path;
    ~Remove() { std::filesystem::remove(path); }
  } remove{path};
  return ReadSeedTable(Relation{"shop", "x"}, seed, kClickHouseSeedTypes);
}

// The error a seed file is refused with, as "file:line:column CODE".
std::string Refusal(const std::string& text, std::vector<std::pair<std::string, std::string>> columns = {}) {
  try {
    ReadSeed(text, std::move(columns));
  } catch (const Error& e) {
    const Diagnostic& d = e.diagnostics().front();
    return d.location.file + ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " +
           d.code;
  }
  return "accepted";
}

TEST(ClickHouseSeeds, EmptyIsNullQuotedEmptyIsTextAndTypesComeFromEveryRow) {
  SeedTable table = ReadSeed("id,name,day,price\n1,\"a, \"\"b\"\"\",2026-01-01,1.5\n2,\"\",,\n3,,2026-01-03,2\n",
                             {{"price", "Decimal(9, 2)"}});
  EXPECT_EQ(table.columns, (std::vector<std::string>{"id", "name", "day", "price"}));
  EXPECT_EQ(table.types, (std::vector<std::string>{"Int64", "Nullable(String)", "Nullable(Date)", "Decimal(9, 2)"}));
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0][1], std::optional<std::string>("a, \"b\""));
  EXPECT_EQ(table.rows[1][1], std::optional<std::string>(""));
  EXPECT_EQ(table.rows[2][1], std::nullopt);
  EXPECT_EQ(table.lines, (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(SeedRowsAsTabSeparated(table).substr(0, 33), "1\ta, \"b\"\t2026-01-01\t1.5\n2\t\t\\N\t\\N\n");
}

// The one seed CSV reader's errors (core/seed_csv.hpp), located in the file: an unclosed quote where the field opened.
TEST(ClickHouseSeeds, AFileOutsideTheDialectIsRefusedWhereItGoesWrong) {
  EXPECT_EQ(Refusal("a,b\n1\n"), "seeds/x.csv:2:2 SLU-SEED-002");
  EXPECT_EQ(Refusal("a\n1\n\"open\n"), "seeds/x.csv:3:1 SLU-SEED-001");
  EXPECT_EQ(Refusal("a\n1\n", {{"b", "Int64"}}), ":0:0 SLU-WAREHOUSE-011");
  SeedFile missing{"/nonexistent/sluice/seed.csv", {}, "seeds/x.csv"};
  EXPECT_EQ(CodeOf([&] { ReadSeedTable(Relation{"shop", "x"}, missing, kClickHouseSeedTypes); }), "SLU-WAREHOUSE-012");
}

TEST(ClickHouseCapabilities, EveryMissingFeatureIsOneLocatedErrorNamingTheServerVersion) {
  const ServerFeature features[] = {ServerFeature::kDateTime64,        ServerFeature::kTtl,
                                    ServerFeature::kDoubleColonCast,   ServerFeature::kWindowFunctions,
                                    ServerFeature::kIsNotDistinctFrom, ServerFeature::kDropSync,
                                    ServerFeature::kAtomicDatabases,   ServerFeature::kCreateOrReplaceView,
                                    ServerFeature::kExchangeTables};
  SourceLocation where{"pipelines/silver/orders.sql", 3, 14};
  for (ServerFeature feature : features) {
    EXPECT_FALSE(HasFeature(Old(), feature));
    EXPECT_TRUE(HasFeature(Modern(), feature));
    EXPECT_NO_THROW(RequireCapability(Modern(), feature, where, "model silver.orders"));
    try {
      RequireCapability(Old(), feature, where, "model silver.orders");
      ADD_FAILURE() << "expected an error for " << FeatureName(feature);
    } catch (const Error& e) {
      const Diagnostic& d = e.diagnostics().front();
      EXPECT_EQ(e.diagnostics().size(), 1u);
      EXPECT_EQ(d.code, "SLU-CLICKHOUSE-001");
      EXPECT_EQ(d.location, where);
      EXPECT_NE(d.message.find("18.16.1"), std::string::npos) << d.message;
      EXPECT_NE(d.message.find(FeatureName(feature)), std::string::npos) << d.message;
      EXPECT_NE(d.message.find("model silver.orders"), std::string::npos) << d.message;
      EXPECT_FALSE(d.hint.empty());
    }
  }
}

}  // namespace
}  // namespace sluice
