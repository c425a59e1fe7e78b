#include "sql/tokenizer.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "sql/keyword_table.hpp"
#include "sql/token_class.hpp"

namespace sluice::sql {
namespace {

constexpr Dialect kAllDialects[] = {Dialect::kDuckDb, Dialect::kClickHouse, Dialect::kPostgres, Dialect::kBigQuery};

char KindLetter(TokenKind kind) {
  switch (kind) {
    case TokenKind::kWord:
      return 'W';
    case TokenKind::kQuotedIdentifier:
      return 'Q';
    case TokenKind::kString:
      return 'S';
    case TokenKind::kNumber:
      return 'N';
    case TokenKind::kOperator:
      return 'O';
    case TokenKind::kPunctuation:
      return 'P';
    case TokenKind::kComment:
      return 'C';
  }
  return '?';
}

// Renders tokens as `K(text)` separated by spaces, e.g. "W(SELECT) N(1)".
std::string Lex(std::string_view text, Dialect dialect) {
  std::string out;
  for (const Token& token : Tokenize(text, dialect)) {
    if (!out.empty()) out += ' ';
    out += KindLetter(token.kind);
    out += '(';
    out += token.text;
    out += ')';
  }
  return out;
}

// The single token of `text`, which must tokenize to exactly one token.
Token Only(std::string_view text, Dialect dialect) {
  std::vector<Token> tokens = Tokenize(text, dialect);
  EXPECT_EQ(tokens.size(), 1u) << text;
  return tokens.empty() ? Token{TokenKind::kOperator, 0, 0, 0, {}} : tokens.front();
}

// The diagnostic thrown by tokenizing `text` (code "no error" when nothing is thrown).
Diagnostic ErrorOf(std::string_view text, Dialect dialect, const std::string& file = "models/m.sql") {
  try {
    Tokenize(text, dialect, file);
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  return Diagnostic{"no error", {}, {}, {}, {}};
}

TEST(Tokenizer, SplitsWordsNumbersPunctuationAndDropsWhitespace) {
  EXPECT_EQ(Lex("SELECT a, 1 FROM t;", Dialect::kDuckDb), "W(SELECT) W(a) P(,) N(1) W(FROM) W(t) P(;)");
  EXPECT_EQ(Lex(" \t\r\n\f\v", Dialect::kDuckDb), "");
  EXPECT_EQ(Lex("f(x[1]){y}.z", Dialect::kPostgres), "W(f) P(() W(x) P([) N(1) P(]) P()) P({) W(y) P(}) P(.) W(z)");
  EXPECT_EQ(Lex("_a$1 b2", Dialect::kPostgres), "W(_a$1) W(b2)");
}

// The classes a token should have, derived from its kind and text alone.
uint32_t ExpectedClasses(const Token& token) {
  namespace tc = token_class;
  switch (token.kind) {
    case TokenKind::kWord:
      return tc::kWord | WordClasses(token.text);
    case TokenKind::kOperator:
      return token.text == "::" ? tc::kDoubleColon : 0;
    case TokenKind::kPunctuation:
      if (token.text == "(") return tc::kOpenParen | tc::kOpenBracket;
      if (token.text == "[" || token.text == "{") return tc::kOpenBracket;
      if (token.text == ")" || token.text == "]" || token.text == "}") return tc::kCloseBracket;
      if (token.text == ",") return tc::kComma;
      if (token.text == ".") return tc::kDot;
      if (token.text == ";") return tc::kSemicolon;
      return 0;
    default:
      return 0;
  }
}

// Each token carries its classes: bracket and separator roles, `::`, and the keyword lists of a bare word (any
// case); other tokens, a keyword in quotes or a string included, have none.
TEST(Tokenizer, ClassifiesEveryToken) {
  namespace tc = token_class;
  std::string text = "SELECT Cast(a::Int AS t)[1], {x}.y, \"as\", 'end', 1abc, try_cast FROM t -- as\n;";
  std::vector<Token> tokens = Tokenize(text, Dialect::kClickHouse);
  std::vector<uint32_t> classes;
  for (const Token& token : tokens) classes.push_back(token.classes);
  const uint32_t w = tc::kWord;
  const uint32_t open = tc::kOpenBracket;
  const uint32_t close = tc::kCloseBracket;
  // One line per group of tokens, the group as a comment.
  // clang-format off
  EXPECT_EQ(classes, (std::vector<uint32_t>{
                         w | tc::kSelect,                                      // SELECT
                         w | tc::kCast, tc::kOpenParen | open,                 // Cast (
                         w, tc::kDoubleColon, w,                               // a :: Int
                         w | tc::kAs | tc::kExpressionKeyword, w, close,       // AS t )
                         open, 0, close, tc::kComma,                           // [ 1 ] ,
                         open, w, close, tc::kDot, w, tc::kComma,              // { x } . y ,
                         0, tc::kComma, 0, tc::kComma,                         // "as" , 'end' ,
                         w, tc::kComma, w | tc::kCast, w | tc::kBoundary, w,  // 1abc , try_cast FROM t
                         0, tc::kSemicolon}));                                 // -- as ;
  // clang-format on
  for (Dialect dialect : kAllDialects) {
    for (const Token& token : Tokenize(text, dialect)) EXPECT_EQ(token.classes, ExpectedClasses(token)) << token.text;
  }
}

TEST(Tokenizer, RecordsByteOffsetsAndViews) {
  std::string text = "SELECT  x\n  FROM t";
  std::vector<Token> tokens = Tokenize(text, Dialect::kClickHouse);
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[1].begin, 8u);
  EXPECT_EQ(tokens[1].end, 9u);
  EXPECT_EQ(tokens[2].begin, 12u);
  for (const Token& token : tokens) {
    EXPECT_EQ(token.text, std::string_view(text).substr(token.begin, token.end - token.begin));
  }
}

// Tokenizing from an offset (a model body after its header) gives the tokens of the text with everything
// before the offset blanked: same kinds, same absolute offsets, views into the original text; errors are
// located by absolute line and column.
TEST(Tokenizer, FromAnOffsetMatchesTheBlankedText) {
  std::string text = "MODEL (x 'it''s');\nSELECT a.b, 'q' -- c\n  FROM t";
  size_t begin = text.find(';') + 1;
  std::string blanked = text;
  for (size_t i = 0; i < begin; ++i) {
    if (blanked[i] != '\n') blanked[i] = ' ';
  }
  for (Dialect dialect : kAllDialects) {
    std::vector<Token> expected = Tokenize(blanked, dialect);
    std::vector<Token> tokens = Tokenize(text, begin, dialect);
    ASSERT_EQ(tokens.size(), expected.size());
    for (size_t i = 0; i < tokens.size(); ++i) {
      EXPECT_EQ(tokens[i].kind, expected[i].kind);
      EXPECT_EQ(tokens[i].begin, expected[i].begin);
      EXPECT_EQ(tokens[i].end, expected[i].end);
      EXPECT_EQ(tokens[i].text.data(), text.data() + tokens[i].begin);
    }
  }
  EXPECT_TRUE(Tokenize(text, text.size() + 5, Dialect::kDuckDb).empty());
  try {
    Tokenize("MODEL ();\nSELECT 'open", 9, Dialect::kDuckDb, "m.sql");
    FAIL() << "expected SLU-SQL-001";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-SQL-001");
    EXPECT_EQ(error.diagnostics().front().location.line, 2);
    EXPECT_EQ(error.diagnostics().front().location.column, 8);
  }
}

TEST(Tokenizer, TreatsNonAsciiBytesAsIdentifierCharacters) {
  EXPECT_EQ(Lex("café größe", Dialect::kDuckDb), "W(café) W(größe)");
  EXPECT_EQ(Lex("\xff\xfe"
                "abc",
                Dialect::kBigQuery),
            "W(\xff\xfe"
            "abc)");
  EXPECT_EQ(Lex("a\xc3", Dialect::kClickHouse), "W(a\xc3)");  // truncated UTF-8 is still one word
}

TEST(Tokenizer, ScansNumberForms) {
  EXPECT_EQ(Lex("42 3.14 .5 1e10 1.5E-3 2e+7 0x1F 0XaB 7.", Dialect::kPostgres),
            "N(42) N(3.14) N(.5) N(1e10) N(1.5E-3) N(2e+7) N(0x1F) N(0XaB) N(7.)");
  EXPECT_EQ(Lex("SELECT .5, -.25", Dialect::kDuckDb), "W(SELECT) N(.5) P(,) O(-) N(.25)");
  EXPECT_EQ(Lex("1e 0x", Dialect::kPostgres), "N(1) W(e) N(0) W(x)");
}

TEST(Tokenizer, DotAfterAnOperandIsMemberAccess) {
  EXPECT_EQ(Lex("t.1.2", Dialect::kClickHouse), "W(t) P(.) N(1) P(.) N(2)");
  EXPECT_EQ(Lex("f(x).1", Dialect::kClickHouse), "W(f) P(() W(x) P()) P(.) N(1)");
  EXPECT_EQ(Lex("\"s\".t", Dialect::kPostgres), "Q(\"s\") P(.) W(t)");
  EXPECT_EQ(Lex("a .5", Dialect::kPostgres), "W(a) N(.5)");
  EXPECT_EQ(Lex("..5", Dialect::kClickHouse), "P(.) N(.5)");
}

TEST(Tokenizer, ClickHouseIdentifiersMayStartWithDigits) {
  EXPECT_EQ(Lex("1abc 2", Dialect::kClickHouse), "W(1abc) N(2)");
  EXPECT_EQ(Lex("1abc", Dialect::kPostgres), "N(1) W(abc)");
}

TEST(Tokenizer, PrefersLongestOperator) {
  EXPECT_EQ(Lex("a::int<=b>=c<>d!=e||f->g->>h=>i", Dialect::kPostgres),
            "W(a) O(::) W(int) O(<=) W(b) O(>=) W(c) O(<>) W(d) O(!=) W(e) O(||) W(f) O(->) W(g) O(->>) W(h) "
            "O(=>) W(i)");
  EXPECT_EQ(Lex("+-*/%=<>!~&|^?:@", Dialect::kDuckDb),
            "O(+) O(-) O(*) O(/) O(%) O(=) O(<>) O(!) O(~) O(&) O(|) O(^) O(?) O(:) O(@)");
  EXPECT_EQ(Lex("a->", Dialect::kPostgres), "W(a) O(->)");  // at the end of the text
  EXPECT_EQ(Lex("a-> >", Dialect::kPostgres), "W(a) O(->) O(>)");
  EXPECT_EQ(Lex("a<", Dialect::kPostgres), "W(a) O(<)");
  EXPECT_EQ(Lex(":::", Dialect::kPostgres), "O(::) O(:)");
  EXPECT_EQ(Lex("a # b", Dialect::kPostgres), "W(a) O(#) W(b)");
  EXPECT_EQ(Lex("$1 + $2", Dialect::kPostgres), "O($) N(1) O(+) O($) N(2)");
}

TEST(Tokenizer, UnknownBytesBecomeOneByteOperators) {
  std::string text("a\\b\x01", 4);
  text += '\0';
  EXPECT_EQ(Tokenize(text, Dialect::kPostgres).size(), 5u);
  EXPECT_EQ(Lex("`x`", Dialect::kPostgres), "O(`) W(x) O(`)");
}

TEST(Tokenizer, LineCommentsEndAtTheLineBreak) {
  EXPECT_EQ(Lex("a -- note 'x\nb", Dialect::kDuckDb), "W(a) C(-- note 'x) W(b)");
  EXPECT_EQ(Lex("a--x", Dialect::kPostgres), "W(a) C(--x)");
  EXPECT_EQ(Lex("a -- x\r\nb", Dialect::kPostgres), "W(a) C(-- x) W(b)");
  EXPECT_EQ(Lex("-- at end", Dialect::kBigQuery), "C(-- at end)");
}

TEST(Tokenizer, HashCommentsOnlyInClickHouseAndBigQuery) {
  EXPECT_EQ(Lex("a # c\nb", Dialect::kClickHouse), "W(a) C(# c) W(b)");
  EXPECT_EQ(Lex("a #c\nb", Dialect::kBigQuery), "W(a) C(#c) W(b)");
  EXPECT_EQ(Lex("a # c", Dialect::kDuckDb), "W(a) O(#) W(c)");
}

TEST(Tokenizer, SlashSlashCommentsOnlyInClickHouse) {
  EXPECT_EQ(Lex("a // c\nb", Dialect::kClickHouse), "W(a) C(// c) W(b)");
  EXPECT_EQ(Lex("a // c", Dialect::kPostgres), "W(a) O(/) O(/) W(c)");
}

TEST(Tokenizer, BlockCommentsNestInDuckDbPostgresAndClickHouse) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres, Dialect::kClickHouse}) {
    EXPECT_EQ(Lex("a /* x /* y */ z */ b", dialect), "W(a) C(/* x /* y */ z */) W(b)");
    EXPECT_EQ(Lex("/**/x/*/ */", dialect), "C(/**/) W(x) C(/*/ */)");
  }
}

