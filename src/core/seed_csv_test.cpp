// The seed CSV dialect: what it accepts, and each refusal located at its first offending byte.
#include "core/seed_csv.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "core/diagnostic.hpp"

namespace sluice {
namespace {

SeedCsv Accept(std::string_view text) {
  try {
    return ReadSeedCsv("seeds/s.csv", text);
  } catch (const Error& error) {
    ADD_FAILURE() << error.what() << " for " << text;
    return {};
  }
}

// The one diagnostic `text` is refused with, as `line:column CODE message`.
std::string Refusal(std::string_view text) {
  try {
    ReadSeedCsv("seeds/s.csv", text);
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().size(), 1u);
    const Diagnostic& d = error.diagnostics().front();
    EXPECT_EQ(d.location.file, "seeds/s.csv");
    EXPECT_FALSE(d.hint.empty());
    return std::to_string(d.location.line) + ":" + std::to_string(d.location.column) + " " + d.code + " " + d.message;
  }
  return "accepted";
}

TEST(SeedCsv, AcceptsTheDialect) {
  SeedCsv csv = Accept("id,name\n1,ann\n2,\"b, \"\"o\"\"\nb\"\n3,\n4,\"\"\n");
  EXPECT_EQ(csv.columns, (std::vector<std::string>{"id", "name"}));
  EXPECT_EQ(csv.rows.size(), 4u);
  EXPECT_EQ(Accept("id,name\r\n1,ann\r\n2,\"x\r\ny\"\r\n").rows.size(), 2u);
  EXPECT_EQ(Accept("id,name\n1,ann").rows.size(), 1u);  // the last row may end at the end of the file
  EXPECT_EQ(Accept("id,name\n").rows.size(), 0u);
  EXPECT_EQ(Accept("id").rows.size(), 0u);
  EXPECT_EQ(Accept("\xEF\xBB\xBF"
                   "id\n1\n")
                .columns,
            std::vector<std::string>{"id"});
  EXPECT_EQ(Accept("\"first id\",\"na,me\"\n1,2\n").columns, (std::vector<std::string>{"first id", "na,me"}));
  EXPECT_EQ(Accept("id\n1\n\n2\n").rows.size(), 3u);  // one column: an empty line is a NULL
  EXPECT_EQ(Accept("id,caf\xC3\xA9\n1,\xE2\x82\xAC\n").rows.size(), 1u);
}

TEST(SeedCsv, ReadsValuesNullsAndWhereEachRowAndFieldStarts) {
  const std::string text = "\xEF\xBB\xBFid,name\n1,ann\n2,\"b, \"\"o\"\"\nb\"\n3,\n,\"\"\n";
  SeedCsv csv = Accept(text);
  ASSERT_EQ(csv.rows.size(), 4u);
  using Values = std::vector<std::optional<std::string>>;
  EXPECT_EQ(csv.rows[0].values, (Values{"1", "ann"}));
  EXPECT_EQ(csv.rows[1].values, (Values{"2", "b, \"o\"\nb"}));
  EXPECT_EQ(csv.rows[2].values, (Values{"3", std::nullopt}));  // an empty unquoted field is NULL
  EXPECT_EQ(csv.rows[3].values, (Values{std::nullopt, ""}));   // "" is the empty string
  EXPECT_EQ(csv.rows[0].line, 2u);
  EXPECT_EQ(csv.rows[1].line, 3u);
  EXPECT_EQ(csv.rows[2].line, 5u);  // the quoted field of row 2 spans a line
  EXPECT_EQ(csv.rows[3].line, 6u);
  EXPECT_EQ(csv.rows[1].offsets, (std::vector<size_t>{text.find("2,"), text.find("2,") + 2}));
  EXPECT_EQ(Accept("a\r\n1\r\n\"x\r\ny\"\r\n3\r\n").rows[2].line, 5u);
}

TEST(SeedCsv, RefusesRowsWithTooManyOrTooFewFields) {
  EXPECT_EQ(Refusal("a,b\n1,x\n2,y,3\n"), "3:4 SLU-SEED-002 this row has 3 fields; the header has 2");
  EXPECT_EQ(Refusal("a,b\n1,x,\n"), "2:4 SLU-SEED-002 this row has 3 fields; the header has 2");
  EXPECT_EQ(Refusal("a,b\n1,x\n2\n"), "3:2 SLU-SEED-002 this row has 1 field; the header has 2");
  EXPECT_EQ(Refusal("a,b\n1,x\n\n"), "3:1 SLU-SEED-002 this row has 1 field; the header has 2");
  EXPECT_EQ(Refusal("a,b,c\n1,\"x\ny\"\n"), "3:3 SLU-SEED-002 this row has 2 fields; the header has 3");
}

TEST(SeedCsv, RefusesQuotesOutsideTheDialect) {
  EXPECT_EQ(Refusal("a,b\n1,x\n2,\"unterminated\n3,z\n"),
            "3:3 SLU-SEED-001 the quoted field that starts here is never closed");
  EXPECT_EQ(Refusal("a,b\n1,ab\"c\n"), "2:5 SLU-SEED-001 a `\"` inside an unquoted field");
  EXPECT_EQ(Refusal("a,b\n1,\"ab\"c\n"),
            "2:7 SLU-SEED-001 `c` after the closing quote of a field; expected `,` or the row's end");
  EXPECT_EQ(Refusal("a,b\n1,\"ab\" \n"),
            "2:7 SLU-SEED-001 byte 0x20 after the closing quote of a field; expected `,` or the row's end");
}

TEST(SeedCsv, RefusesBytesAndLineEndsOutsideTheDialect) {
  EXPECT_EQ(Refusal("a,b\n1,\xFF\n"), "2:3 SLU-SEED-001 byte 0xFF is not UTF-8 text");
  EXPECT_EQ(Refusal("a,b\n1,x\0y\n"), "accepted");  // a string literal stops at its NUL
  EXPECT_EQ(Refusal(std::string_view("a,b\n1,x\0y\n", 10)), "2:4 SLU-SEED-001 a NUL byte in a seed file");
  EXPECT_EQ(Refusal("a,b\r1,x\r"), "1:4 SLU-SEED-001 a carriage return (CR) not followed by a line feed (LF)");
  EXPECT_EQ(Refusal("a,b\r\n1,x\n2,y\r\n"), "2:4 SLU-SEED-001 this row ends with LF, the header with CR LF");
  EXPECT_EQ(Refusal("a,b\n1,x\r\n"), "2:4 SLU-SEED-001 this row ends with CR LF, the header with LF");
}

TEST(SeedCsv, RefusesAMissingOrMalformedHeader) {
  EXPECT_EQ(Refusal(""), "1:1 SLU-SEED-003 seeds/s.csv is empty; a seed's first line is its header");
  EXPECT_EQ(Refusal("\xEF\xBB\xBF"), "1:4 SLU-SEED-003 seeds/s.csv is empty; a seed's first line is its header");
  EXPECT_EQ(Refusal("\n1\n"), "1:1 SLU-SEED-003 column 1 of the header has no name");
  EXPECT_EQ(Refusal("a,,c\n"), "1:3 SLU-SEED-003 column 2 of the header has no name");
  EXPECT_EQ(Refusal("a, b\n"), "1:3 SLU-SEED-003 header name ' b' has whitespace around it");
  EXPECT_EQ(Refusal("id,name,ID\n"), "1:9 SLU-SEED-003 header name 'ID' repeats column 1 'id'");
}

}  // namespace
}  // namespace sluice
