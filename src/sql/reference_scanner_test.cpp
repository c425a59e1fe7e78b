#include "sql/reference_scanner.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>

#include "core/diagnostic.hpp"
#include "sql/tokenizer.hpp"

namespace sluice::sql {
namespace {

constexpr Dialect kAllDialects[] = {Dialect::kDuckDb, Dialect::kClickHouse, Dialect::kPostgres, Dialect::kBigQuery};

Diagnostic ReferenceErrorOf(std::string_view text, Dialect dialect = Dialect::kClickHouse) {
  try {
    FindReferences(text, dialect, "models/m.sql");
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  return Diagnostic{"no error", {}, {}, {}, {}};
}

Diagnostic MacroErrorOf(std::string_view text, Dialect dialect = Dialect::kClickHouse) {
  try {
    FindMacroCalls(text, dialect, "models/m.sql");
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  return Diagnostic{"no error", {}, {}, {}, {}};
}

std::string_view Span(std::string_view text, size_t begin, size_t end) { return text.substr(begin, end - begin); }

// What a scan gives, as text: each call, or the error's code and location.
std::string ScanOutcome(const std::function<std::vector<ReferenceCall>()>& scan) {
  std::string out;
  try {
    for (const ReferenceCall& call : scan()) {
      out += std::to_string(static_cast<int>(call.kind)) + ":" + call.name + ":" +
             std::to_string(call.ref_type ? static_cast<int>(*call.ref_type) : -1) + ":" + std::to_string(call.begin) +
             "-" + std::to_string(call.end) + ";";
    }
  } catch (const Error& error) {
    const Diagnostic& first = error.diagnostics().front();
    out = first.code + "@" + std::to_string(first.location.line) + ":" + std::to_string(first.location.column);
  }
  return out;
}

// The scan of the words TokenizeSignificant lists finds what the scan of every token finds, errors included:
// nested and upper-case words, comments, unfinished calls.
TEST(FindReferences, ListedWordsScanMatchesTheFullScan) {
  std::mt19937 random(20261204);
  const std::vector<std::string> pieces = {"__ref",
                                           "__source",
                                           "__REF",
                                           "(",
                                           ")",
                                           ",",
                                           "'m'",
                                           "x",
                                           "y.z",
                                           "ref_type",
                                           "=",
                                           "'reference'",
                                           "'mutable'",
                                           "\"q\"",
                                           "-- c\n",
                                           "/* __ref(x) */",
                                           "SELECT",
                                           "FROM",
                                           "__ref('a')",
                                           "__source(b)",
                                           "__ref(c, ref_type = 'mutable')",
                                           "__ref(__ref)",
                                           "__source(__Source)"};
  size_t calls_seen = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::string text;
    for (int k = static_cast<int>(random() % 14); k > 0; --k) text += pieces[random() % pieces.size()] + " ";
    for (Dialect dialect : kAllDialects) {
      std::vector<Token> tokens;
      std::vector<size_t> words;
      try {
        tokens = TokenizeSignificant(text, 0, dialect, "m.sql", words);
      } catch (const Error&) {
        continue;  // a lexical error: neither scan runs
      }
      std::string full = ScanOutcome([&] { return FindReferences(text, tokens, dialect, "m.sql"); });
      std::string listed = ScanOutcome([&] { return FindReferences(text, tokens, words, dialect, "m.sql"); });
      ASSERT_EQ(listed, full) << text;
      calls_seen += full.find(';') != std::string::npos;
    }
  }
  EXPECT_GT(calls_seen, 100u);
}

// A reference word inside a call's arguments starts no call of its own.
TEST(FindReferences, AWordInsideACallStartsNoCall) {
  std::string text = "SELECT * FROM __ref(__ref) JOIN __source(__source) s ON 1";
  std::vector<ReferenceCall> calls = FindReferences(text, Dialect::kClickHouse);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].kind, ReferenceKind::kRef);
  EXPECT_EQ(calls[0].name, "__ref");
  EXPECT_EQ(Span(text, calls[0].begin, calls[0].end), "__ref(__ref)");
  EXPECT_EQ(calls[1].kind, ReferenceKind::kSource);
  EXPECT_EQ(calls[1].name, "__source");
}

TEST(FindReferences, FindsSourceAndRefWithSpans) {
  std::string text = "SELECT * FROM __source('events') JOIN __ref(orders) o ON 1";
  std::vector<ReferenceCall> calls = FindReferences(text, Dialect::kClickHouse);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].kind, ReferenceKind::kSource);
  EXPECT_EQ(calls[0].name, "events");
  EXPECT_FALSE(calls[0].ref_type);
  EXPECT_EQ(Span(text, calls[0].begin, calls[0].end), "__source('events')");
  EXPECT_EQ(calls[1].kind, ReferenceKind::kRef);
  EXPECT_EQ(calls[1].name, "orders");
  EXPECT_FALSE(calls[1].ref_type);
  EXPECT_EQ(Span(text, calls[1].begin, calls[1].end), "__ref(orders)");
}