TEST(Tokenizer, BlockCommentsDoNotNestInBigQuery) {
  EXPECT_EQ(Lex("a /* x /* y */ z */ b", Dialect::kBigQuery), "W(a) C(/* x /* y */) W(z) O(*) O(/) W(b)");
}

TEST(Tokenizer, CommentMarkersInsideStringsAreText) {
  EXPECT_EQ(Lex("'-- not /* a comment'", Dialect::kDuckDb), "S('-- not /* a comment')");
  EXPECT_EQ(Lex("'# x'", Dialect::kClickHouse), "S('# x')");
  EXPECT_EQ(Lex("/* it's */ x", Dialect::kPostgres), "C(/* it's */) W(x)");
}

TEST(Tokenizer, StandardStringsDoubleQuotesWithoutBackslashEscapes) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres}) {
    EXPECT_EQ(Lex("'it''s' 'x'", dialect), "S('it''s') S('x')");
    EXPECT_EQ(Lex("'a\\' b", dialect), "S('a\\') W(b)");
    EXPECT_EQ(Lex("''", dialect), "S('')");
  }
}

TEST(Tokenizer, ClickHouseStringsTakeBackslashEscapesAndDoubling) {
  EXPECT_EQ(Lex("'it\\'s' 'a''b' 'c\\\\'", Dialect::kClickHouse), "S('it\\'s') S('a''b') S('c\\\\')");
  EXPECT_EQ(Lex("'multi\nline'", Dialect::kClickHouse), "S('multi\nline')");
}

