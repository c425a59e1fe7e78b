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

// Plain "this SQL → this structure or error" examples are data: tests/golden/select/*.test (golden_select_test).
// What stays here: the keyword table, loops over generated inputs, nesting limits, robustness and cost.

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

TEST(ParseSelect, EmptyTextHasNoStatement) {
  for (std::string text : {"", "   ", ";", "-- only a comment\n", "/* c */ ; ;"}) {
    SelectStatement s = ParseSelect(text, Dialect::kClickHouse);
    EXPECT_EQ(s.kind, StatementKind::kEmpty) << text;
    EXPECT_EQ(s.statement_count(), 0u) << text;
  }
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

// ---- nesting limits ----

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
