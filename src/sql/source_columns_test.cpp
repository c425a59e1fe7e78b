#include "sql/source_columns.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace sluice::sql {
namespace {

const std::map<std::string, std::string> kRoles = {
    {"_replay_offset", "ofs"}, {"_replay_partition", "part"}, {"_replay_timestamp", "_replay_timestamp"}};

// The SQL as it reads the source at `source` by its physical names.
std::string Renamed(const std::string& sql, const std::string& source, Dialect dialect = Dialect::kClickHouse) {
  return ReplaceSpans(sql, RenameSourceColumns(sql, dialect, sql.find(source), kRoles));
}

TEST(RenameSourceColumns, ReadsUnqualifiedAndAliasQualifiedRolesByTheirPhysicalNames) {
  EXPECT_EQ(Renamed("SELECT CAST(_replay_offset AS Int64) AS _replay_offset, CAST(c._replay_partition AS Int32) "
                    "AS _replay_partition FROM __source(\"clicks\") AS c WHERE c._replay_offset > 3 "
                    "ORDER BY _replay_offset",
                    "__source"),
            "SELECT CAST(ofs AS Int64) AS _replay_offset, CAST(c.part AS Int32) AS _replay_partition "
            "FROM __source(\"clicks\") AS c WHERE c.ofs > 3 ORDER BY ofs");
}

TEST(RenameSourceColumns, LeavesAliasesFunctionsOtherQualifiersAndUnmappedNamesAlone) {
  EXPECT_EQ(Renamed("SELECT CAST(x AS Int64) _replay_offset, d._replay_offset AS o, _replay_timestamp AS t "
                    "FROM __source(\"clicks\") AS c JOIN dims AS d ON d.k = c.k",
                    "__source"),
            "SELECT CAST(x AS Int64) _replay_offset, d._replay_offset AS o, _replay_timestamp AS t "
            "FROM __source(\"clicks\") AS c JOIN dims AS d ON d.k = c.k");
}

TEST(RenameSourceColumns, RenamesOnlyInTheBlockReadingTheSourceAndAddsTheCanonicalNamesToItsStar) {
  const std::string sql =
      "WITH s AS (SELECT * FROM __source(\"clicks\") WHERE _replay_offset > 0) "
      "SELECT CAST(_replay_offset AS Int64) AS _replay_offset FROM s "
      "WHERE _replay_partition IN (SELECT _replay_partition FROM parts)";
  EXPECT_EQ(Renamed(sql, "__source"),
            "WITH s AS (SELECT *, ofs AS _replay_offset, part AS _replay_partition FROM __source(\"clicks\") "
            "WHERE ofs > 0) SELECT CAST(_replay_offset AS Int64) AS _replay_offset FROM s "
            "WHERE _replay_partition IN (SELECT _replay_partition FROM parts)");
  EXPECT_EQ(Renamed("SELECT c.*, 1 AS one FROM __source(\"clicks\") AS c", "__source"),
            "SELECT c.*, c.ofs AS _replay_offset, c.part AS _replay_partition, 1 AS one FROM __source(\"clicks\") AS c");
}

TEST(RenameSourceColumns, QuotedNamesCompareAsTheDialectComparesThem) {
  EXPECT_EQ(Renamed("SELECT \"_REPLAY_OFFSET\" AS o FROM __source('clicks')", "__source", Dialect::kDuckDb),
            "SELECT ofs AS o FROM __source('clicks')");
  EXPECT_EQ(Renamed("SELECT `_replay_offset` AS o FROM __source('clicks')", "__source"),
            "SELECT ofs AS o FROM __source('clicks')");
}

TEST(RenameSourceColumns, NothingForASourceNoBlockReadsOrRolesWithTheirOwnNames) {
  EXPECT_TRUE(RenameSourceColumns("SELECT _replay_offset AS o FROM t", Dialect::kClickHouse, 1000, kRoles).empty());
  EXPECT_TRUE(RenameSourceColumns("SELECT _replay_offset AS o FROM t", Dialect::kClickHouse, 32,
                                  {{"_replay_offset", "_replay_offset"}})
                  .empty());
}

}  // namespace
}  // namespace sluice::sql