TEST(FindReferences, AcceptsEveryNameSpellingOfTheDialect) {
  EXPECT_EQ(FindReferences("__ref(\"orders\")", Dialect::kClickHouse).at(0).name, "orders");
  EXPECT_EQ(FindReferences("__ref(`orders`)", Dialect::kClickHouse).at(0).name, "orders");
  EXPECT_EQ(FindReferences("__ref(\"orders\")", Dialect::kBigQuery).at(0).name, "orders");
  EXPECT_EQ(FindReferences("__ref(`orders`)", Dialect::kBigQuery).at(0).name, "orders");
  EXPECT_EQ(FindReferences("__ref(\"Orders\")", Dialect::kDuckDb).at(0).name, "Orders");
  EXPECT_EQ(FindReferences("__ref($$orders$$)", Dialect::kPostgres).at(0).name, "orders");
}

TEST(FindReferences, DecodesQuotedNames) {
  EXPECT_EQ(FindReferences("__ref('it''s')", Dialect::kPostgres).at(0).name, "it's");
  EXPECT_EQ(FindReferences("__ref('it\\'s')", Dialect::kClickHouse).at(0).name, "it's");
  EXPECT_EQ(FindReferences("__ref(\"a\"\"b\")", Dialect::kDuckDb).at(0).name, "a\"b");
}

TEST(FindReferences, ParsesRefType) {
  std::vector<ReferenceCall> calls =
      FindReferences("FROM __ref('a', ref_type='reference') JOIN __ref(b, ref_type = 'mutable')", Dialect::kClickHouse);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].ref_type, RefType::kReference);
  EXPECT_EQ(calls[1].ref_type, RefType::kMutable);
  EXPECT_EQ(calls[1].name, "b");
  EXPECT_EQ(FindReferences("__ref(a, ref_type=\"mutable\")", Dialect::kBigQuery).at(0).ref_type, RefType::kMutable);
}

TEST(FindReferences, AllowsCommentsAndWhitespaceBetweenTokens) {
  std::string text = "FROM __ref /* c */ (\n  -- the name\n  'a' /* , */ ,\n ref_type # x\n = 'mutable'\n) t";
  std::vector<ReferenceCall> calls = FindReferences(text, Dialect::kClickHouse);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].name, "a");
  EXPECT_EQ(calls[0].ref_type, RefType::kMutable);
  EXPECT_EQ(calls[0].begin, text.find("__ref"));
  EXPECT_EQ(calls[0].end, text.find(") t") + 1);
}

