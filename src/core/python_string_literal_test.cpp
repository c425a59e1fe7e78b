// Python string literals as the macro-argument and Starlake-module readers read them; each reader's own wording of
// the failures is tested beside it (macro_engine_test.cpp, orchestrate_test.cpp).
#include "core/python_string_literal.hpp"

#include <gtest/gtest.h>

namespace sluice::python {
namespace {

constexpr PythonStringRules kPython{.x_escape_is_byte = false, .crlf_continuation = true};
constexpr PythonStringRules kStarlake{.x_escape_is_byte = true, .crlf_continuation = false};

// The literal starting at the first quote of `text` (no prefix), read to the end of `text`.
PythonString Read(std::string_view text, bool raw = false, const PythonStringRules& rules = kPython) {
  const size_t quote = text.find_first_of("'\"");
  auto read = ReadPythonString(text, 0, quote, text.size(), raw, rules);
  if (const auto* failure = std::get_if<PythonStringFailure>(&read)) {
    ADD_FAILURE() << "failure " << static_cast<int>(failure->kind) << " at " << failure->offset << " in " << text;
    return {};
  }
  return std::get<PythonString>(read);
}

PythonStringFailure Failure(std::string_view text, size_t start = 0, bool raw = false,
                            const PythonStringRules& rules = kPython) {
  const size_t quote = text.find_first_of("'\"");
  auto read = ReadPythonString(text, start, quote, text.size(), raw, rules);
  if (const auto* failure = std::get_if<PythonStringFailure>(&read)) return *failure;
  ADD_FAILURE() << "read without failure: " << text;
  return {};
}

TEST(PythonString, ReadsQuotesTripleQuotesAndWhereTheLiteralEnds) {
  EXPECT_EQ(Read("'a\"b' + x").value, "a\"b");
  EXPECT_EQ(Read("'a\"b' + x").end, 5u);
  EXPECT_EQ(Read("\"\"\"one\n'two' \"\" three\"\"\"").value, "one\n'two' \"\" three");
  EXPECT_EQ(Read("''").value, "");
  EXPECT_EQ(Read("r'x'", true).content_start, 2u);
}

TEST(PythonString, DecodesEveryEscapeAsPython) {
  PythonString read = Read(R"('\\ \' \" \a\b\f\n\r\t\v \101\7 \x41\xe9 \u00e9 \U0001F600 \q \
end')");
  EXPECT_EQ(read.value, "\\ ' \" \a\b\f\n\r\t\v A\x07 A\xC3\xA9 \xC3\xA9 \xF0\x9F\x98\x80 \\q end");
  EXPECT_TRUE(read.escaped);
  EXPECT_FALSE(Read("'plain'").escaped);
}

TEST(PythonString, RawLiteralsKeepEveryBackslashWithTheCharacterAfterIt) {
  EXPECT_EQ(Read(R"('a\nb\'c')", true).value, R"(a\nb\'c)");
  EXPECT_FALSE(Read(R"('a\nb')", true).escaped);
}

TEST(PythonString, TheRulesDecideHexBytesAndCrLfContinuations) {
  EXPECT_EQ(Read(R"('\xe9')", false, kStarlake).value, "\xE9");
  EXPECT_EQ(Read("'a\\\r\nb'", false, kPython).value, "ab");
  EXPECT_EQ(Failure("'a\\\r\nb'", 0, false, kStarlake).kind, PythonStringFailure::Kind::kLineEnds);
  EXPECT_EQ(Read("'''a\\\r\nb'''", false, kStarlake).value, "a\\\r\nb");
}

TEST(PythonString, FailuresSayWhatAndWhere) {
  using Kind = PythonStringFailure::Kind;
  EXPECT_EQ(Failure("x = 'abc", 4).kind, Kind::kUnterminated);
  EXPECT_EQ(Failure("x = 'abc", 4).offset, 4u);
  EXPECT_EQ(Failure("'abc\\").kind, Kind::kUnterminated);
  EXPECT_EQ(Failure("'''abc''").kind, Kind::kUnterminated);
  EXPECT_EQ(Failure("'abc\ndef'").kind, Kind::kLineEnds);
  const PythonStringFailure truncated = Failure(R"('ab\u12')");
  EXPECT_EQ(truncated.kind, Kind::kTruncatedEscape);
  EXPECT_EQ(truncated.offset, 3u);
  EXPECT_EQ(truncated.escape, 'u');
  EXPECT_EQ(truncated.digits, 4);
  EXPECT_EQ(Failure(R"('\x4')").digits, 2);
  EXPECT_EQ(Failure(R"('\U00110000')").kind, Kind::kBeyondUnicode);
  EXPECT_EQ(Failure(R"('\ud800')").kind, Kind::kSurrogate);
  EXPECT_EQ(Failure(R"('\N{BULLET}')").kind, Kind::kNamedEscape);
}

TEST(PythonString, ReadsOnlyUpToTheGivenEnd) {
  const std::string text = "'abc')'tail'";
  auto read = ReadPythonString(text, 0, 0, 3, false, kPython);
  ASSERT_TRUE(std::holds_alternative<PythonStringFailure>(read));
  EXPECT_EQ(std::get<PythonStringFailure>(read).kind, PythonStringFailure::Kind::kUnterminated);
}

}  // namespace
}  // namespace sluice::python
