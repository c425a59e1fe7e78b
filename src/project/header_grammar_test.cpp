#include "project/header_grammar.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <variant>

#include "core/diagnostic.hpp"

namespace sluice {
namespace {

const std::string kFile = "models/orders.sql";

HeaderBlock Parse(std::string_view text, std::string_view keyword = "MODEL") {
  return ParseHeaderBlock(text, 0, keyword, kFile);
}

// What a failed parse reported; code is "no error" when the parse succeeded.
struct Failure {
  std::string code = "no error";
  int line = 0;
  int column = 0;
  std::string message;
  std::string hint;
  Diagnostic diagnostic;
};

Failure FailureOf(std::string_view text, size_t offset = 0, std::string_view keyword = "MODEL") {
  Failure failure;
  try {
    ParseHeaderBlock(text, offset, keyword, kFile);
  } catch (const Error& error) {
    const Diagnostic& d = error.diagnostics().front();
    failure = {d.code, d.location.line, d.location.column, d.message, d.hint, d};
  }
  return failure;
}

// "CODE@line:col", for compact expectations.
std::string Located(std::string_view text, size_t offset = 0) {
  Failure failure = FailureOf(text, offset);
  if (failure.code == "no error") return failure.code;
  return failure.code + "@" + std::to_string(failure.line) + ":" + std::to_string(failure.column);
}

const HeaderValue& ValueOf(const HeaderMap& map, std::string_view key) {
  const HeaderEntry* entry = FindEntry(map, key);
  if (entry == nullptr) throw std::runtime_error("no entry " + std::string(key));
  return entry->value;
}

const std::string& Str(const HeaderValue& value) { return std::get<std::string>(value.value); }
const HeaderMap& Map(const HeaderValue& value) { return std::get<HeaderMap>(value.value); }
const HeaderList& List(const HeaderValue& value) { return std::get<HeaderList>(value.value); }

TEST(HeaderGrammar, ParsesEveryScalarType) {
  HeaderBlock block = Parse(
      "MODEL (\n"
      "  dq \"double\", sq 'single', word table,\n"
      "  i 42, neg -7, pos +5, zero -0,\n"
      "  f 1.5, g -0.25, h .5, k 5., e 1e3, e2 2.5E-2, e3 +1e+2,\n"
      "  t true, fa false, n null,\n"
      "  cap True, ver 1.2.3, dash -, exp 1e, ip 10.0.0.1\n"
      ");");
  const HeaderMap& m = block.entries;
  EXPECT_EQ(Str(ValueOf(m, "dq")), "double");
  EXPECT_TRUE(ValueOf(m, "dq").quoted);
  EXPECT_EQ(Str(ValueOf(m, "sq")), "single");
  EXPECT_TRUE(ValueOf(m, "sq").quoted);
  EXPECT_EQ(Str(ValueOf(m, "word")), "table");
  EXPECT_FALSE(ValueOf(m, "word").quoted);

  EXPECT_EQ(std::get<int64_t>(ValueOf(m, "i").value), 42);
  EXPECT_EQ(std::get<int64_t>(ValueOf(m, "neg").value), -7);
  EXPECT_EQ(std::get<int64_t>(ValueOf(m, "pos").value), 5);
  EXPECT_EQ(std::get<int64_t>(ValueOf(m, "zero").value), 0);

  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "f").value), 1.5);
  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "g").value), -0.25);
  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "h").value), 0.5);
  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "k").value), 5.0);
  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "e").value), 1000.0);
  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "e2").value), 0.025);
  EXPECT_DOUBLE_EQ(std::get<double>(ValueOf(m, "e3").value), 100.0);

  EXPECT_EQ(std::get<bool>(ValueOf(m, "t").value), true);
  EXPECT_EQ(std::get<bool>(ValueOf(m, "fa").value), false);
  EXPECT_TRUE(std::holds_alternative<HeaderNull>(ValueOf(m, "n").value));

  // Anything else is a bare string, kept verbatim.
  EXPECT_EQ(Str(ValueOf(m, "cap")), "True");
  EXPECT_EQ(Str(ValueOf(m, "ver")), "1.2.3");
  EXPECT_EQ(Str(ValueOf(m, "dash")), "-");
  EXPECT_EQ(Str(ValueOf(m, "exp")), "1e");
  EXPECT_EQ(Str(ValueOf(m, "ip")), "10.0.0.1");
}