TEST(FindReferences, IgnoresCallsInsideCommentsAndStrings) {
  for (Dialect dialect : kAllDialects) {
    std::string text = "-- __ref(a)\n/* __source(b) */ SELECT '__ref(c)', '__source(' FROM __ref(d) /* __ref( */";
    std::vector<ReferenceCall> calls = FindReferences(text, dialect);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].name, "d");
  }
  EXPECT_TRUE(FindReferences("# __ref(x)\n", Dialect::kClickHouse).empty());
  EXPECT_TRUE(FindReferences("# __ref(x)\n", Dialect::kBigQuery).empty());
  EXPECT_TRUE(FindReferences("SELECT \"__ref(x)\"", Dialect::kBigQuery).empty());
  EXPECT_TRUE(FindReferences("SELECT $q$ __ref(x) $q$", Dialect::kPostgres).empty());
  EXPECT_TRUE(FindReferences("SELECT '''__ref(x)'''", Dialect::kBigQuery).empty());
}

TEST(FindReferences, MatchesOnlyTheExactWords) {
  EXPECT_TRUE(FindReferences("SELECT __refs(x), __REF(y), my__ref(z), \"__ref\"", Dialect::kDuckDb).empty());
}

TEST(FindReferences, ReturnsCallsInTextOrder) {
  std::vector<ReferenceCall> calls =
      FindReferences("__ref(c) __source(a) __ref(b, ref_type='reference')", Dialect::kDuckDb);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].name, "c");
  EXPECT_EQ(calls[1].name, "a");
  EXPECT_EQ(calls[2].name, "b");
  EXPECT_LT(calls[0].end, calls[1].begin);
  EXPECT_LT(calls[1].end, calls[2].begin);
}

TEST(FindReferences, MalformedCallsAreLocatedAtTheOffendingToken) {
  struct Case {
    const char* text;
    int line;
    int column;
  };
  const Case cases[] = {
      {"SELECT 1\nFROM __ref orders", 2, 12},  // no `(`
      {"FROM __ref", 1, 11},                   // end of text
      {"FROM __ref()", 1, 12},                 // no argument
      {"FROM __ref(, x)", 1, 12},              // no first argument
      {"FROM __ref('')", 1, 12},               // empty name
      {"FROM __source(``)", 1, 15},            // empty quoted name
      {"FROM __ref(1)", 1, 12},                // not a name
      {"FROM __ref(a.b)", 1, 13},              // not a single name
      {"FROM __ref(a b)", 1, 14},
      {"FROM __ref(a", 1, 13},                          // missing `)`
      {"FROM __ref(a,)", 1, 14},                        // empty second argument
      {"FROM __ref(a, ref_type='mutable', x)", 1, 33},  // three arguments
      {"FROM __ref(a, ref_type='mutable'", 1, 33},      // missing `)`
  };
  for (const Case& c : cases) {
    Diagnostic d = ReferenceErrorOf(c.text);
    EXPECT_EQ(d.code, "SLU-SQL-010") << c.text;
    EXPECT_EQ(d.location.file, "models/m.sql") << c.text;
    EXPECT_EQ(d.location.line, c.line) << c.text;
    EXPECT_EQ(d.location.column, c.column) << c.text;
    EXPECT_FALSE(d.hint.empty()) << c.text;
  }
}

TEST(FindReferences, SecondArgumentMustBeRefTypeAssignment) {
  struct Case {
    const char* text;
    int column;
  };
  const Case cases[] = {
      {"FROM __ref(a, kind='mutable')", 15},
      {"FROM __ref(a, REF_TYPE='mutable')", 15},
      {"FROM __ref(a, ref_type 'mutable')", 24},
      {"FROM __ref(a, ref_type := 'mutable')", 24},
      {"FROM __ref(a, ref_type=mutable)", 24},
      {"FROM __ref(a, ref_type=\"mutable\")", 24},  // an identifier, not a string, in ClickHouse
      {"FROM __ref(a, ref_type='mutable' || 'x')", 34},
      {"FROM __source(a, b)", 18},
  };
  for (const Case& c : cases) {
    Diagnostic d = ReferenceErrorOf(c.text);
    EXPECT_EQ(d.code, "SLU-SQL-011") << c.text;
    EXPECT_EQ(d.location.line, 1) << c.text;
    EXPECT_EQ(d.location.column, c.column) << c.text;
    EXPECT_NE(d.hint.find("ref_type"), std::string::npos) << c.text;
  }
}