TEST(Tokenizer, EscapeStringsInDuckDbAndPostgres) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres}) {
    EXPECT_EQ(Lex("E'it\\'s' e'a''b'", dialect), "S(E'it\\'s') S(e'a''b')");
  }
  EXPECT_EQ(Lex("E'x'", Dialect::kClickHouse), "W(E) S('x')");
  EXPECT_EQ(Lex("name'x'", Dialect::kPostgres), "W(name) S('x')");
}

TEST(Tokenizer, HexBitAndNationalStringPrefixes) {
  EXPECT_EQ(Lex("X'1F' b'01' N'x'", Dialect::kPostgres), "S(X'1F') S(b'01') S(N'x')");
  EXPECT_EQ(Lex("x'1F' N'x'", Dialect::kClickHouse), "S(x'1F') W(N) S('x')");
}

TEST(Tokenizer, DollarQuotedStringsInDuckDbAndPostgres) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres}) {
    EXPECT_EQ(Lex("$$it's -- $$ x", dialect), "S($$it's -- $$) W(x)");
    EXPECT_EQ(Lex("$fn$ a $$ b $f $fn$", dialect), "S($fn$ a $$ b $f $fn$)");
    EXPECT_EQ(Lex("$a$$a$", dialect), "S($a$$a$)");
    EXPECT_EQ(Lex("$_x1$y$_x1$", dialect), "S($_x1$y$_x1$)");
    EXPECT_EQ(Lex("a$b$c", dialect), "W(a$b$c)");
  }
  EXPECT_EQ(Lex("$$x$$", Dialect::kClickHouse), "O($) O($) W(x$$)");
}