TEST(HeaderGrammar, QuotedWordsStayStrings) {
  HeaderBlock block = Parse("MODEL ( a \"42\", b 'true', c \"null\", d \"\" );");
  EXPECT_EQ(Str(ValueOf(block.entries, "a")), "42");
  EXPECT_EQ(Str(ValueOf(block.entries, "b")), "true");
  EXPECT_EQ(Str(ValueOf(block.entries, "c")), "null");
  EXPECT_EQ(Str(ValueOf(block.entries, "d")), "");
  EXPECT_TRUE(ValueOf(block.entries, "d").quoted);
}

TEST(HeaderGrammar, BackslashKeepsTheNextCharacterAndIsDropped) {
  HeaderBlock block = Parse(R"(MODEL ( a "say \"hi\"", b 'it\'s', c "back\\slash", d "\n", e 'x"y' );)");
  EXPECT_EQ(Str(ValueOf(block.entries, "a")), "say \"hi\"");
  EXPECT_EQ(Str(ValueOf(block.entries, "b")), "it's");
  EXPECT_EQ(Str(ValueOf(block.entries, "c")), "back\\slash");
  EXPECT_EQ(Str(ValueOf(block.entries, "d")), "n");
  EXPECT_EQ(Str(ValueOf(block.entries, "e")), "x\"y");
}

TEST(HeaderGrammar, StringsMaySpanLines) {
  HeaderBlock block = Parse("MODEL ( description \"line one\nline two\" );");
  EXPECT_EQ(Str(ValueOf(block.entries, "description")), "line one\nline two");
}

TEST(HeaderGrammar, ParsesTheDocumentedExample) {
  HeaderBlock block = Parse(
      "MODEL (\n"
      "  kind table,\n"
      "  engine \"MergeTree()\",\n"
      "  order_by [\"a\", \"b\"],\n"
      "  settings (index_granularity 8192),\n"
      "  audits [not_null (column \"x\")],\n"
      ");\n"
      "SELECT 1");
  ASSERT_EQ(block.entries.size(), 5u);
  EXPECT_EQ(block.entries[0].key, "kind");
  EXPECT_EQ(block.entries[4].key, "audits");
  EXPECT_EQ(Str(ValueOf(block.entries, "engine")), "MergeTree()");
  const HeaderList& order_by = List(ValueOf(block.entries, "order_by"));
  ASSERT_EQ(order_by.size(), 2u);
  EXPECT_EQ(Str(order_by[1]), "b");
  const HeaderMap& settings = Map(ValueOf(block.entries, "settings"));
  EXPECT_EQ(std::get<int64_t>(ValueOf(settings, "index_granularity").value), 8192);
}

TEST(HeaderGrammar, NestsListsAndMapsFreely) {
  HeaderBlock block = Parse("MODEL ( grid [[1, 2], [], [[3]]], m (a (b (c [x, (y 1)]))) );");
  const HeaderList& grid = List(ValueOf(block.entries, "grid"));
  ASSERT_EQ(grid.size(), 3u);
  EXPECT_EQ(List(grid[0]).size(), 2u);
  EXPECT_TRUE(List(grid[1]).empty());
  EXPECT_EQ(std::get<int64_t>(List(List(grid[2])[0])[0].value), 3);

  const HeaderMap& a = Map(ValueOf(block.entries, "m"));
  const HeaderMap& b = Map(ValueOf(a, "a"));
  const HeaderMap& c = Map(ValueOf(b, "b"));
  const HeaderList& items = List(ValueOf(c, "c"));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(Str(items[0]), "x");
  EXPECT_EQ(std::get<int64_t>(ValueOf(Map(items[1]), "y").value), 1);
}

