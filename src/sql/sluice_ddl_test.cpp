#include "sql/sluice_ddl.hpp"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

TEST(CreateTextTable, IsVarcharColumnsOutsideClickHouse) {
  EXPECT_EQ(CreateTextTable(Dialect::kDuckDb, "\"_sluice\".\"t\"", {{"a", false}, {"b", true}}, {"a"}),
            "CREATE TABLE IF NOT EXISTS \"_sluice\".\"t\" (\"a\" VARCHAR, \"b\" VARCHAR)");
  EXPECT_EQ(CreateTextTable(Dialect::kPostgres, "\"_sluice\".\"t\"", {{"a", false}}, {"a"}),
            "CREATE TABLE IF NOT EXISTS \"_sluice\".\"t\" (\"a\" VARCHAR)");
}

TEST(CreateTextTable, IsAnOrderedMergeTreeOfStringsOnClickHouse) {
  EXPECT_EQ(CreateTextTable(Dialect::kClickHouse, "`_sluice`.`t`", {{"a", false}, {"b", true}}, {"a", "b"}),
            "CREATE TABLE IF NOT EXISTS `_sluice`.`t` (`a` String, `b` Nullable(String)) ENGINE = MergeTree() "
            "ORDER BY (`a`, `b`)");
}

TEST(CreateTableAs, GivesClickHouseATinyLogEngine) {
  EXPECT_EQ(CreateTableAs(Dialect::kDuckDb, "\"s\".\"t\"", "SELECT 1"), "CREATE TABLE \"s\".\"t\" AS SELECT 1");
  EXPECT_EQ(CreateTableAs(Dialect::kClickHouse, "`s`.`t`", "SELECT 1"),
            "CREATE TABLE `s`.`t` ENGINE = TinyLog AS SELECT 1");
}

TEST(DropRelation, DropsViewsAsViewsExceptOnClickHouse) {
  EXPECT_EQ(DropRelation(Dialect::kDuckDb, "v", true, true), "DROP VIEW IF EXISTS v");
  EXPECT_EQ(DropRelation(Dialect::kPostgres, "t", false, false), "DROP TABLE IF EXISTS t");
  EXPECT_EQ(DropRelation(Dialect::kClickHouse, "v", true, false), "DROP TABLE IF EXISTS v");
  EXPECT_EQ(DropRelation(Dialect::kClickHouse, "t", false, true), "DROP TABLE IF EXISTS t SYNC");
}

}  // namespace
}  // namespace sluice::sql