TEST(Tokenizer, QuotedIdentifiers) {
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kPostgres, Dialect::kClickHouse}) {
    EXPECT_EQ(Lex("\"a\"\"b\" \"select\"", dialect), "Q(\"a\"\"b\") Q(\"select\")");
  }
  EXPECT_EQ(Lex("\"a\\\" b\"", Dialect::kClickHouse), "Q(\"a\\\" b\")");
  EXPECT_EQ(Lex("\"a\\\" b", Dialect::kPostgres), "Q(\"a\\\") W(b)");
  EXPECT_EQ(Lex("`a\\`b` `c``d`", Dialect::kClickHouse), "Q(`a\\`b`) Q(`c``d`)");
  EXPECT_EQ(Lex("`a\\`b` `c`", Dialect::kBigQuery), "Q(`a\\`b`) Q(`c`)");
  EXPECT_EQ(Lex("`proj.ds.t`", Dialect::kBigQuery), "Q(`proj.ds.t`)");
}

TEST(Tokenizer, BigQueryDoubleQuotesAreStrings) {
  EXPECT_EQ(Lex("\"x\" 'y' \"it\\\"s\"", Dialect::kBigQuery), "S(\"x\") S('y') S(\"it\\\"s\")");
  EXPECT_EQ(Lex("'a''b'", Dialect::kBigQuery), "S('a') S('b')");  // no doubling in BigQuery
  EXPECT_EQ(Lex("'it\\'s'", Dialect::kBigQuery), "S('it\\'s')");
}