TEST(HeaderGrammar, CommasAreOptionalAndTrailingCommasAllowed) {
  HeaderBlock without = Parse("MODEL ( a 1 b [1 2 3] c (x 1 y 2) );");
  HeaderBlock trailing = Parse("MODEL ( a 1, b [1, 2, 3,], c (x 1, y 2,), );");
  for (const HeaderBlock* block : {&without, &trailing}) {
    ASSERT_EQ(block->entries.size(), 3u);
    EXPECT_EQ(List(ValueOf(block->entries, "b")).size(), 3u);
    EXPECT_EQ(Map(ValueOf(block->entries, "c")).size(), 2u);
  }
}

TEST(HeaderGrammar, ExtraCommasAreIgnoredAsInStreamBuild) {
  HeaderBlock block = Parse("MODEL ( , a 1,, b [,1,,2,] ,);");
  ASSERT_EQ(block.entries.size(), 2u);
  EXPECT_EQ(List(ValueOf(block.entries, "b")).size(), 2u);
}

TEST(HeaderGrammar, EmptyHeaderIsAnEmptyMap) {
  EXPECT_TRUE(Parse("AUDIT ();", "AUDIT").entries.empty());
  EXPECT_TRUE(Parse("MODEL(  );").entries.empty());
}

TEST(HeaderGrammar, WordWithParensInAListIsASingleKeyMap) {
  HeaderBlock block = Parse("MODEL ( audits [not_null (column \"x\"), unique, accepted() ] );");
  const HeaderList& audits = List(ValueOf(block.entries, "audits"));
  ASSERT_EQ(audits.size(), 3u);

  const HeaderMap& call = Map(audits[0]);
  ASSERT_EQ(call.size(), 1u);
  EXPECT_EQ(call[0].key, "not_null");
  EXPECT_EQ(Str(ValueOf(Map(call[0].value), "column")), "x");

  EXPECT_EQ(Str(audits[1]), "unique");
  EXPECT_FALSE(audits[1].quoted);

  const HeaderMap& empty_call = Map(audits[2]);
  ASSERT_EQ(empty_call.size(), 1u);
  EXPECT_EQ(empty_call[0].key, "accepted");
  EXPECT_TRUE(Map(empty_call[0].value).empty());
}

TEST(HeaderGrammar, WordWithParensAsAMapValueIsASingleKeyMap) {
  HeaderBlock block = Parse(
      "MODEL ( execution_settings (replay (max_threads 4)), check not_null (column x), "
      "spaced unique -- why\n (cols [a]) );");
  const HeaderMap& settings = Map(ValueOf(block.entries, "execution_settings"));
  EXPECT_EQ(std::get<int64_t>(ValueOf(Map(ValueOf(settings, "replay")), "max_threads").value), 4);

  const HeaderMap& check = Map(ValueOf(block.entries, "check"));
  ASSERT_EQ(check.size(), 1u);
  EXPECT_EQ(check[0].key, "not_null");
  EXPECT_EQ(Str(ValueOf(Map(check[0].value), "column")), "x");

  const HeaderMap& spaced = Map(ValueOf(block.entries, "spaced"));
  ASSERT_EQ(spaced.size(), 1u);
  EXPECT_EQ(spaced[0].key, "unique");
}

TEST(HeaderGrammar, AQuotedStringBeforeParensIsNotAWordCall) {
  HeaderBlock block = Parse("MODEL ( items [\"x\" (a 1)] );");
  const HeaderList& items = List(ValueOf(block.entries, "items"));
  ASSERT_EQ(items.size(), 2u);
  EXPECT_EQ(Str(items[0]), "x");
  EXPECT_EQ(std::get<int64_t>(ValueOf(Map(items[1]), "a").value), 1);

  // Any bare word calls, even one that would otherwise be a number.
  HeaderBlock numeric = Parse("MODEL ( a 1 (b 2) );");
  EXPECT_EQ(Map(ValueOf(numeric.entries, "a"))[0].key, "1");
}