TEST(FindReferences, RefTypeValueMustBeReferenceOrMutable) {
  Diagnostic d = ReferenceErrorOf("SELECT 1\nFROM __ref(a, ref_type='Mutable')");
  EXPECT_EQ(d.code, "SLU-SQL-012");
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 24);
  EXPECT_NE(d.message.find("Mutable"), std::string::npos);
  EXPECT_EQ(d.source_line, "FROM __ref(a, ref_type='Mutable')");
  EXPECT_EQ(ReferenceErrorOf("__ref(a, ref_type='')").code, "SLU-SQL-012");
  EXPECT_EQ(ReferenceErrorOf("__ref(a, ref_type='view')").code, "SLU-SQL-012");
}

TEST(FindReferences, SourceTakesNoRefType) {
  Diagnostic d = ReferenceErrorOf("FROM __source(events, ref_type='reference')");
  EXPECT_EQ(d.code, "SLU-SQL-013");
  EXPECT_EQ(d.location.column, 23);
  EXPECT_NE(d.hint.find("__ref"), std::string::npos);
  EXPECT_EQ(ReferenceErrorOf("FROM __source(events, ref_type='bogus')").code, "SLU-SQL-013");
}

TEST(FindReferences, LexicalErrorsPropagate) { EXPECT_EQ(ReferenceErrorOf("FROM __ref('a)").code, "SLU-SQL-001"); }

TEST(FindMacroCalls, FindsCallsWithSpansAndTrimmedArguments) {
  std::string text = "SELECT @line_total( price , 'x)' ) AS t FROM @table_name()";
  std::vector<MacroCall> calls = FindMacroCalls(text, Dialect::kClickHouse);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "line_total");
  EXPECT_EQ(calls[0].arguments, "price , 'x)'");
  EXPECT_EQ(Span(text, calls[0].begin, calls[0].end), "@line_total( price , 'x)' )");
  EXPECT_EQ(calls[1].name, "table_name");
  EXPECT_EQ(calls[1].arguments, "");
  EXPECT_EQ(calls[1].end, text.size());
}

TEST(FindMacroCalls, NestedCallsBelongToTheOuterCall) {
  std::string text = "@outer(@inner(1, (2)), [3], @x())  @after(a)";
  std::vector<MacroCall> calls = FindMacroCalls(text, Dialect::kDuckDb);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "outer");
  EXPECT_EQ(calls[0].arguments, "@inner(1, (2)), [3], @x()");
  EXPECT_EQ(Span(text, calls[0].begin, calls[0].end), "@outer(@inner(1, (2)), [3], @x())");
  EXPECT_EQ(calls[1].name, "after");
}

TEST(FindMacroCalls, ParenthesesInStringsAndCommentsDoNotCount) {
  std::string text = "@f(')(', /* ) */ \"(\", -- )\n 1)";
  std::vector<MacroCall> calls = FindMacroCalls(text, Dialect::kPostgres);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].arguments, "')(', /* ) */ \"(\", -- )\n 1");
  EXPECT_EQ(calls[0].end, text.size());
}

TEST(FindMacroCalls, IgnoresCallsInsideCommentsAndStrings) {
  for (Dialect dialect : kAllDialects) {
    EXPECT_TRUE(FindMacroCalls("-- @f(1)\n/* @g( */ SELECT '@h(' ", dialect).empty());
  }
  EXPECT_TRUE(FindMacroCalls("SELECT $$ @f( $$", Dialect::kDuckDb).empty());
  EXPECT_TRUE(FindMacroCalls("# @f(\n", Dialect::kBigQuery).empty());
}