TEST(Tokenizer, BigQueryRawAndBytesPrefixes) {
  EXPECT_EQ(Lex("r'\\d+' R\"x\" b'\\x01' B\"y\" rb'z' BR\"w\" Rb'''v'''", Dialect::kBigQuery),
            "S(r'\\d+') S(R\"x\") S(b'\\x01') S(B\"y\") S(rb'z') S(BR\"w\") S(Rb'''v''')");
  EXPECT_EQ(Lex("r'\\''", Dialect::kBigQuery), "S(r'\\'')");  // a backslash still keeps the quote in
  EXPECT_EQ(Lex("attr'x' rr'y'", Dialect::kBigQuery), "W(attr) S('x') W(rr) S('y')");
}

TEST(Tokenizer, BigQueryTripleQuotedStrings) {
  EXPECT_EQ(Lex("'''it's\n''ok''' x", Dialect::kBigQuery), "S('''it's\n''ok''') W(x)");
  EXPECT_EQ(Lex("\"\"\"a \"quoted\" b\"\"\"", Dialect::kBigQuery), "S(\"\"\"a \"quoted\" b\"\"\")");
  EXPECT_EQ(Lex("'''a\\''''", Dialect::kBigQuery), "S('''a\\'''')");
  EXPECT_EQ(Lex("'''''' ''", Dialect::kBigQuery), "S('''''') S('')");
}