TEST(HeaderGrammar, RecordsOffsets) {
  //                       0         1         2         3         4
  //                       0123456789012345678901234567890123456789012345
  std::string_view text = "  MODEL ( kind table, l [1, 'x'], c f (a 1) );\nSELECT 1";
  HeaderBlock block = Parse(text);
  EXPECT_EQ(block.begin, 2u);
  EXPECT_EQ(block.end, 46u);
  EXPECT_EQ(text.substr(block.end), "\nSELECT 1");

  const HeaderEntry& kind = block.entries[0];
  EXPECT_EQ(kind.key_offset, 10u);
  EXPECT_EQ(kind.value.offset, 15u);

  const HeaderEntry& l = block.entries[1];
  EXPECT_EQ(l.key_offset, 22u);
  EXPECT_EQ(l.value.offset, 24u);
  EXPECT_EQ(List(l.value)[0].offset, 25u);
  EXPECT_EQ(List(l.value)[1].offset, 28u);  // the opening quote

  const HeaderEntry& c = block.entries[2];
  EXPECT_EQ(c.value.offset, 36u);            // the word of `f (a 1)`
  const HeaderEntry& call = Map(c.value)[0];
  EXPECT_EQ(call.key_offset, 36u);
  EXPECT_EQ(call.value.offset, 38u);         // its `(`
  EXPECT_EQ(Map(call.value)[0].key_offset, 39u);
}

TEST(HeaderGrammar, StartsAtTheGivenOffset) {
  std::string_view text = "TEST (name \"a\");\nWITH x AS (SELECT 1) SELECT 1\n  TEST (name \"b\");\nSELECT 2";
  HeaderBlock first = ParseHeaderBlock(text, 0, "TEST", kFile);
  EXPECT_EQ(Str(ValueOf(first.entries, "name")), "a");
  HeaderBlock second = ParseHeaderBlock(text, first.end + 30, "TEST", kFile);
  EXPECT_EQ(second.begin, text.find("TEST", first.end));
  EXPECT_EQ(Str(ValueOf(second.entries, "name")), "b");
  EXPECT_EQ(text.substr(second.end), "\nSELECT 2");

  // Errors in a later block are located in the whole file.
  std::string_view bad = "TEST (name \"a\");\nSELECT 1\nTEST (name: \"b\");";
  Failure failure = FailureOf(bad, 26, "TEST");
  EXPECT_EQ(failure.code, "SLU-HEADER-003");
  EXPECT_EQ(failure.line, 3);
  EXPECT_EQ(failure.column, 11);

  // An offset past the end is treated as the end.
  EXPECT_EQ(Located("MODEL ();", 100), "SLU-HEADER-001@1:10");
}

TEST(HeaderGrammar, CloseParenSemicolonInsideAStringDoesNotEndTheHeader) {
  std::string_view text = "MODEL ( description \"ends with );\", kind table );\nSELECT 1";
  HeaderBlock block = Parse(text);
  EXPECT_EQ(Str(ValueOf(block.entries, "description")), "ends with );");
  EXPECT_EQ(Str(ValueOf(block.entries, "kind")), "table");
  EXPECT_EQ(text.substr(block.end), "\nSELECT 1");
}

TEST(HeaderGrammar, AllowsCommentsAndWhitespaceBeforeTheSemicolon) {
  std::string_view text = "MODEL ( a 1 )  -- trailing\n /* block\n comment */\n ;SELECT 1";
  HeaderBlock block = Parse(text);
  EXPECT_EQ(text.substr(block.end), "SELECT 1");
}

