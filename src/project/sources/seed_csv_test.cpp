// The seed CSV dialect: what it accepts, and each refusal located at its first offending byte.
#include "project/sources/seed_csv.hpp"

#include <gtest/gtest.h>

#include "core/diagnostic.hpp"

namespace sluice {
namespace {

SeedCsv Accept(std::string_view text) {
  try {
    return CheckSeedCsv("seeds/s.csv", text);
  } catch (const Error& error) {
    ADD_FAILURE() << error.what() << " for " << text;
    return {};
  }
}

// The one diagnostic `text` is refused with, as `line:column CODE message`.
std::string Refusal(std::string_view text) {
  try {
    CheckSeedCsv("seeds/s.csv", text);
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
  EXPECT_EQ(csv.rows, 4u);
  EXPECT_EQ(Accept("id,name\r\n1,ann\r\n2,\"x\r\ny\"\r\n").rows, 2u);
  EXPECT_EQ(Accept("id,name\n1,ann").rows, 1u);  // the last row may end at the end of the file
  EXPECT_EQ(Accept("id,name\n").rows, 0u);
  EXPECT_EQ(Accept("id").rows, 0u);
  EXPECT_EQ(Accept("\xEF\xBB\xBF"
                   "id\n1\n")
                .columns,
            std::vector<std::string>{"id"});
  EXPECT_EQ(Accept("\"first id\",\"na,me\"\n1,2\n").columns, (std::vector<std::string>{"first id", "na,me"}));
  EXPECT_EQ(Accept("id\n1\n\n2\n").rows, 3u);  // one column: an empty line is a NULL
  EXPECT_EQ(Accept("id,caf\xC3\xA9\n1,\xE2\x82\xAC\n").rows, 1u);
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