TEST(Tokenizer, UnterminatedStringIsLocatedAtItsQuote) {
  Diagnostic d = ErrorOf("SELECT 1\nFROM t WHERE x = 'abc", Dialect::kDuckDb);
  EXPECT_EQ(d.code, "SLU-SQL-001");
  EXPECT_EQ(d.location.file, "models/m.sql");
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 18);
  EXPECT_EQ(d.source_line, "FROM t WHERE x = 'abc");
  EXPECT_NE(d.message.find("string"), std::string::npos);
  EXPECT_NE(d.hint.find("''"), std::string::npos);
  std::string rendered = FormatDiagnostic(d);
  EXPECT_NE(rendered.find("models/m.sql:2:18: error[SLU-SQL-001]"), std::string::npos);
  EXPECT_NE(rendered.find("^"), std::string::npos);
}

TEST(Tokenizer, UnterminatedStringsPerDialect) {
  EXPECT_EQ(ErrorOf("'it\\'s", Dialect::kClickHouse).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("'it\\'s", Dialect::kBigQuery).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("'it\\'s", Dialect::kPostgres).code, "no error");
  EXPECT_EQ(ErrorOf("'a\\", Dialect::kClickHouse).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("'a''", Dialect::kPostgres).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("\"x", Dialect::kBigQuery).code, "SLU-SQL-001");
  Diagnostic e = ErrorOf("x = E'a\\'", Dialect::kPostgres);
  EXPECT_EQ(e.code, "SLU-SQL-001");
  EXPECT_EQ(e.location.column, 5);  // at the E prefix
  Diagnostic r = ErrorOf("  r'abc", Dialect::kBigQuery);
  EXPECT_EQ(r.location.column, 3);
}

TEST(Tokenizer, UnterminatedTripleQuotedString) {
  Diagnostic d = ErrorOf("SELECT '''abc''", Dialect::kBigQuery);
  EXPECT_EQ(d.code, "SLU-SQL-001");
  EXPECT_EQ(d.location.column, 8);
  EXPECT_NE(d.hint.find("'''"), std::string::npos);
}

TEST(Tokenizer, UnterminatedDollarQuotedString) {
  Diagnostic d = ErrorOf("SELECT\n  $fn$ body $f$", Dialect::kPostgres);
  EXPECT_EQ(d.code, "SLU-SQL-001");
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 3);
  EXPECT_NE(d.hint.find("$fn$"), std::string::npos);
  EXPECT_EQ(ErrorOf("$$", Dialect::kDuckDb).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("$$$", Dialect::kDuckDb).code, "SLU-SQL-001");
}

TEST(Tokenizer, UnterminatedQuotedIdentifier) {
  Diagnostic d = ErrorOf("SELECT \"a\"\"b", Dialect::kPostgres);
  EXPECT_EQ(d.code, "SLU-SQL-001");
  EXPECT_EQ(d.location.column, 8);
  EXPECT_NE(d.message.find("identifier"), std::string::npos);
  EXPECT_EQ(ErrorOf("`a\\`", Dialect::kClickHouse).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("`a", Dialect::kBigQuery).code, "SLU-SQL-001");
  EXPECT_FALSE(ErrorOf("`a", Dialect::kBigQuery).hint.empty());
}

TEST(Tokenizer, UnterminatedBlockComment) {
  Diagnostic d = ErrorOf("a\n\n  /* x /* y */ z", Dialect::kPostgres);
  EXPECT_EQ(d.code, "SLU-SQL-001");
  EXPECT_EQ(d.location.line, 3);
  EXPECT_EQ(d.location.column, 3);
  EXPECT_NE(d.hint.find("*/"), std::string::npos);
  EXPECT_EQ(ErrorOf("/* x /* y */ z", Dialect::kBigQuery).code, "no error");
  EXPECT_EQ(ErrorOf("/*/", Dialect::kBigQuery).code, "SLU-SQL-001");
  EXPECT_EQ(ErrorOf("/*", Dialect::kClickHouse).code, "SLU-SQL-001");
}

