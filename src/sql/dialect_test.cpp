#include "sql/dialect.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

#include "core/diagnostic.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql {
namespace {

constexpr Dialect kAllDialects[] = {Dialect::kDuckDb, Dialect::kClickHouse, Dialect::kPostgres, Dialect::kBigQuery};

std::string CodeOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.diagnostics().front().code;
  }
  return "no error";
}

// Quoted output must read back, in the same dialect, as exactly one token of `kind` denoting `value`:
// nothing in a name or value can end the literal early and inject SQL.
void ExpectRoundTrip(Dialect dialect, const std::string& quoted, TokenKind kind, const std::string& value) {
  std::vector<Token> tokens = Tokenize(quoted, dialect);
  ASSERT_EQ(tokens.size(), 1u) << quoted;
  EXPECT_EQ(tokens[0].kind, kind) << quoted;
  EXPECT_EQ(tokens[0].end, quoted.size()) << quoted;
  EXPECT_EQ(TokenValue(tokens[0], dialect), value) << quoted;
}

TEST(QuoteIdentifier, UsesDoubleQuotesInDuckDbAndPostgres) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres}) {
    EXPECT_EQ(QuoteIdentifier(dialect, "orders"), "\"orders\"");
    EXPECT_EQ(QuoteIdentifier(dialect, "Select"), "\"Select\"");
    EXPECT_EQ(QuoteIdentifier(dialect, "a\"b"), "\"a\"\"b\"");
    EXPECT_EQ(QuoteIdentifier(dialect, "a\\b`c'"), "\"a\\b`c'\"");
    EXPECT_EQ(QuoteIdentifier(dialect, "naïve table"), "\"naïve table\"");
  }
}

TEST(QuoteIdentifier, UsesBackticksWithBackslashEscapesInClickHouseAndBigQuery) {
  for (Dialect dialect : {Dialect::kClickHouse, Dialect::kBigQuery}) {
    EXPECT_EQ(QuoteIdentifier(dialect, "orders"), "`orders`");
    EXPECT_EQ(QuoteIdentifier(dialect, "a`b"), "`a\\`b`");
    EXPECT_EQ(QuoteIdentifier(dialect, "a\\b"), "`a\\\\b`");
    EXPECT_EQ(QuoteIdentifier(dialect, "a\"b'c"), "`a\"b'c`");
    EXPECT_EQ(QuoteIdentifier(dialect, "line\nbreak\ttab\x01"), "`line\\nbreak\\ttab\\x01`");
  }
}

TEST(QuoteIdentifier, RejectsNamesTheEngineCannotHold) {
  for (Dialect dialect : kAllDialects) {
    EXPECT_EQ(CodeOf([&] { QuoteIdentifier(dialect, ""); }), "SLU-SQL-020");
  }
  EXPECT_EQ(CodeOf([] { QuoteIdentifier(Dialect::kPostgres, std::string("a\0b", 3)); }), "SLU-SQL-020");
  EXPECT_EQ(CodeOf([] { QuoteIdentifier(Dialect::kDuckDb, std::string("a\0b", 3)); }), "SLU-SQL-020");
  EXPECT_EQ(QuoteIdentifier(Dialect::kClickHouse, std::string("a\0b", 3)), "`a\\x00b`");
}

TEST(QualifiedName, JoinsQuotedParts) {
  EXPECT_EQ(QualifiedName(Dialect::kDuckDb, "gold", "daily revenue"), "\"gold\".\"daily revenue\"");
  EXPECT_EQ(QualifiedName(Dialect::kPostgres, "s\"x", "t"), "\"s\"\"x\".\"t\"");
  EXPECT_EQ(QualifiedName(Dialect::kClickHouse, "db", "tbl__orders"), "`db`.`tbl__orders`");
  EXPECT_EQ(QualifiedName(Dialect::kBigQuery, "ds", "a.b"), "`ds`.`a.b`");
}

TEST(QuoteString, DoublesQuotesInDuckDbAndPostgres) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres}) {
    EXPECT_EQ(QuoteString(dialect, "it's"), "'it''s'");
    EXPECT_EQ(QuoteString(dialect, "a\\b"), "'a\\b'");  // backslash is literal with standard strings
    EXPECT_EQ(QuoteString(dialect, ""), "''");
    EXPECT_EQ(QuoteString(dialect, "two\nlines"), "'two\nlines'");
    EXPECT_EQ(CodeOf([&] { QuoteString(dialect, std::string("\0", 1)); }), "SLU-SQL-020");
  }
}

TEST(QuoteString, EscapesWithBackslashesInClickHouseAndBigQuery) {
  for (Dialect dialect : {Dialect::kClickHouse, Dialect::kBigQuery}) {
    EXPECT_EQ(QuoteString(dialect, "it's"), "'it\\'s'");
    EXPECT_EQ(QuoteString(dialect, "a\\b"), "'a\\\\b'");
    EXPECT_EQ(QuoteString(dialect, "\\'"), "'\\\\\\''");
    EXPECT_EQ(QuoteString(dialect, "x\r\n\t\x7f"), "'x\\r\\n\\t\\x7F'");
    EXPECT_EQ(QuoteString(dialect, std::string("\0", 1)), "'\\x00'");
    EXPECT_EQ(QuoteString(dialect, "\"é\""), "'\"é\"'");
  }
}

TEST(DateLiteral, RendersAnsiDateLiteralAndToDateOnClickHouse) {
  EXPECT_EQ(DateLiteral(Dialect::kClickHouse, Date::FromYmd(2026, 1, 31)), "toDate('2026-01-31')");
  for (Dialect dialect : kAllDialects) {
    if (dialect == Dialect::kClickHouse) continue;
    EXPECT_EQ(DateLiteral(dialect, Date::FromYmd(2026, 1, 31)), "DATE '2026-01-31'");
    EXPECT_EQ(DateLiteral(dialect, Date::FromYmd(1999, 12, 1)), "DATE '1999-12-01'");
  }
}

TEST(Quoting, NastyValuesReadBackAsOneToken) {
  const std::string nasty[] = {
      "it's",         "a\"b",     "a`b",    "back\\slash", "\\",          "'; DROP TABLE t; --", "*/ /*", "$$",
      "$tag$",        "\\'",      "''",     "\"\"",        "line\nbreak", "tab\there",           "é中文", "trailing\\",
      "\x01\x1f\x7f", "\xff\xfe", "# hash", "-- dash"};
  for (Dialect dialect : kAllDialects) {
    for (const std::string& value : nasty) {
      ExpectRoundTrip(dialect, QuoteString(dialect, value), TokenKind::kString, value);
      ExpectRoundTrip(dialect, QuoteIdentifier(dialect, value), TokenKind::kQuotedIdentifier, value);
    }
  }
}

TEST(Quoting, RandomValuesReadBackAsOneToken) {
  std::mt19937 random(42);
  std::uniform_int_distribution<int> length(1, 24);
  std::uniform_int_distribution<int> byte(1, 255);  // NUL is covered separately: DuckDB/PostgreSQL reject it
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string value;
    for (int n = length(random); n > 0; --n) value += static_cast<char>(byte(random));
    for (Dialect dialect : kAllDialects) {
      ExpectRoundTrip(dialect, QuoteString(dialect, value), TokenKind::kString, value);
      ExpectRoundTrip(dialect, QuoteIdentifier(dialect, value), TokenKind::kQuotedIdentifier, value);
    }
  }
}

}  // namespace
}  // namespace sluice::sql