TEST(HeaderGrammar, TreatsCommentsInsideTheHeaderAsWhitespace) {
  HeaderBlock block = Parse(
      "MODEL (\n"
      "  -- the kind\n"
      "  kind table, -- after a value\n"
      "  /* a block */ name /* between key and value */ orders,\n"
      "  cols [a -- in a list\n , b]\n"
      ");");
  ASSERT_EQ(block.entries.size(), 3u);
  EXPECT_EQ(Str(ValueOf(block.entries, "kind")), "table");
  EXPECT_EQ(Str(ValueOf(block.entries, "name")), "orders");
  EXPECT_EQ(List(ValueOf(block.entries, "cols")).size(), 2u);
}

TEST(HeaderGrammar, CommentMarkersInsideWordsAndStringsAreText) {
  HeaderBlock block = Parse("MODEL ( a b--c, d \"-- not a comment\", e x/*y );");
  EXPECT_EQ(Str(ValueOf(block.entries, "a")), "b--c");
  EXPECT_EQ(Str(ValueOf(block.entries, "d")), "-- not a comment");
  EXPECT_EQ(Str(ValueOf(block.entries, "e")), "x/*y");
}

TEST(HeaderGrammar, AcceptsOtherKeywordsAndNoSpaceBeforeParen) {
  HeaderBlock block = Parse("TEST(name \"t\", mode model);", "TEST");
  EXPECT_EQ(Str(ValueOf(block.entries, "mode")), "model");
}

TEST(HeaderGrammar, RejectsAMissingKeywordOrParen) {
  EXPECT_EQ(Located("SELECT 1"), "SLU-HEADER-001@1:1");
  EXPECT_EQ(Located(""), "SLU-HEADER-001@1:1");
  EXPECT_EQ(Located("\n\n   MODELS ( a 1 );"), "SLU-HEADER-001@3:4");
  EXPECT_EQ(Located("model ( a 1 );"), "SLU-HEADER-001@1:1");
  EXPECT_EQ(Located("  MODEL\n   kind table );"), "SLU-HEADER-001@2:4");
  EXPECT_EQ(Located("MODEL"), "SLU-HEADER-001@1:6");

  Failure comment = FailureOf("-- a model\nMODEL ( a 1 );");
  EXPECT_EQ(comment.code, "SLU-HEADER-001");
  EXPECT_NE(comment.hint.find("comments are not allowed"), std::string::npos);
}

TEST(HeaderGrammar, RejectsAnUnterminatedHeader) {
  EXPECT_EQ(Located("MODEL ( a 1"), "SLU-HEADER-002@1:7");                   // the header's `(`
  EXPECT_EQ(Located("MODEL (\n  a [1, 2\n"), "SLU-HEADER-002@2:5");           // the innermost `[`
  EXPECT_EQ(Located("MODEL ( a (b 1"), "SLU-HEADER-002@1:11");
  EXPECT_EQ(Located("MODEL ( a 1 )\nSELECT 1"), "SLU-HEADER-002@2:1");        // missing `;`
  EXPECT_EQ(Located("MODEL ( a 1 )"), "SLU-HEADER-002@1:14");                 // at the end
  EXPECT_EQ(Located("MODEL ( a 1 ) /* x"), "SLU-HEADER-002@1:15");            // open comment
  EXPECT_EQ(Located("MODEL ( a 1 /* x"), "SLU-HEADER-002@1:13");
  EXPECT_EQ(Located("MODEL ( a 1 -- no end"), "SLU-HEADER-002@1:7");
  EXPECT_EQ(Located("MODEL (\n  kind table\n;\nSELECT 1"), "SLU-HEADER-002@3:1");  // `;` as a key
  EXPECT_EQ(Located("MODEL ( kind ;"), "SLU-HEADER-002@1:14");                // `;` as a value
}