TEST(Tokenizer, ErrorColumnsCountBytes) {
  Diagnostic d = ErrorOf("é '", Dialect::kDuckDb);  // é is two bytes
  EXPECT_EQ(d.location.column, 4);
}

TEST(TokenValue, DecodesStandardStringsAndIdentifiers) {
  EXPECT_EQ(TokenValue(Only("'it''s'", Dialect::kPostgres), Dialect::kPostgres), "it's");
  EXPECT_EQ(TokenValue(Only("'a\\n'", Dialect::kPostgres), Dialect::kPostgres), "a\\n");
  EXPECT_EQ(TokenValue(Only("\"a\"\"b\"", Dialect::kDuckDb), Dialect::kDuckDb), "a\"b");
  EXPECT_EQ(TokenValue(Only("E'a\\tb\\'c''d'", Dialect::kPostgres), Dialect::kPostgres), "a\tb'c'd");
  EXPECT_EQ(TokenValue(Only("$t$x'y$t$", Dialect::kDuckDb), Dialect::kDuckDb), "x'y");
  EXPECT_EQ(TokenValue(Only("$$$$", Dialect::kDuckDb), Dialect::kDuckDb), "");
  EXPECT_EQ(TokenValue(Only("X'1F'", Dialect::kPostgres), Dialect::kPostgres), "1F");
  EXPECT_EQ(TokenValue(Only("word", Dialect::kPostgres), Dialect::kPostgres), "word");
}

TEST(TokenValue, DecodesBackslashEscapes) {
  Dialect ch = Dialect::kClickHouse;
  EXPECT_EQ(TokenValue(Only("'a\\'b''c\\\\d\\n\\t\\0\\x41\\q'", ch), ch), std::string("a'b'c\\d\n\t\0Aq", 12));
  EXPECT_EQ(TokenValue(Only("`a\\`b``c`", ch), ch), "a`b`c");
  EXPECT_EQ(TokenValue(Only("\"a\\\"b\"", ch), ch), "a\"b");
  Dialect bq = Dialect::kBigQuery;
  EXPECT_EQ(TokenValue(Only("\"a\\\"b\\u00e9\\U0001F600\\101\"", bq), bq),
            "a\"bé\xF0\x9F\x98\x80"
            "A");
  EXPECT_EQ(TokenValue(Only("`my\\`table`", bq), bq), "my`table");
}

TEST(TokenValue, KeepsBigQueryRawStringsVerbatim) {
  Dialect bq = Dialect::kBigQuery;
  EXPECT_EQ(TokenValue(Only("r'\\d+\\''", bq), bq), "\\d+\\'");
  EXPECT_EQ(TokenValue(Only("'''a\n'b'\\n'''", bq), bq), "a\n'b'\n");
  EXPECT_EQ(TokenValue(Only("r\"\"\"x\\n\"\"\"", bq), bq), "x\\n");
  EXPECT_EQ(TokenValue(Only("b'\\x01'", bq), bq), "\x01");
  EXPECT_EQ(TokenValue(Only("''''''", bq), bq), "");
}

TEST(DialectForAdapter, MapsAdapterNames) {
  EXPECT_EQ(DialectForAdapter("duckdb"), Dialect::kDuckDb);
  EXPECT_EQ(DialectForAdapter("clickhouse"), Dialect::kClickHouse);
  EXPECT_EQ(DialectForAdapter("postgres"), Dialect::kPostgres);
  EXPECT_EQ(DialectForAdapter("postgresql"), Dialect::kPostgres);
  EXPECT_EQ(DialectForAdapter("BigQuery"), Dialect::kBigQuery);
  EXPECT_EQ(DialectForAdapter("snowflake"), Dialect::kClickHouse);
  EXPECT_EQ(DialectForAdapter(""), Dialect::kClickHouse);
}