TEST(FindMacroCalls, RequiresTheExactCallShape) {
  Dialect d = Dialect::kClickHouse;
  EXPECT_TRUE(FindMacroCalls("user@host(1)", d).empty());  // preceded by an identifier character
  EXPECT_TRUE(FindMacroCalls("x1@f(1)", d).empty());
  EXPECT_TRUE(FindMacroCalls("@ f(1)", d).empty());               // space after @
  EXPECT_TRUE(FindMacroCalls("@f (1)", d).empty());               // space before (
  EXPECT_TRUE(FindMacroCalls("@param AND @'param'", d).empty());  // generic audit parameters
  EXPECT_TRUE(FindMacroCalls("@1f(2)", d).empty());               // not an identifier
  EXPECT_EQ(FindMacroCalls("a+@f(1)", d).size(), 1u);
  EXPECT_EQ(FindMacroCalls("(@f(1))", d).size(), 1u);
  EXPECT_EQ(FindMacroCalls("'x'@f(1)", d).size(), 1u);
}

TEST(FindMacroCalls, UnclosedCallIsLocatedAtTheAt) {
  Diagnostic d = MacroErrorOf("SELECT\n  @f(1, (2), ')'");
  EXPECT_EQ(d.code, "SLU-SQL-014");
  EXPECT_EQ(d.location.file, "models/m.sql");
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 3);
  EXPECT_NE(d.message.find("@f("), std::string::npos);
  EXPECT_FALSE(d.hint.empty());
  EXPECT_EQ(MacroErrorOf("@outer(@inner(1)").location.column, 1);
  EXPECT_EQ(MacroErrorOf("@f(' ) ").code, "SLU-SQL-001");
}

TEST(ReplaceSpans, ReplacesEachSpanAndKeepsEveryOtherByte) {
  const std::string text = "SELECT * FROM __ref(\"a\") JOIN __source(b) -- end";
  std::vector<ReferenceCall> calls = FindReferences(text, Dialect::kDuckDb);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(ReplaceSpans(text, {{calls[0].begin, calls[0].end, "x.a"}, {calls[1].begin, calls[1].end, "(SELECT 1)"}}),
            "SELECT * FROM x.a JOIN (SELECT 1) -- end");
  EXPECT_EQ(ReplaceSpans(text, {}), text);
  EXPECT_EQ(ReplaceSpans("abc", {{0, 3, ""}}), "");
  EXPECT_EQ(ReplaceSpans("abc", {{3, 3, "d"}}), "abcd");
}

TEST(ReferenceScanner, RandomBytesOnlyEverSucceedOrThrowError) {
  std::mt19937 random(7);
  const std::vector<std::string> pieces = {
      "__ref", "__source", "@f", "(",  ")",  ",", "ref_type", "=", "'mutable'", "'reference'", "'x'", "\"y\"",
      "`z`",   "--",       "\n", "/*", "*/", " ", "name",     "1", "'",         "$$",          "#",   "\xff"};
  std::uniform_int_distribution<size_t> pick(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 24);
  size_t found = 0;
  for (int iteration = 0; iteration < 8000; ++iteration) {
    std::string text;
    for (int n = length(random); n > 0; --n) text += pieces[pick(random)];
    for (Dialect dialect : kAllDialects) {
      try {
        for (const ReferenceCall& call : FindReferences(text, dialect, "fuzz.sql")) {
          ASSERT_LT(call.begin, call.end);
          ASSERT_LE(call.end, text.size());
          ASSERT_FALSE(call.name.empty());
          ++found;
        }
      } catch (const Error& error) {
        ASSERT_EQ(error.diagnostics().front().code.rfind("SLU-SQL-0", 0), 0u);
      }
      try {
        for (const MacroCall& call : FindMacroCalls(text, dialect, "fuzz.sql")) {
          ASSERT_LT(call.begin, call.end);
          ASSERT_LE(call.end, text.size());
          ASSERT_EQ(text[call.begin], '@');
          ASSERT_EQ(text[call.end - 1], ')');
        }
      } catch (const Error& error) {
        ASSERT_EQ(error.diagnostics().front().code.rfind("SLU-SQL-0", 0), 0u);
      }
    }
  }
  EXPECT_GT(found, 0u);
}

}  // namespace
}  // namespace sluice::sql