TEST(HeaderGrammar, RejectsAColon) {
  Failure failure = FailureOf("MODEL (\n  kind: table\n);");
  EXPECT_EQ(failure.code, "SLU-HEADER-003");
  EXPECT_EQ(failure.line, 2);
  EXPECT_EQ(failure.column, 7);
  EXPECT_NE(failure.hint.find("header entries are written `key value`, e.g. `kind table`"),
            std::string::npos);
  EXPECT_EQ(Located("MODEL ( kind : table );"), "SLU-HEADER-003@1:14");
  EXPECT_EQ(Located("MODEL ( at 12:00 );"), "SLU-HEADER-003@1:14");
}

TEST(HeaderGrammar, RejectsBraces) {
  EXPECT_EQ(Located("MODEL ( settings { a 1 } );"), "SLU-HEADER-004@1:18");
  EXPECT_EQ(Located("MODEL ( a b} );"), "SLU-HEADER-004@1:12");
  EXPECT_NE(FailureOf("MODEL ( s {} );").hint.find("use ( ) for maps"), std::string::npos);
}

TEST(HeaderGrammar, RejectsAKeyWithoutAValue) {
  EXPECT_EQ(Located("MODEL ( kind );"), "SLU-HEADER-005@1:9");
  EXPECT_EQ(Located("MODEL ( kind, name x );"), "SLU-HEADER-005@1:9");
  EXPECT_EQ(Located("MODEL (\n  kind table\n  name\n);"), "SLU-HEADER-005@3:3");
  EXPECT_EQ(Located("MODEL ( s (a 1 b) );"), "SLU-HEADER-005@1:16");
}

TEST(HeaderGrammar, RejectsAnUnterminatedString) {
  EXPECT_EQ(Located("MODEL (\n  name \"abc );\nSELECT 1"), "SLU-HEADER-006@2:8");
  EXPECT_EQ(Located("MODEL ( name 'abc\\"), "SLU-HEADER-006@1:14");  // a trailing backslash
}

TEST(HeaderGrammar, RejectsAQuoteInsideABareWord) {
  EXPECT_EQ(Located("MODEL ( name ab\"c\" );"), "SLU-HEADER-007@1:16");
  EXPECT_EQ(Located("MODEL ( it's 1 );"), "SLU-HEADER-007@1:11");
}

TEST(HeaderGrammar, RejectsAKeyThatIsNotABareWord) {
  EXPECT_EQ(Located("MODEL ( \"kind\" table );"), "SLU-HEADER-008@1:9");
  EXPECT_EQ(Located("MODEL ( [a] 1 );"), "SLU-HEADER-008@1:9");
  EXPECT_EQ(Located("MODEL ( a \"1\" (b 2) );"), "SLU-HEADER-008@1:15");
}

TEST(HeaderGrammar, RejectsDuplicateKeysInEveryMap) {
  Failure failure = FailureOf("MODEL ( kind table,\n kind view );");
  EXPECT_EQ(failure.code, "SLU-HEADER-009");
  EXPECT_EQ(failure.line, 2);
  EXPECT_EQ(failure.column, 2);
  EXPECT_NE(failure.message.find("1:9"), std::string::npos);
  EXPECT_EQ(Located("MODEL ( s (a 1, a 2) );"), "SLU-HEADER-009@1:17");
  EXPECT_EQ(Located("MODEL ( x (a 1), y (a 2) );"), "no error");
  // Past 16 keys duplicates are found by an index instead of a scan: same answers, first use named.
  std::string many = "MODEL (";
  for (int k = 0; k < 40; ++k) many += " k" + std::to_string(k) + " 1,";
  EXPECT_EQ(Located(many + " );"), "no error");
  EXPECT_EQ(Located(many + " k3 2 );"), "SLU-HEADER-009@1:" + std::to_string(many.size() + 2));
  Failure late = FailureOf(many + " k39 2 );");
  EXPECT_NE(late.message.find("1:" + std::to_string(many.find(" k39 ") + 2)), std::string::npos) << late.message;
  EXPECT_EQ(Located(many + " k20x 2, k17 3 );"), "SLU-HEADER-009@1:" + std::to_string(many.size() + 10));
}

