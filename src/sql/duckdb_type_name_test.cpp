#include "sql/duckdb_type_name.hpp"

#include <gtest/gtest.h>

namespace sluice::sql {
namespace {

// Each of these is a type DuckDB 1.4 accepts in CAST(NULL AS <type>) and in read_csv's `types`.
TEST(DuckDbTypeName, AcceptsDuckDbTypesAndTheirAliasesInAnyCase) {
  // clang-format off
  for (const char* text :
       {"BIGINT", "bigint", "Int8", "VARCHAR", "TEXT", "DATE", "TIMESTAMP", "TIMESTAMPTZ", "UUID", "BLOB", "JSON",
        "DECIMAL(12,2)", "decimal( 12 , 2 )", "DEC(5)", "NUMERIC(38,38)", "VARCHAR(10)", "CHAR(1)", "character",
        "DOUBLE", "DOUBLE PRECISION", "double  precision", "CHARACTER VARYING", "CHARACTER VARYING(10)",
        "TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITHOUT TIME ZONE", "TIME WITH TIME ZONE", "INTEGER[]", "INTEGER[3]",
        "INTEGER[][]", "int8[ 2 ]", "time_ns", "bignum", "varint", " BIGINT "}) {
    // clang-format on
    EXPECT_EQ(CheckDuckDbTypeName(text), std::nullopt) << text;
  }
}

struct Rejected {
  const char* text;
  size_t offset;
  const char* message;
};

TEST(DuckDbTypeName, RejectsWhatIsNotATypeAtTheFirstByteThatBreaksTheGrammar) {
  for (const Rejected& c : {
           Rejected{"DECIMAL(12,2)'); DROP TABLE x; --", 13,
                    "unexpected `'` after `DECIMAL(12,2)`: expected the end of the type"},
           Rejected{"", 0, "expected a type name, e.g. BIGINT, VARCHAR or DECIMAL(12,2)"},
           Rejected{"   ", 3, "expected a type name, e.g. BIGINT, VARCHAR or DECIMAL(12,2)"},
           Rejected{"BIGNT", 0, "`BIGNT` is not a DuckDB type name"},
           Rejected{"STRUCT(a INT)", 0, "`STRUCT` is not a DuckDB type name"},
           Rejected{"NULL", 0, "`NULL` is not a DuckDB type name"},
           Rejected{"1NT", 0, "unexpected `1`: expected a type name"},
           Rejected{"BIGINT(3)", 6, "`BIGINT` takes no arguments"},
           Rejected{"DECIMAL(0)", 8, "a DECIMAL width must be 1 to 38"},
           Rejected{"DECIMAL(39,2)", 8, "a DECIMAL width must be 1 to 38"},
           Rejected{"DECIMAL(4,5)", 10, "a DECIMAL scale cannot exceed its width"},
           Rejected{"DECIMAL(4,)", 10, "unexpected `)` after `DECIMAL(4,`: expected a whole number (the scale)"},
           Rejected{"DECIMAL(4", 9, "expected `,` or `)` at the end"},
           Rejected{"VARCHAR(0)", 8, "a length must be at least 1"},
           Rejected{"VARCHAR(1,2)", 9, "unexpected `,` after `VARCHAR(1`: expected `)`"},
           Rejected{"INTEGER[0]", 8, "an array size must be at least 1"},
           Rejected{"INTEGER[", 8, "expected `]` at the end"},
           Rejected{"DOUBLE PRECISION X", 17, "unexpected `X` after `DOUBLE PRECISION`: expected the end of the type"},
           Rejected{"TIMESTAMP WITH ZONE", 10, "unexpected `W` after `TIMESTAMP`: expected the end of the type"},
           Rejected{"INT\xc3\xa9", 3, "unexpected byte 0xC3 after `INT`: expected the end of the type"},
       }) {
    std::optional<TypeNameProblem> problem = CheckDuckDbTypeName(c.text);
    ASSERT_TRUE(problem.has_value()) << c.text;
    EXPECT_EQ(problem->offset, c.offset) << c.text;
    EXPECT_EQ(problem->message, c.message) << c.text;
  }
}

}  // namespace
}  // namespace sluice::sql