// Checks the structural invariants every successful tokenization must hold.
void ExpectWellFormed(std::string_view text, const std::vector<Token>& tokens) {
  size_t previous_end = 0;
  for (const Token& token : tokens) {
    ASSERT_EQ(token.classes, ExpectedClasses(token)) << token.text;
    ASSERT_LT(token.begin, token.end);
    ASSERT_LE(token.end, text.size());
    ASSERT_GE(token.begin, previous_end);
    ASSERT_EQ(token.text.data(), text.data() + token.begin);
    ASSERT_EQ(token.text.size(), token.end - token.begin);
    previous_end = token.end;
  }
}

TEST(Tokenizer, RandomBytesOnlyEverSucceedOrThrowError) {
  std::mt19937 random(20260131);
  // Half the bytes come from the characters that drive the lexer, so the interesting paths are hit often.
  const std::string special = "'\"`$/*-#\\.eExX0123456789rRbB()@ \n_aq";
  std::uniform_int_distribution<int> length(0, 64);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<size_t> pick(0, special.size() - 1);
  size_t errors = 0;
  for (int iteration = 0; iteration < 10000; ++iteration) {
    std::string text;
    int n = length(random);
    for (int i = 0; i < n; ++i) {
      text += (byte(random) & 1) ? special[pick(random)] : static_cast<char>(byte(random));
    }
    for (Dialect dialect : kAllDialects) {
      try {
        std::vector<Token> tokens = Tokenize(text, dialect, "fuzz.sql");
        ExpectWellFormed(text, tokens);
        for (const Token& token : tokens) TokenValue(token, dialect);
        // TokenizeSignificant drops the comments as it scans: the same tokens otherwise.
        std::vector<Token> significant = TokenizeSignificant(text, dialect, "fuzz.sql");
        std::erase_if(tokens, [](const Token& token) { return token.kind == TokenKind::kComment; });
        ASSERT_EQ(significant.size(), tokens.size()) << text;
        for (size_t i = 0; i < tokens.size(); ++i) {
          ASSERT_EQ(significant[i].kind, tokens[i].kind) << text;
          ASSERT_EQ(significant[i].begin, tokens[i].begin) << text;
          ASSERT_EQ(significant[i].end, tokens[i].end) << text;
          ASSERT_EQ(significant[i].classes, tokens[i].classes) << text;
        }
      } catch (const Error& error) {
        ++errors;
        ASSERT_EQ(error.diagnostics().front().code, "SLU-SQL-001");
        ASSERT_GE(error.diagnostics().front().location.line, 1);
      }
    }
  }
  EXPECT_GT(errors, 0u);
}

// Inputs that make a naive scanner quadratic; each is a few megabytes, so only a linear scan finishes.
TEST(Tokenizer, AdversarialInputsStayLinear) {
  constexpr size_t kRepeat = 200000;
  std::string tag(1000, 'a');
  std::string dollars = "$" + tag + "$";
  std::string body;
  for (size_t i = 0; i < 2000; ++i) body += "$" + tag.substr(1) + "b";  // near-misses of the closing tag
  EXPECT_EQ(Tokenize(dollars + body + dollars, Dialect::kPostgres).size(), 1u);

  std::string openings;
  for (size_t i = 0; i < kRepeat; ++i) openings += "/*";
  EXPECT_EQ(ErrorOf(openings, Dialect::kPostgres).code, "SLU-SQL-001");

  std::string triples;
  for (size_t i = 0; i < kRepeat; ++i) triples += "''\\'";
  EXPECT_EQ(ErrorOf("'''" + triples, Dialect::kBigQuery).code, "SLU-SQL-001");

  std::string words;
  for (size_t i = 0; i < kRepeat; ++i) words += "a.1 $1 ";
  EXPECT_EQ(Tokenize(words, Dialect::kDuckDb).size(), 5 * kRepeat);
}

}  // namespace
}  // namespace sluice::sql
