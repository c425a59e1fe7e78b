#include "sql/select_parser.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <random>
#include <string>

#include "core/diagnostic.hpp"
#include "sql/keyword_table.hpp"
#include "sql/select_parser_internal.hpp"

namespace sluice::sql {
namespace {

constexpr Dialect kAllDialects[] = {Dialect::kDuckDb, Dialect::kClickHouse, Dialect::kPostgres, Dialect::kBigQuery};

// The keyword table packs a word into fixed-size loads: each length from 2 to 16 bytes, any case, and words
// that only share a prefix, a suffix or a length with a keyword.
TEST(SelectParserWords, ClassifiesKeywordsOfEveryLengthIgnoringCase) {
  namespace tc = token_class;
  EXPECT_EQ(WordClasses("as"), tc::kAs | tc::kExpressionKeyword);
  EXPECT_EQ(WordClasses("AS"), WordClasses("as"));
  EXPECT_EQ(WordClasses("aS"), WordClasses("as"));
  EXPECT_EQ(WordClasses("end"), tc::kEnd | tc::kExpressionKeyword);
  EXPECT_EQ(WordClasses("Case"), tc::kCase | tc::kExpressionKeyword);
  EXPECT_EQ(WordClasses("CAST"), tc::kCast);
  EXPECT_EQ(WordClasses("WHERE"), tc::kBoundary);      // 5 bytes
  EXPECT_EQ(WordClasses("Select"), tc::kSelect);       // 6 bytes
  EXPECT_EQ(WordClasses("NATURAL"), tc::kJoinPrefix);  // 7 bytes
  EXPECT_EQ(WordClasses("VALUES"), tc::kValues);
  EXPECT_EQ(WordClasses("LEFT"), tc::kBoundary | tc::kJoinPrefix);
  EXPECT_EQ(WordClasses("try_cast"), tc::kCast);   // 8 bytes, with '_'
  EXPECT_EQ(WordClasses("Safe_Cast"), tc::kCast);  // 9 bytes
  EXPECT_EQ(WordClasses("INTERSECT"), tc::kBoundary);
  EXPECT_EQ(WordClasses("positional"), tc::kJoinPrefix);  // 10 bytes
  EXPECT_EQ(WordClasses("PRECISION"), tc::kExpressionKeyword | tc::kTypeContinuation | tc::kTypeEnd);
  EXPECT_EQ(WordClasses("__ref"), tc::kReferenceCall);
  EXPECT_EQ(WordClasses("__Source"), tc::kReferenceCall);  // the readers compare the text: only __source counts
  // Every word of every list has its list's bit, in lower and upper case (the table's first-letter filter and
  // its probe both pass it).
  for (const auto& list : keyword_table_internal::kKeywordLists) {
    for (std::string_view word : list.words) {
      std::string upper(word);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      EXPECT_NE(WordClasses(word) & list.token_class, 0u) << word;
      EXPECT_EQ(WordClasses(upper), WordClasses(word)) << word;
    }
  }
  // The table is built at compile time from the same keys, read there byte by byte.
  static_assert(WordClasses("Try_Cast") == tc::kCast);
  static_assert(WordClasses("PRECISION") == (tc::kExpressionKeyword | tc::kTypeContinuation | tc::kTypeEnd));
  static_assert(WordClasses("casts") == 0);
  // The public readers of two lists (the model contract's storage-expression check uses them).
  EXPECT_TRUE(IsCastFunctionName("Try_Cast"));
  EXPECT_FALSE(IsCastFunctionName("casts"));
  EXPECT_TRUE(IsTypeContinuationWord("ZONE"));
  EXPECT_FALSE(IsTypeContinuationWord("zones"));
  for (std::string_view word : {"a",
                                "d",
                                "c0",
                                "cas",
                                "casts",
                                "ass",
                                "as_",
                                "a_s",
                                "trycast",
                                "try_casts",
                                "intersectx",
                                "xintersect",
                                "positionals",
                                "abcdefghijklmnop",
                                "abcdefghijklmnopq",
                                "ends",
                                "cend",
                                "left_id",
                                "order_id",
                                "fromage",
                                "__refs",
                                "_ref",
                                "id"}) {
    EXPECT_EQ(WordClasses(word), 0u) << word;
  }
}

std::string_view At(std::string_view text, TextSpan span) { return text.substr(span.begin, span.end - span.begin); }

Diagnostic ErrorOf(std::string_view text, Dialect dialect = Dialect::kClickHouse) {
  try {
    ParseSelect(text, dialect, "models/m.sql");
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  return Diagnostic{"no error", {}, {}, {}, {}};
}

void ExpectError(std::string_view text, const std::string& code, int line, int column,
                 Dialect dialect = Dialect::kClickHouse) {
  Diagnostic d = ErrorOf(text, dialect);
  EXPECT_EQ(d.code, code) << text << "\n" << d.message;
  EXPECT_EQ(d.location.file, "models/m.sql") << text;
  EXPECT_EQ(d.location.line, line) << text << "\n" << d.message;
  EXPECT_EQ(d.location.column, column) << text << "\n" << d.message;
  EXPECT_FALSE(d.hint.empty()) << text;
}

const ProjectionItem& Item(const SelectStatement& s, size_t index) { return s.outer().projection.at(index); }

// ---- statements ----

TEST(ParseSelect, CountsStatementsSplitAtTopLevelSemicolons) {
  EXPECT_EQ(ParseSelect("SELECT 1", Dialect::kClickHouse).statement_count(), 1u);
  EXPECT_EQ(ParseSelect("SELECT 1;", Dialect::kClickHouse).statement_count(), 1u);
  EXPECT_EQ(ParseSelect("SELECT 1; ;; -- done\n", Dialect::kClickHouse).statement_count(), 1u);
  EXPECT_EQ(ParseSelect("SELECT 1; SELECT 2", Dialect::kClickHouse).statement_count(), 2u);
  EXPECT_EQ(ParseSelect("SELECT ';'; DROP TABLE x;", Dialect::kClickHouse).statement_count(), 2u);
}

TEST(ParseSelect, ReportsStatementSpans) {
  std::string text = "SELECT 1 ;\n  SELECT 2";
  SelectStatement s = ParseSelect(text, Dialect::kDuckDb);
  ASSERT_EQ(s.statements.size(), 2u);
  EXPECT_EQ(At(text, s.statements[0]), "SELECT 1");
  EXPECT_EQ(At(text, s.statements[1]), "SELECT 2");
}

TEST(ParseSelect, EmptyTextHasNoStatement) {
  for (std::string text : {"", "   ", ";", "-- only a comment\n", "/* c */ ; ;"}) {
    SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
    EXPECT_EQ(s.kind, StatementKind::kEmpty) << text;
    EXPECT_EQ(s.statement_count(), 0u) << text;
  }
}

TEST(ParseSelect, NonQueryStatementsAreKindOtherAndNotParsed) {
  std::string text = "INSERT INTO t VALUES (1)";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  EXPECT_EQ(s.kind, StatementKind::kOther);
  EXPECT_EQ(At(text, s.first_token), "INSERT");
  EXPECT_TRUE(s.blocks.empty());
  EXPECT_EQ(ParseSelect("FROM t SELECT a", Dialect::kDuckDb).kind, StatementKind::kOther);
  EXPECT_EQ(ParseSelect("CREATE TABLE t (a Int) ENGINE = Memory", Dialect::kClickHouse).kind, StatementKind::kOther);
}

TEST(ParseSelect, OnlyTheFirstStatementIsParsed) {
  SelectStatement s = ParseSelect("SELECT a FROM t; SELECT b b b b FROM", Dialect::kClickHouse);
  EXPECT_EQ(s.statement_count(), 2u);
  EXPECT_EQ(s.blocks.size(), 1u);
}

TEST(ParseSelect, ParenthesizedQueryIsAQuery) {
  SelectStatement s = ParseSelect("((SELECT CAST(a AS Int32) AS a FROM __ref('x')))", Dialect::kClickHouse);
  EXPECT_EQ(s.kind, StatementKind::kQuery);
  ASSERT_EQ(s.outer().projection.size(), 1u);
  EXPECT_EQ(s.outer().role, BlockRole::kOuter);
  EXPECT_EQ(s.outer().sources.at(0).kind, SourceKind::kReference);
}

// ---- projection items ----

TEST(ParseSelect, ProjectionItemsHaveSpansAndAliases) {
  std::string text = "SELECT a, b AS bee, c cee, \"d d\" AS \"D D\", f(x) + 1 AS g FROM t";
  SelectStatement s = ParseSelect(text, Dialect::kDuckDb);
  const QueryBlock& outer = s.outer();
  ASSERT_EQ(outer.projection.size(), 5u);
  EXPECT_EQ(At(text, outer.projection[0].span), "a");
  EXPECT_FALSE(outer.projection[0].alias);
  EXPECT_EQ(At(text, outer.projection[1].span), "b AS bee");
  EXPECT_EQ(At(text, outer.projection[1].expression), "b");
  EXPECT_EQ(outer.projection[1].alias, "bee");
  EXPECT_EQ(At(text, *outer.projection[1].alias_span), "bee");
  EXPECT_EQ(outer.projection[2].alias, "cee");
  EXPECT_EQ(At(text, outer.projection[2].expression), "c");
  EXPECT_EQ(outer.projection[3].alias, "D D");
  EXPECT_EQ(At(text, outer.projection[4].expression), "f(x) + 1");
  EXPECT_EQ(outer.projection[4].alias, "g");
}

TEST(ParseSelect, BacktickAliasesInClickHouseAndBigQuery) {
  EXPECT_EQ(Item(ParseSelect("SELECT 1 AS `my col`", Dialect::kClickHouse), 0).alias, "my col");
  EXPECT_EQ(Item(ParseSelect("SELECT 1 AS `my col`", Dialect::kBigQuery), 0).alias, "my col");
}

TEST(ParseSelect, BareAliasIsNotTakenFromKeywordsAndIntervals) {
  auto alias_of = [](std::string text, Dialect dialect = Dialect::kClickHouse) {
    return Item(ParseSelect(text, dialect), 0).alias;
  };
  EXPECT_FALSE(alias_of("SELECT x IS NULL FROM t"));
  EXPECT_FALSE(alias_of("SELECT x IS NOT TRUE FROM t"));
  EXPECT_FALSE(alias_of("SELECT now() - INTERVAL 1 DAY FROM t"));
  EXPECT_FALSE(alias_of("SELECT sum(x) OVER w FROM t WINDOW w AS (ORDER BY y)"));
  EXPECT_FALSE(alias_of("SELECT DATE '2020-01-01' FROM t"));
  EXPECT_FALSE(alias_of("SELECT CASE WHEN a THEN 1 ELSE 2 END FROM t"));
  EXPECT_EQ(alias_of("SELECT CASE WHEN a THEN 1 ELSE 2 END total FROM t"), "total");
  EXPECT_EQ(alias_of("SELECT now() - INTERVAL 1 DAY AS yesterday FROM t"), "yesterday");
  EXPECT_EQ(alias_of("SELECT x::timestamp with time zone ts FROM t", Dialect::kPostgres), "ts");
  EXPECT_FALSE(alias_of("SELECT x::double precision FROM t", Dialect::kPostgres));
}

TEST(ParseSelect, StarAndQualifiedStar) {
  std::string text = "SELECT *, t.*, s.t.*, count(*) AS n, a * b AS p FROM s.t AS t";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  const auto& items = s.outer().projection;
  ASSERT_EQ(items.size(), 5u);
  EXPECT_TRUE(items[0].star);
  EXPECT_FALSE(items[0].star_qualifier);
  EXPECT_TRUE(items[1].star);
  EXPECT_EQ(items[1].star_qualifier, "t");
  EXPECT_TRUE(items[2].star);
  EXPECT_EQ(items[2].star_qualifier, "s.t");
  EXPECT_FALSE(items[3].star);
  EXPECT_FALSE(items[4].star);
}

TEST(ParseSelect, StarModifiersStayInTheStarItem) {
  SelectStatement ch = ParseSelect("SELECT * EXCEPT (a, b), c FROM t", Dialect::kClickHouse);
  ASSERT_EQ(ch.outer().projection.size(), 2u);
  EXPECT_TRUE(ch.outer().projection[0].star);
  EXPECT_TRUE(ch.set_operations.empty());
  SelectStatement bq = ParseSelect("SELECT t.* EXCEPT (a) FROM `p.d.t` AS t", Dialect::kBigQuery);
  EXPECT_EQ(bq.outer().projection.size(), 1u);
  EXPECT_TRUE(ParseSelect("SELECT * EXCLUDE (a) FROM t", Dialect::kDuckDb).outer().projection[0].star);
  EXPECT_TRUE(ParseSelect("SELECT * REPLACE (a + 1 AS a) FROM t", Dialect::kDuckDb).outer().projection[0].star);
}

// ---- casts ----

struct CastCase {
  Dialect dialect;
  std::string item;                 // the whole projection item
  std::optional<std::string> type;  // expected cast type text; nullopt: not a cast
  CastSyntax syntax = CastSyntax::kCast;
};

TEST(ParseSelect, RecognizesOutermostExplicitCastsWithTheirTypeAsAuthored) {
  const CastCase cases[] = {
      {Dialect::kClickHouse, "CAST(ts AS DateTime64(3)) AS ts", "DateTime64(3)"},
      {Dialect::kClickHouse, "CAST(name AS Nullable(String)) AS name", "Nullable(String)"},
      {Dialect::kDuckDb, "CAST(amount AS DECIMAL(12, 2)) AS amount", "DECIMAL(12, 2)"},
      {Dialect::kDuckDb, "cast(amount as decimal(12,2)) amount", "decimal(12,2)"},
      {Dialect::kDuckDb, "TRY_CAST(x AS INTEGER) AS x", "INTEGER", CastSyntax::kTryCast},
      {Dialect::kBigQuery, "SAFE_CAST(x AS INT64) AS x", "INT64", CastSyntax::kSafeCast},
      {Dialect::kBigQuery, "CAST(d AS STRING FORMAT 'YYYY') AS y", "STRING"},
      {Dialect::kBigQuery, "CAST(a AS ARRAY<STRING>) AS a", "ARRAY<STRING>"},
      {Dialect::kClickHouse, "CAST(x, 'UInt8') AS x", "UInt8"},
      {Dialect::kClickHouse, "CAST(CAST(x AS Int32) AS String) AS x", "String"},
      {Dialect::kClickHouse, "((CAST(x AS Int32))) AS x", "Int32"},
      {Dialect::kClickHouse, "CAST((SELECT max(a) FROM __ref('r')) AS Int64) AS m", "Int64"},
      {Dialect::kDuckDb, "x::DECIMAL(12,2) AS x", "DECIMAL(12,2)", CastSyntax::kDoubleColon},
      {Dialect::kDuckDb, "x::INTEGER[] AS x", "INTEGER[]", CastSyntax::kDoubleColon},
      {Dialect::kPostgres, "x::timestamp with time zone AS x", "timestamp with time zone", CastSyntax::kDoubleColon},
      {Dialect::kPostgres, "x::double precision d", "double precision", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "x::Nullable(String) AS x", "Nullable(String)", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "(a + b)::Decimal(10, 2) AS s", "Decimal(10, 2)", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "x::Int32::String AS x", "String", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "t.col::Int64 AS c", "Int64", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "f(x)[1]::UInt8 AS c", "UInt8", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "CASE WHEN a THEN 1 ELSE 2 END::UInt8 AS c", "UInt8", CastSyntax::kDoubleColon},
      {Dialect::kPostgres, "$1::int AS p", "int", CastSyntax::kDoubleColon},
      {Dialect::kDuckDb, "x::\"My Type\" AS c", "\"My Type\"", CastSyntax::kDoubleColon},
      {Dialect::kClickHouse, "CAST(x AS Int32) + 1 AS c", std::nullopt},
      {Dialect::kClickHouse, "a + b::Int32 AS c", std::nullopt},
      {Dialect::kPostgres, "-x::int AS c", std::nullopt},
      {Dialect::kClickHouse, "x::Int32 + 1 AS c", std::nullopt},
      {Dialect::kClickHouse, "CAST(x AS Array(Int32))[1] AS c", std::nullopt},
      {Dialect::kClickHouse, "toInt32(x) AS c", std::nullopt},
      {Dialect::kClickHouse, "a AND b::Bool AS c", std::nullopt},
      {Dialect::kClickHouse, "x AS c", std::nullopt},
  };
  for (const CastCase& c : cases) {
    std::string text = "SELECT " + c.item + " FROM t";
    SelectStatement s = ParseSelect(text, c.dialect);
    ASSERT_EQ(s.outer().projection.size(), 1u) << c.item;
    const ProjectionItem& item = s.outer().projection[0];
    ASSERT_EQ(item.cast.has_value(), c.type.has_value()) << c.item;
    if (!c.type) continue;
    EXPECT_EQ(item.cast->type_text, *c.type) << c.item;
    EXPECT_EQ(item.cast->syntax, c.syntax) << c.item;
    if (c.item.find("'UInt8'") == std::string::npos) {
      EXPECT_EQ(At(text, item.cast->type_span), *c.type) << c.item;
    }
  }
}

TEST(ParseSelect, CastTypeWordsAreNotAggregatesOrReferences) {
  SelectStatement s =
      ParseSelect("SELECT CAST(x AS Nothing) AS a, x::Map(String, UInt8) AS b FROM t", Dialect::kClickHouse);
  EXPECT_TRUE(s.outer().aggregates.empty());
}

TEST(ParseSelect, DoubleColonIsRejectedInBigQuery) {
  ExpectError("SELECT x::INT64 AS x FROM t", "SLU-SQL-103", 1, 9, Dialect::kBigQuery);
}

// ---- CTEs ----

TEST(ParseSelect, TopLevelCtesHaveNamesAndSpans) {
  std::string text =
      "WITH a AS (SELECT 1 AS x FROM __source('s')),\n"
      "     \"B\" (y) AS MATERIALIZED (SELECT x AS y FROM a)\n"
      "SELECT CAST(y AS Int32) AS y FROM \"B\"";
  SelectStatement s = ParseSelect(text, Dialect::kPostgres);
  ASSERT_EQ(s.ctes.size(), 2u);
  EXPECT_EQ(s.ctes[0].name, "a");
  EXPECT_EQ(At(text, s.ctes[0].name_span), "a");
  EXPECT_EQ(At(text, s.ctes[0].body), "SELECT 1 AS x FROM __source('s')");
  EXPECT_EQ(At(text, s.ctes[0].span), "a AS (SELECT 1 AS x FROM __source('s'))");
  EXPECT_EQ(s.ctes[1].name, "B");
  EXPECT_FALSE(s.ctes[1].scalar);
  EXPECT_EQ(s.outer().role, BlockRole::kOuter);
  EXPECT_EQ(s.outer().sources.at(0).name, "B");
  EXPECT_TRUE(s.outer().sources.at(0).names_cte);
  // The CTE blocks come first in parse order; roles tell them apart.
  ASSERT_EQ(s.blocks.size(), 3u);
  EXPECT_EQ(s.blocks[0].role, BlockRole::kCommonTableExpression);
  EXPECT_EQ(s.blocks[1].role, BlockRole::kCommonTableExpression);
  EXPECT_TRUE(s.blocks[1].sources.at(0).names_cte);
  EXPECT_EQ(s.blocks[0].depth, 1u);
}

TEST(ParseSelect, NestedCtesAreScopedToTheirQuery) {
  std::string text =
      "WITH outer_cte AS (\n"
      "  WITH inner_cte AS (SELECT a FROM __ref('m'))\n"
      "  SELECT a FROM inner_cte)\n"
      "SELECT a FROM outer_cte JOIN inner_cte ON 1";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  ASSERT_EQ(s.ctes.size(), 1u);  // only the top-level WITH
  const QueryBlock& outer = s.outer();
  ASSERT_EQ(outer.sources.size(), 2u);
  EXPECT_TRUE(outer.sources[0].names_cte);
  EXPECT_FALSE(outer.sources[1].names_cte);  // inner_cte is not visible out here
  bool inner_seen = false;
  for (const QueryBlock& block : s.blocks) {
    for (const TableSource& source : block.sources) {
      if (source.name == "inner_cte" && &block != &outer) {
        EXPECT_TRUE(source.names_cte);
        inner_seen = true;
      }
    }
  }
  EXPECT_TRUE(inner_seen);
}

TEST(ParseSelect, CteNamesAreVisibleInEveryCteBodyOfTheirWith) {
  SelectStatement s =
      ParseSelect("WITH RECURSIVE r AS (SELECT 1 AS n UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r",
                  Dialect::kDuckDb);
  for (const QueryBlock& block : s.blocks) {
    for (const TableSource& source : block.sources) EXPECT_TRUE(source.names_cte) << source.name;
  }
  EXPECT_TRUE(s.set_operations.empty());  // the UNION is inside the CTE
}

TEST(ParseSelect, CteNamesFoldCaseOnlyWhereTheEngineDoes) {
  EXPECT_TRUE(ParseSelect("WITH Abc AS (SELECT 1) SELECT * FROM abc", Dialect::kDuckDb).outer().sources[0].names_cte);
  EXPECT_FALSE(
      ParseSelect("WITH Abc AS (SELECT 1) SELECT * FROM abc", Dialect::kClickHouse).outer().sources[0].names_cte);
}

TEST(ParseSelect, ClickHouseScalarWith) {
  std::string text = "WITH toDate('2026-01-01') AS start, 10 AS n, x AS (SELECT 1) SELECT start + n AS d FROM x";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  ASSERT_EQ(s.ctes.size(), 3u);
  EXPECT_TRUE(s.ctes[0].scalar);
  EXPECT_EQ(s.ctes[0].name, "start");
  EXPECT_EQ(At(text, s.ctes[0].body), "toDate('2026-01-01')");
  EXPECT_TRUE(s.ctes[1].scalar);
  EXPECT_FALSE(s.ctes[2].scalar);
  EXPECT_TRUE(s.outer().sources[0].names_cte);
  ExpectError("WITH 10 AS n SELECT n", "SLU-SQL-105", 1, 6, Dialect::kDuckDb);
}

TEST(ParseSelect, ScalarWithAggregatesBelongToTheQuery) {
  SelectStatement s = ParseSelect(
      "WITH (SELECT max(x) FROM __ref('a')) AS m, sum(y) AS t SELECT m AS m FROM __ref('b')", Dialect::kClickHouse);
  ASSERT_EQ(s.outer().aggregates.size(), 1u);
  EXPECT_EQ(s.outer().aggregates[0].name, "sum");
}

// ---- sources ----

TEST(ParseSelect, SourcesOfEveryKindWithAliasesAndSpans) {
  std::string text =
      "SELECT 1 FROM __source('events') AS e "
      "JOIN __ref(users, ref_type='reference') u ON u.id = e.user_id "
      "LEFT JOIN (SELECT id FROM __ref(\"dim\")) AS d ON d.id = e.id "
      "CROSS JOIN numbers(10) AS n "
      "FULL OUTER JOIN db.tbl ON 1, other";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  const auto& sources = s.outer().sources;
  ASSERT_EQ(sources.size(), 6u);
  EXPECT_EQ(sources[0].kind, SourceKind::kReference);
  EXPECT_EQ(sources[0].name, "__source");
  EXPECT_EQ(sources[0].reference_name, "events");
  EXPECT_EQ(sources[0].alias, "e");
  EXPECT_EQ(At(text, sources[0].span), "__source('events')");
  EXPECT_FALSE(sources[0].joined);
  EXPECT_EQ(sources[1].kind, SourceKind::kReference);
  EXPECT_EQ(sources[1].reference_name, "users");
  EXPECT_EQ(sources[1].alias, "u");
  EXPECT_TRUE(sources[1].joined);
  EXPECT_EQ(sources[2].kind, SourceKind::kSubquery);
  EXPECT_EQ(sources[2].alias, "d");
  EXPECT_EQ(At(text, sources[2].span), "(SELECT id FROM __ref(\"dim\"))");
  const QueryBlock& sub = s.blocks.at(sources[2].subquery_block);
  EXPECT_EQ(sub.role, BlockRole::kFromSubquery);
  EXPECT_EQ(sub.depth, 1u);
  EXPECT_EQ(sub.sources.at(0).reference_name, "dim");
  EXPECT_EQ(sources[3].kind, SourceKind::kTableFunction);
  EXPECT_EQ(sources[3].name, "numbers");
  EXPECT_EQ(sources[3].alias, "n");
  EXPECT_EQ(At(text, sources[3].span), "numbers(10)");
  EXPECT_EQ(sources[4].kind, SourceKind::kTable);
  EXPECT_EQ(sources[4].name, "db.tbl");
  EXPECT_FALSE(sources[4].names_cte);
  EXPECT_FALSE(sources[4].alias);
  EXPECT_EQ(sources[5].name, "other");
  EXPECT_FALSE(sources[5].joined);
}

TEST(ParseSelect, JoinsOfSeveralKinds) {
  const char* joins[] = {"JOIN",           "INNER JOIN",     "LEFT JOIN",      "LEFT OUTER JOIN",
                         "RIGHT JOIN",     "FULL JOIN",      "ANY LEFT JOIN",  "GLOBAL ANY INNER JOIN",
                         "ALL INNER JOIN", "ASOF LEFT JOIN", "LEFT SEMI JOIN", "LEFT ANTI JOIN",
                         "PASTE JOIN"};
  for (const char* join : joins) {
    std::string text = std::string("SELECT 1 FROM __ref('a') AS a ") + join +
                       " __ref('b', ref_type='reference') AS b ON a.k = b.k AND a.t >= b.t WHERE 1";
    SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
    ASSERT_EQ(s.outer().sources.size(), 2u) << join;
    EXPECT_EQ(s.outer().sources[1].alias, "b") << join;
    EXPECT_TRUE(s.outer().where) << join;
  }
  SelectStatement using_join =
      ParseSelect("SELECT 1 FROM a JOIN b USING (id) NATURAL JOIN c POSITIONAL JOIN d", Dialect::kDuckDb);
  EXPECT_EQ(using_join.outer().sources.size(), 4u);
  SelectStatement bare_using = ParseSelect("SELECT 1 FROM a ANY LEFT JOIN b USING id WHERE 1", Dialect::kClickHouse);
  EXPECT_EQ(bare_using.outer().sources.size(), 2u);
}

TEST(ParseSelect, BracketedJoinsAreFlattened) {
  SelectStatement s = ParseSelect("SELECT 1 FROM (a JOIN (SELECT 1) AS b ON true) JOIN c ON true", Dialect::kPostgres);
  ASSERT_EQ(s.outer().sources.size(), 3u);
  EXPECT_EQ(s.outer().sources[1].kind, SourceKind::kSubquery);
}

TEST(ParseSelect, ClickHouseTableModifiersAndArrayJoin) {
  std::string text =
      "SELECT CAST(tag AS String) AS tag FROM __ref('events') AS e FINAL SAMPLE 1/10 OFFSET 1/2 "
      "LEFT ARRAY JOIN e.tags AS tag, [1, 2] AS n PREWHERE e.ok WHERE tag != '' "
      "SETTINGS max_threads = 2, optimize_read_in_order = 1 FORMAT JSONEachRow";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  const QueryBlock& outer = s.outer();
  ASSERT_EQ(outer.sources.size(), 1u);  // ARRAY JOIN adds no source
  EXPECT_EQ(outer.sources[0].alias, "e");
  EXPECT_TRUE(outer.array_join);
  EXPECT_EQ(At(text, *outer.array_join), "LEFT ARRAY JOIN");
  EXPECT_TRUE(outer.prewhere);
  EXPECT_TRUE(outer.where);
  EXPECT_TRUE(outer.settings);
  EXPECT_TRUE(outer.format);
  SelectStatement before_alias = ParseSelect("SELECT 1 FROM t FINAL AS x SAMPLE 0.1", Dialect::kClickHouse);
  EXPECT_EQ(before_alias.outer().sources[0].alias, "x");
  SelectStatement no_from = ParseSelect("SELECT x ARRAY JOIN [1, 2] AS x", Dialect::kClickHouse);
  EXPECT_TRUE(no_from.outer().array_join);
}

TEST(ParseSelect, OtherDialectSourceForms) {
  SelectStatement bq = ParseSelect(
      "SELECT x FROM `proj.ds.events` AS e, UNNEST(e.items) AS x WITH OFFSET AS pos JOIN proj.ds.t USING (id)",
      Dialect::kBigQuery);
  ASSERT_EQ(bq.outer().sources.size(), 3u);
  EXPECT_EQ(bq.outer().sources[0].name, "proj.ds.events");
  EXPECT_EQ(bq.outer().sources[1].kind, SourceKind::kTableFunction);
  EXPECT_EQ(bq.outer().sources[1].name, "UNNEST");
  EXPECT_EQ(bq.outer().sources[2].name, "proj.ds.t");
  SelectStatement pg = ParseSelect(
      "SELECT 1 FROM t TABLESAMPLE BERNOULLI (10) REPEATABLE (1) AS s, LATERAL (SELECT 1) AS l, "
      "generate_series(1, 3) WITH ORDINALITY AS g(v, i), (VALUES (1, 'a'), (2, 'b')) AS v(n, c)",
      Dialect::kPostgres);
  ASSERT_EQ(pg.outer().sources.size(), 4u);
  EXPECT_EQ(pg.outer().sources[0].alias, "s");
  EXPECT_EQ(pg.outer().sources[1].kind, SourceKind::kSubquery);
  EXPECT_EQ(pg.outer().sources[2].alias, "g");
  EXPECT_EQ(pg.outer().sources[3].kind, SourceKind::kSubquery);
  EXPECT_TRUE(pg.blocks.at(pg.outer().sources[3].subquery_block).values);
  SelectStatement duck = ParseSelect("SELECT * FROM read_csv('x.csv') t", Dialect::kDuckDb);
  EXPECT_EQ(duck.outer().sources[0].kind, SourceKind::kTableFunction);
  EXPECT_EQ(duck.outer().sources[0].alias, "t");
}

// ---- clauses ----

TEST(ParseSelect, OuterClausesAreReported) {
  std::string text =
      "SELECT CAST(k AS Int32) AS k, CAST(count() AS UInt64) AS n FROM __ref('a') "
      "WHERE k > 0 GROUP BY k WITH TOTALS HAVING n > 1 ORDER BY k LIMIT 10";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  const QueryBlock& outer = s.outer();
  EXPECT_TRUE(outer.where);
  EXPECT_FALSE(outer.prewhere);
  EXPECT_EQ(At(text, *outer.group_by), "GROUP BY");
  EXPECT_TRUE(outer.having);
  EXPECT_EQ(At(text, *outer.order_by), "ORDER BY");
  EXPECT_TRUE(outer.limit);
  const QueryBlock plain =
      ParseSelect("SELECT a FROM (SELECT a FROM t WHERE a GROUP BY a ORDER BY a LIMIT 1)", Dialect::kDuckDb).outer();
  EXPECT_FALSE(plain.where);
  EXPECT_FALSE(plain.group_by);
  EXPECT_FALSE(plain.order_by);
  EXPECT_FALSE(plain.limit);
}

TEST(ParseSelect, ClauseKeywordsInsideExpressionsDoNotEndThem) {
  // FROM inside EXTRACT/IS DISTINCT FROM/WITH FILL, ORDER inside OVER, GROUP inside WITHIN GROUP.
  SelectStatement s = ParseSelect(
      "SELECT EXTRACT(DAY FROM ts) AS d, a IS NOT DISTINCT FROM b AS same, "
      "row_number() OVER (PARTITION BY a ORDER BY ts) AS rn, "
      "percentile_cont(0.5) WITHIN GROUP (ORDER BY x) AS med "
      "FROM t ORDER BY d WITH FILL FROM 1 TO 10 STEP 1 LIMIT 5 OFFSET 2",
      Dialect::kPostgres);
  EXPECT_EQ(s.outer().projection.size(), 4u);
  EXPECT_EQ(s.outer().projection[1].alias, "same");
  EXPECT_EQ(s.outer().sources.size(), 1u);
  EXPECT_TRUE(s.outer().offset);
}

TEST(ParseSelect, ColumnsNamedLikeClauseKeywords) {
  SelectStatement s = ParseSelect("SELECT offset, format, settings, t.from, x AS limit FROM t", Dialect::kClickHouse);
  EXPECT_EQ(s.outer().projection.size(), 5u);
  EXPECT_EQ(s.outer().sources.size(), 1u);
}

TEST(ParseSelect, OtherClauses) {
  const QueryBlock b =
      ParseSelect(
          "SELECT DISTINCT ON (a) a, sum(b) OVER w AS s FROM t WINDOW w AS (PARTITION BY a) QUALIFY s > 1 "
          "ORDER BY a NULLS LAST OFFSET 1 ROWS FETCH FIRST 2 ROWS ONLY",
          Dialect::kDuckDb)
          .outer();
  EXPECT_TRUE(b.qualify);
  EXPECT_TRUE(b.offset);
  EXPECT_TRUE(b.limit);
  const QueryBlock ch = ParseSelect("SELECT TOP 5 a FROM t LIMIT 2 BY a LIMIT 10", Dialect::kClickHouse).outer();
  EXPECT_TRUE(ch.limit);
  EXPECT_EQ(ch.projection.size(), 1u);
}

// ---- set operations ----

TEST(ParseSelect, TopLevelSetOperations) {
  std::string text =
      "SELECT a FROM x UNION ALL SELECT a FROM y INTERSECT SELECT a FROM z EXCEPT DISTINCT (SELECT a FROM w)";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  ASSERT_EQ(s.set_operations.size(), 3u);
  EXPECT_EQ(s.set_operations[0].op, SetOperator::kUnion);
  EXPECT_EQ(At(text, s.set_operations[0].span), "UNION ALL");
  EXPECT_EQ(s.set_operations[1].op, SetOperator::kIntersect);
  EXPECT_EQ(s.set_operations[2].op, SetOperator::kExcept);
  EXPECT_EQ(At(text, s.set_operations[2].span), "EXCEPT DISTINCT");
  ASSERT_EQ(s.blocks.size(), 4u);
  EXPECT_EQ(s.blocks[0].role, BlockRole::kOuter);
  EXPECT_EQ(s.blocks[1].role, BlockRole::kSetOperand);
  EXPECT_EQ(s.blocks[3].role, BlockRole::kSetOperand);
  EXPECT_EQ(s.outer_block, 0u);
}

TEST(ParseSelect, SetOperationsInSubqueriesAreNotTopLevel) {
  SelectStatement s = ParseSelect(
      "SELECT a FROM ((SELECT a FROM x) UNION ALL (SELECT a FROM y)) AS u WHERE a IN (SELECT a FROM z UNION SELECT 1)",
      Dialect::kDuckDb);
  EXPECT_TRUE(s.set_operations.empty());
  EXPECT_EQ(s.outer().sources.at(0).kind, SourceKind::kSubquery);
  EXPECT_EQ(s.blocks.size(), 5u);
  SelectStatement by_name = ParseSelect("SELECT 1 AS a UNION ALL BY NAME SELECT 2 AS a", Dialect::kDuckDb);
  ASSERT_EQ(by_name.set_operations.size(), 1u);
}

// ---- aggregates and references ----

TEST(ParseSelect, AggregatesWithCombinatorsAreFoundPerBlockAndItem) {
  std::string text =
      "SELECT CAST(sumIf(x, x > 0) AS Int64) AS s, CAST(uniqMerge(u) AS UInt64) AS u, countState() AS c, "
      "quantile(0.5)(v) AS q, CAST(k AS Int32) AS k, "
      "CAST((SELECT max(a) FROM __ref('r')) AS Int32) AS m FROM __ref('t') GROUP BY k";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  const QueryBlock& outer = s.outer();
  ASSERT_EQ(outer.aggregates.size(), 4u);
  EXPECT_EQ(outer.aggregates[0].name, "sumIf");
  EXPECT_EQ(At(text, outer.aggregates[0].span), "sumIf(x, x > 0)");
  EXPECT_EQ(outer.aggregates[1].name, "uniqMerge");
  EXPECT_EQ(outer.aggregates[2].name, "countState");
  EXPECT_EQ(outer.aggregates[3].name, "quantile");
  EXPECT_TRUE(outer.projection[0].has_aggregate);
  EXPECT_TRUE(outer.projection[3].has_aggregate);
  EXPECT_FALSE(outer.projection[4].has_aggregate);
  EXPECT_FALSE(outer.projection[5].has_aggregate);  // max is in the scalar subquery's block
  ASSERT_EQ(s.blocks.size(), 2u);
  const QueryBlock& sub = s.blocks[0].role == BlockRole::kExpressionSubquery ? s.blocks[0] : s.blocks[1];
  EXPECT_EQ(sub.role, BlockRole::kExpressionSubquery);
  ASSERT_EQ(sub.aggregates.size(), 1u);
  EXPECT_EQ(sub.aggregates[0].name, "max");
}

TEST(ParseSelect, QuantifiedComparisonIsNotTheAnyAggregate) {
  EXPECT_TRUE(
      ParseSelect("SELECT 1 FROM t WHERE a = ANY (SELECT b FROM u)", Dialect::kPostgres).outer().aggregates.empty());
  EXPECT_EQ(ParseSelect("SELECT any(a) AS a FROM t", Dialect::kClickHouse).outer().aggregates.size(), 1u);
}

TEST(IsAggregateFunction, KnowsClickHouseAndStandardNamesAndStripsCombinators) {
  for (const char* name :
       {"sum", "COUNT", "avg", "sumIf", "uniqMerge", "countState", "uniqExactMergeState", "groupArrayArray",
        "quantilesTimingArrayIf", "argMaxOrNull", "sumForEach", "maxMap", "anyLastSimpleState", "avgResample",
        "countDistinct", "minOrDefault", "string_agg", "bool_and", "COUNTIF", "approx_count_distinct", "array_agg",
        "row_number", "finalizeAggregation",
        // Around the one-probe lookup of names of 2 to 16 bytes: at 16, at 17 and beyond, with a
        // combinator after a long name.
        "QuantilesTiming", "sequenceNextNode", "sequenceNextNodeIf", "medianTimingWeighted",
        "exponentialTimeDecayedAvgIf", "summapfilteredwithoverflow"}) {
    EXPECT_TRUE(IsAggregateFunction(name)) << name;
  }
  for (const char* name :
       {"multiIf", "nullIf", "arrayMap", "arrayDistinct", "toStartOfDay", "coalesce", "If", "Map", "lower", "ifNull",
        "", "__ref", "cast", "toString", "sumx", "sumsIf", "y", "sequenceNextNodes", "medianTimingWeightedx"}) {
    EXPECT_FALSE(IsAggregateFunction(name)) << name;
  }
  // Names longer than the lookup's stack buffer (64 bytes).
  std::string chained = "uniqExact";
  while (chained.size() <= 70) chained += "If";
  EXPECT_TRUE(IsAggregateFunction(chained));
  EXPECT_FALSE(IsAggregateFunction(std::string(70, 'x') + "If"));
  EXPECT_FALSE(IsAggregateFunction(std::string(100, 'q')));
}

TEST(ParseSelect, ReferenceCallsUsedAsExpressionsAreRecorded) {
  std::string text =
      "SELECT __ref('a') AS x, CAST((SELECT 1 FROM __ref('ok')) AS Int8) AS y FROM __source('s') "
      "WHERE id IN (SELECT id FROM __ref('b', ref_type='reference')) AND z = __source('s2')";
  SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
  const QueryBlock& outer = s.outer();
  ASSERT_EQ(outer.expression_references.size(), 2u);
  EXPECT_EQ(At(text, outer.expression_references[0].span), "__ref('a')");
  EXPECT_EQ(At(text, outer.expression_references[1].span), "__source('s2')");
  for (const QueryBlock& block : s.blocks) {
    if (&block != &outer) {
      EXPECT_TRUE(block.expression_references.empty());
    }
  }
  SelectStatement in_function = ParseSelect("SELECT 1 FROM numbers(__ref('n'))", Dialect::kClickHouse);
  EXPECT_EQ(in_function.outer().expression_references.size(), 1u);
}

TEST(ParseSelect, MacroCallsAreOrdinaryExpressions) {
  SelectStatement s =
      ParseSelect("SELECT CAST(d AS DATE) AS d FROM __ref('x') WHERE d >= @partition_start() AND d < @partition_end()",
                  Dialect::kDuckDb);
  EXPECT_TRUE(s.outer().where);
}

// ---- errors ----

TEST(ParseSelect, UnbalancedBracketsAreLocated) {
  ExpectError("SELECT (a FROM t", "SLU-SQL-101", 1, 8);
  ExpectError("SELECT a) FROM t", "SLU-SQL-101", 1, 9);
  ExpectError("SELECT\n  f(a]", "SLU-SQL-101", 2, 6);
  ExpectError("SELECT (1; SELECT 2)", "SLU-SQL-101", 1, 8);
  Diagnostic d = ErrorOf("SELECT [1, 2) AS a");
  EXPECT_NE(d.message.find("line 1, column 8"), std::string::npos) << d.message;
}

TEST(ParseSelect, TenThousandNestedParenthesesGiveALocatedError) {
  std::string deep = "SELECT " + std::string(10000, '(') + "1" + std::string(10000, ')') + " AS x";
  ExpectError(deep, "SLU-SQL-102", 1, 8 + static_cast<int>(kMaxSelectNesting));
  std::string deep_from = "SELECT 1 FROM\n" + std::string(10000, '(') + "SELECT 1" + std::string(10000, ')');
  ExpectError(deep_from, "SLU-SQL-102", 2, 1 + static_cast<int>(kMaxSelectNesting));
  std::string deep_subqueries;
  for (int i = 0; i < 10000; ++i) deep_subqueries += "(SELECT ";
  ExpectError("SELECT " + deep_subqueries, "SLU-SQL-102", 1, 8 + 8 * static_cast<int>(kMaxSelectNesting));
}

TEST(ParseSelect, NestingUpToTheLimitIsAccepted) {
  std::string nested;
  for (size_t i = 0; i < kMaxSelectNesting - 1; ++i) nested += "(SELECT ";
  nested += "1";
  for (size_t i = 0; i < kMaxSelectNesting - 1; ++i) nested += ")";
  SelectStatement s = ParseSelect("SELECT " + nested + " AS x", Dialect::kDuckDb);
  EXPECT_EQ(s.blocks.size(), kMaxSelectNesting);
}

TEST(ParseSelect, EveryKindOfNestingUpToTheLimitIsAccepted) {
  size_t n = kMaxSelectNesting - 1;
  auto repeat = [](const std::string& piece, size_t count) {
    std::string out;
    for (size_t i = 0; i < count; ++i) out += piece;
    return out;
  };
  const std::string nestings[] = {
      "SELECT * FROM " + repeat("(", n) + "t" + repeat(")", n),
      "SELECT * FROM " + repeat("(SELECT * FROM ", n) + "t" + repeat(")", n),
      repeat("WITH a AS (", n) + "SELECT 1" + repeat(") SELECT 1", n),
      "SELECT " + repeat("f(", n) + "x" + repeat(")", n) + " AS x",
      "SELECT " + repeat("CAST(", n) + "x" + repeat(" AS Int8)", n) + " AS x",
      "SELECT " + repeat("(", n) + "CAST(x AS Int8)" + repeat(")", n) + " AS x",
      "SELECT 1 FROM t WHERE " + repeat("x IN (SELECT x FROM t WHERE ", n) + "1" + repeat(")", n),
      "SELECT " + repeat("CASE WHEN a THEN ", 5000) + "1" + repeat(" END", 5000) + " AS c",
  };
  for (const std::string& text : nestings) {
    for (Dialect dialect : kAllDialects) {
      EXPECT_EQ(ErrorOf(text, dialect).code, "no error") << text.substr(0, 80);
    }
  }
}

TEST(ParseSelect, UnexpectedTokensAreLocated) {
  ExpectError("SELECT a FROM t garbage more", "SLU-SQL-103", 1, 25);
  ExpectError("SELECT a UNION", "SLU-SQL-103", 1, 15);
  ExpectError("SELECT a UNION ALL DELETE FROM t", "SLU-SQL-103", 1, 20);
  ExpectError("WITH a AS (SELECT 1) DELETE FROM a", "SLU-SQL-103", 1, 22);
  ExpectError("SELECT CASE WHEN a THEN 1 AS x FROM t", "SLU-SQL-103", 1, 8);
  ExpectError("SELECT a FROM t WHERE a, b", "SLU-SQL-103", 1, 24);
}

TEST(ParseSelect, MissingExpressionsAreLocated) {
  ExpectError("SELECT a,, b FROM t", "SLU-SQL-104", 1, 10);
  ExpectError("SELECT FROM t", "SLU-SQL-104", 1, 8);
  ExpectError("SELECT a FROM t WHERE", "SLU-SQL-104", 1, 22);
  ExpectError("SELECT a FROM t WHERE GROUP BY a", "SLU-SQL-104", 1, 23);
  ExpectError("SELECT a FROM t GROUP BY a, ORDER BY a", "SLU-SQL-104", 1, 29);
  ExpectError("SELECT a AS FROM t", "SLU-SQL-104", 1, 10);
  ExpectError("SELECT a, FROM t", "SLU-SQL-104", 1, 9, Dialect::kPostgres);
  EXPECT_EQ(ErrorOf("SELECT a, FROM t", Dialect::kDuckDb).code, "no error");
  EXPECT_EQ(ErrorOf("SELECT a, FROM t", Dialect::kClickHouse).code, "no error");
}

TEST(ParseSelect, MalformedCtesAreLocated) {
  ExpectError("WITH SELECT 1", "SLU-SQL-105", 1, 6, Dialect::kDuckDb);
  ExpectError("WITH a AS SELECT 1", "SLU-SQL-105", 1, 11, Dialect::kPostgres);
  ExpectError("WITH a AS (1 + 2) SELECT 1", "SLU-SQL-105", 1, 11, Dialect::kDuckDb);
  ExpectError("WITH\n  a AS ()\nSELECT 1", "SLU-SQL-105", 2, 9, Dialect::kDuckDb);
}

TEST(ParseSelect, MalformedSourcesAreLocated) {
  ExpectError("SELECT a FROM WHERE a", "SLU-SQL-106", 1, 15);
  ExpectError("SELECT a FROM", "SLU-SQL-106", 1, 14);
  ExpectError("SELECT a FROM t JOIN", "SLU-SQL-106", 1, 21);
  ExpectError("SELECT a FROM 42", "SLU-SQL-106", 1, 15);
  ExpectError("SELECT a FROM t AS", "SLU-SQL-106", 1, 19);
  ExpectError("SELECT a FROM t SAMPLE x", "SLU-SQL-106", 1, 24);
  ExpectError("SELECT a FROM ()", "SLU-SQL-106", 1, 16);
}

TEST(ParseSelect, DuplicateClausesAreLocated) {
  ExpectError("SELECT a FROM t WHERE a WHERE b", "SLU-SQL-107", 1, 25);
  ExpectError("SELECT a FROM t FROM u", "SLU-SQL-107", 1, 17);
}

TEST(ParseSelect, LexicalErrorsPassThrough) { ExpectError("SELECT 'open FROM t", "SLU-SQL-001", 1, 8); }

TEST(ParseSelect, DiagnosticsRenderWithCaretAndHint) {
  Diagnostic d = ErrorOf("SELECT a\nFROM t WHERE");
  std::string rendered = FormatDiagnostic(d);
  EXPECT_NE(rendered.find("models/m.sql:2:13: error[SLU-SQL-104]"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("^"), std::string::npos) << rendered;
  EXPECT_NE(rendered.find("hint:"), std::string::npos) << rendered;
}

// ---- robustness and cost ----

TEST(ParseSelect, RandomBytesGiveAResultOrASluiceError) {
  std::mt19937 random(20260501);
  for (int round = 0; round < 2000; ++round) {
    std::string text(static_cast<size_t>(random() % 64), '\0');
    for (char& c : text) c = static_cast<char>(random() % 256);
    for (Dialect dialect : kAllDialects) {
      try {
        ParseSelect(text, dialect, "m.sql");
      } catch (const Error&) {
      }
    }
  }
}

TEST(ParseSelect, RandomTokenSoupGivesAResultOrASluiceError) {
  const char* pieces[] = {"SELECT ",     "FROM ",     "WHERE ", "WITH ",     " AS ",      "(",       ")",
                          "[",           "]",         ",",      ";",         "::",        "CAST",    "JOIN ",
                          "ON ",         "UNION ",    "ALL ",   "GROUP BY ", "ORDER BY ", "LIMIT ",  "CASE ",
                          "END ",        "x ",        "'s' ",   "1 ",        "*",         ".",       "__ref('a') ",
                          "ARRAY JOIN ", "PREWHERE ", "FINAL ", "SAMPLE ",   "VALUES ",   "EXCEPT ", "OFFSET ",
                          "INTERVAL ",   "DAY ",      "sumIf",  "LEFT ",     "USING "};
  std::mt19937 random(7);
  for (int round = 0; round < 4000; ++round) {
    std::string text;
    size_t count = random() % 24;
    for (size_t i = 0; i < count; ++i) text += pieces[random() % std::size(pieces)];
    for (Dialect dialect : kAllDialects) {
      try {
        ParseSelect(text, dialect, "m.sql");
      } catch (const Error&) {
      }
    }
  }
}

TEST(ParseSelect, LargeInputsParseInLinearTime) {
  auto build = [](size_t items) {
    std::string text = "WITH c AS (SELECT 1 AS a) SELECT ";
    for (size_t i = 0; i < items; ++i) {
      text += "CAST(CASE WHEN a = " + std::to_string(i) + " THEN sumIf(a, a > 1) END AS Int64) AS c" +
              std::to_string(i) + ", ";
    }
    text += "1 AS last FROM c";
    for (size_t i = 0; i < items / 10; ++i)
      text += " LEFT JOIN c AS j" + std::to_string(i) + " ON (((j" + std::to_string(i) + ".a = 1)))";
    return text;
  };
  auto time = [](const std::string& text) {
    auto start = std::chrono::steady_clock::now();
    SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
    EXPECT_GT(s.outer().projection.size(), 1u);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  double small = time(build(800));
  double large = time(build(8000));
  EXPECT_LT(large, 30 * small + 0.5) << small << " s vs " << large << " s";
}

}  // namespace
}  // namespace sluice::sql