TEST(HeaderGrammar, RejectsMismatchedClosingSymbols) {
  EXPECT_EQ(Located("MODEL ( a 1 ] );"), "SLU-HEADER-010@1:13");
  EXPECT_EQ(Located("MODEL ( a ] );"), "SLU-HEADER-010@1:11");
  EXPECT_EQ(Located("MODEL ( a [1 ) );"), "SLU-HEADER-010@1:14");
  EXPECT_EQ(Located("MODEL ( a (b [1 2) );"), "SLU-HEADER-010@1:18");
}

TEST(HeaderGrammar, RejectsNumbersOutOfRange) {
  EXPECT_EQ(std::get<int64_t>(ValueOf(Parse("MODEL ( a 9223372036854775807 );").entries, "a").value),
            INT64_MAX);
  EXPECT_EQ(std::get<int64_t>(ValueOf(Parse("MODEL ( a -9223372036854775808 );").entries, "a").value),
            INT64_MIN);
  EXPECT_EQ(Located("MODEL ( a 9223372036854775808 );"), "SLU-HEADER-012@1:11");
  EXPECT_EQ(Located("MODEL ( a -9223372036854775809 );"), "SLU-HEADER-012@1:11");
  EXPECT_EQ(Located("MODEL ( a [1e999] );"), "SLU-HEADER-012@1:12");
  EXPECT_EQ(Str(ValueOf(Parse("MODEL ( a \"9223372036854775808\" );").entries, "a")), "9223372036854775808");
}

TEST(HeaderGrammar, DiagnosticsCarryFileSourceLineAndHint) {
  Failure failure = FailureOf("MODEL (\n  kind: table\n);");
  EXPECT_EQ(failure.diagnostic.location.file, kFile);
  EXPECT_EQ(failure.diagnostic.source_line, "  kind: table");
  std::string rendered = FormatDiagnostic(failure.diagnostic);
  EXPECT_NE(rendered.find("models/orders.sql:2:7: error[SLU-HEADER-003]"), std::string::npos);
  EXPECT_NE(rendered.find("      ^"), std::string::npos);
  EXPECT_NE(rendered.find("hint: "), std::string::npos);

  for (std::string_view text : {"SELECT", "MODEL ( a", "MODEL ( a: 1 );", "MODEL ( a {} );", "MODEL ( a );",
                                "MODEL ( a \"", "MODEL ( a b\" );", "MODEL ( 'a' 1 );", "MODEL ( a 1 a 2 );",
                                "MODEL ( a ] );", "MODEL ( a 99999999999999999999 );"}) {
    Failure each = FailureOf(text);
    EXPECT_NE(each.code, "no error") << text;
    EXPECT_FALSE(each.message.empty()) << text;
    EXPECT_FALSE(each.hint.empty()) << text;
  }
}

std::string Nested(int depth, char open, char close) {
  std::string text = "MODEL ( a ";
  text += std::string(static_cast<size_t>(depth) - 1, open);
  text += std::string(static_cast<size_t>(depth) - 1, close);
  text += " );";
  return text;
}

TEST(HeaderGrammar, AcceptsNestingUpToTheLimit) {
  // The header's own `(` is the first level.
  EXPECT_EQ(Located(Nested(kMaxHeaderNesting, '[', ']')), "no error");
  EXPECT_EQ(Located(Nested(kMaxHeaderNesting + 1, '[', ']')),
            "SLU-HEADER-011@1:" + std::to_string(11 + kMaxHeaderNesting - 1));

  std::string maps = "MODEL ( ";
  for (int i = 1; i < kMaxHeaderNesting; ++i) maps += "k (";
  maps += std::string(static_cast<size_t>(kMaxHeaderNesting) - 1, ')') + " );";
  EXPECT_EQ(Located(maps), "no error");
  EXPECT_EQ(FailureOf("MODEL ( k (" + maps.substr(8)).code, "SLU-HEADER-011");
}

TEST(HeaderGrammar, HostileNestingFailsWithoutExhaustingTheStack) {
  std::string deep = "MODEL ( a " + std::string(1'000'000, '[');
  Failure failure = FailureOf(deep);
  EXPECT_EQ(failure.code, "SLU-HEADER-011");
  EXPECT_EQ(failure.message, "header nested too deeply");

  std::string calls = "MODEL ( a ";
  for (int i = 0; i < 100'000; ++i) calls += "f(";
  EXPECT_EQ(FailureOf(calls).code, "SLU-HEADER-011");
}

// Parses `text` and checks the only outcomes are success with a sane block or a located sluice::Error;
// returns whether it parsed.
bool ExpectParsesOrFailsCleanly(const std::string& text) {
  try {
    HeaderBlock block = ParseHeaderBlock(text, 0, "MODEL", kFile);
    EXPECT_LE(block.begin, block.end) << text;
    EXPECT_LE(block.end, text.size()) << text;
    EXPECT_TRUE(block.end > 0 && text[block.end - 1] == ';') << text;
    return true;
  } catch (const Error& error) {
    const Diagnostic& d = error.diagnostics().front();
    EXPECT_EQ(d.code.rfind("SLU-HEADER-", 0), 0u) << d.code;
    EXPECT_GE(d.location.line, 1) << text;
    EXPECT_GE(d.location.column, 1) << text;
    return false;
  }
}

TEST(HeaderGrammar, RandomBytesEitherParseOrRaiseAnError) {
  std::mt19937 random(20240601);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> length(0, 120);
  for (int round = 0; round < 5000; ++round) {
    std::string text = round % 2 == 0 ? "MODEL (" : "";
    for (int n = length(random); n > 0; --n) text += static_cast<char>(byte(random));
    ExpectParsesOrFailsCleanly(text);
    if (HasFailure()) return;
  }
}

TEST(HeaderGrammar, RandomTokenSoupEitherParsesOrRaisesAnError) {
  const std::string_view pieces[] = {"(", ")", "[", "]", ",", ";", " ", "\n", "\"", "'", "\\", "a", "b",
                                     "1", "-2", "1.5e3", "9999999999999999999", "true", "null", "--",
                                     "/*", "*/", ":", "{", "}", "x (", ");"};
  constexpr size_t kPieceCount = sizeof(pieces) / sizeof(pieces[0]);
  std::mt19937 random(7);
  std::uniform_int_distribution<size_t> pick(0, kPieceCount - 1);
  std::uniform_int_distribution<int> length(0, 60);
  int parsed = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = "MODEL (";
    for (int n = length(random); n > 0; --n) text += pieces[pick(random)];
    if (ExpectParsesOrFailsCleanly(text)) ++parsed;
    if (HasFailure()) return;
  }
  EXPECT_GT(parsed, 0);  // the soup does reach the success path
}

TEST(HeaderGrammar, FindsEntriesByKey) {
  HeaderBlock block = Parse("MODEL ( kind table, name orders );");
  ASSERT_NE(FindEntry(block.entries, "name"), nullptr);
  EXPECT_EQ(FindEntry(block.entries, "name")->key_offset, 20u);
  EXPECT_EQ(FindEntry(block.entries, "missing"), nullptr);
  EXPECT_EQ(FindEntry(HeaderMap{}, "kind"), nullptr);
}

TEST(HeaderGrammar, DescribesValueTypes) {
  HeaderBlock block =
      Parse("MODEL ( s \"x\", w x, i 1, f 1.5, b true, n null, l [], m (), c f (a 1) );");
  const HeaderMap& m = block.entries;
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "s")), "string");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "w")), "bare word");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "i")), "integer");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "f")), "float");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "b")), "boolean");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "n")), "null");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "l")), "list");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "m")), "map");
  EXPECT_EQ(DescribeHeaderValue(ValueOf(m, "c")), "map");
}

}  // namespace
}  // namespace sluice
