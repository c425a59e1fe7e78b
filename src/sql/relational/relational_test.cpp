// Unit tests of relational expressions: types and their warehouse names, literal conversions, schema inference and
// every error the builder raises (code, message, hint).
#include <gtest/gtest.h>

#include <functional>

#include "core/diagnostic.hpp"
#include "sql/relational/printer.hpp"
#include "sluice/relational.hpp"

namespace sluice::rel {
namespace {

using sql::Dialect;

Diagnostic DiagnosticOf(const std::function<void()>& build) {
  try {
    build();
  } catch (const Error& e) {
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", ""};
}

Table Orders() {
  return TableRef({"", "shop", "orders"},
                  {{"order_id", "!int64"}, {"customer", "string"}, {"amount", "float64"}, {"day", "!date"}});
}

Table Customers() { return TableRef({"", "shop", "customers"}, {{"customer", "!string"}, {"region", "string"}}); }

std::string Types(const Table& table) {
  std::string out;
  for (const Field& field : table.schema().fields()) out += (out.empty() ? "" : " ") + field.name + ":" + TypeName(field.type);
  return out;
}

TEST(DataTypes, ParseAndNameRoundTrip) {
  for (const char* name : {"bool", "!int64", "float64", "decimal(18,2)", "!string", "date", "timestamp"}) {
    EXPECT_EQ(TypeName(ParseType(name)), name);
  }
  EXPECT_EQ(ParseType("BOOLEAN"), ParseType("bool"));
  EXPECT_EQ(ParseType(" ! Decimal(10, 3) ").scale, 3);
}

TEST(DataTypes, UnknownTypeIsExpr005) {
  for (const char* name : {"int32", "decimal(40,2)", "decimal(5,6)", "", "!"}) {
    Diagnostic d = DiagnosticOf([&] { ParseType(name); });
    EXPECT_EQ(d.code, "SLU-EXPR-005") << name;
    EXPECT_NE(d.hint.find("decimal(P,S)"), std::string::npos);
  }
  EXPECT_EQ(DiagnosticOf([] { Schema s{{"a", "integer"}}; }).code, "SLU-EXPR-005");
}

TEST(DataTypes, FromWarehouseTypeReadsEachDialect) {
  auto name = [](Dialect dialect, const char* type) {
    std::optional<DataType> parsed = FromWarehouseType(dialect, type);
    return parsed ? TypeName(*parsed) : std::string("none");
  };
  EXPECT_EQ(name(Dialect::kDuckDb, "BIGINT"), "int64");
  EXPECT_EQ(name(Dialect::kDuckDb, "INTEGER"), "int64");
  EXPECT_EQ(name(Dialect::kDuckDb, "DOUBLE"), "float64");
  EXPECT_EQ(name(Dialect::kDuckDb, "VARCHAR"), "string");
  EXPECT_EQ(name(Dialect::kDuckDb, "DECIMAL(18,2)"), "decimal(18,2)");
  EXPECT_EQ(name(Dialect::kDuckDb, "TIMESTAMP WITH TIME ZONE"), "timestamp");
  EXPECT_EQ(name(Dialect::kDuckDb, "BOOLEAN"), "bool");
  EXPECT_EQ(name(Dialect::kDuckDb, "BLOB"), "none");
  EXPECT_EQ(name(Dialect::kClickHouse, "Int64"), "!int64");
  EXPECT_EQ(name(Dialect::kClickHouse, "Nullable(Float64)"), "float64");
  EXPECT_EQ(name(Dialect::kClickHouse, "LowCardinality(Nullable(String))"), "string");
  EXPECT_EQ(name(Dialect::kClickHouse, "Decimal(12, 4)"), "!decimal(12,4)");
  EXPECT_EQ(name(Dialect::kClickHouse, "Decimal64(3)"), "!decimal(18,3)");
  EXPECT_EQ(name(Dialect::kClickHouse, "DateTime('UTC')"), "!timestamp");
  EXPECT_EQ(name(Dialect::kClickHouse, "Date"), "!date");
  EXPECT_EQ(name(Dialect::kClickHouse, "UInt8"), "!int64");
  EXPECT_EQ(name(Dialect::kClickHouse, "Array(String)"), "none");
  EXPECT_EQ(name(Dialect::kPostgres, "double precision"), "float64");
  EXPECT_EQ(name(Dialect::kPostgres, "character varying(20)"), "string");
  EXPECT_EQ(name(Dialect::kPostgres, "numeric(10, 2)"), "decimal(10,2)");
  EXPECT_EQ(name(Dialect::kPostgres, "timestamp without time zone"), "timestamp");
  EXPECT_EQ(name(Dialect::kBigQuery, "INT64"), "int64");
  EXPECT_EQ(name(Dialect::kBigQuery, "NUMERIC"), "decimal(38,9)");
  EXPECT_EQ(name(Dialect::kBigQuery, "BOOL"), "bool");
}

TEST(DataTypes, WarehouseTypeNamesPerDialect) {
  DataType decimal = ParseType("decimal(18,2)");
  EXPECT_EQ(WarehouseTypeName(Dialect::kDuckDb, decimal), "DECIMAL(18, 2)");
  EXPECT_EQ(WarehouseTypeName(Dialect::kClickHouse, decimal), "Nullable(Decimal(18, 2))");
  EXPECT_EQ(WarehouseTypeName(Dialect::kClickHouse, ParseType("!int64")), "Int64");
  EXPECT_EQ(WarehouseTypeName(Dialect::kPostgres, ParseType("float64")), "double precision");
  EXPECT_EQ(WarehouseTypeName(Dialect::kBigQuery, ParseType("bool")), "BOOL");
  for (Dialect dialect : {Dialect::kDuckDb, Dialect::kClickHouse, Dialect::kPostgres, Dialect::kBigQuery}) {
    for (const char* name : {"bool", "!int64", "float64", "decimal(18,2)", "string", "date", "timestamp"}) {
      std::optional<DataType> back = FromWarehouseType(dialect, WarehouseTypeName(dialect, ParseType(name)));
      ASSERT_TRUE(back) << name;
      // ClickHouse spells bool as UInt8, which reads back as an integer.
      TypeKind expected = dialect == Dialect::kClickHouse && ParseType(name).kind == TypeKind::kBool
                              ? TypeKind::kInt64
                              : ParseType(name).kind;
      EXPECT_EQ(back->kind, expected) << name;
    }
  }
}

TEST(Literals, ConvertAndType) {
  EXPECT_EQ(TypeName(Value(5).type()), "!int64");
  EXPECT_EQ(TypeName(Value(2.5).type()), "!float64");
  EXPECT_EQ(TypeName(Value("x").type()), "!string");
  EXPECT_EQ(TypeName(Value(true).type()), "!bool");
  EXPECT_EQ(TypeName(DateLiteral("2026-01-31").type()), "!date");
  EXPECT_EQ(TypeName(TypedLiteral(std::monostate{}, "int64").type()), "int64");
  EXPECT_EQ(TypeName(TypedLiteral(int64_t{3}, "float64").type()), "!float64");
  EXPECT_EQ(DiagnosticOf([] { TypedLiteral("x", "int64"); }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([] { TypedLiteral(std::monostate{}, "!int64"); }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([] { DateLiteral("2026-02-30"); }).code, "SLU-EXPR-002");
  EXPECT_EQ(ToSql(Memtable({{{"d", *Date::Parse("2026-01-01")}}}, {{"d", "date"}}), Dialect::kClickHouse).find("DATE '"), std::string::npos);
}

TEST(SchemaInference, ArithmeticPromotes) {
  Table t = Orders();
  EXPECT_EQ(TypeName((t["order_id"] + 1).type()), "!int64");
  EXPECT_EQ(TypeName((t["order_id"] * t["amount"]).type()), "float64");
  EXPECT_EQ(TypeName((t["order_id"] / 2).type()), "float64");  // NULL on a zero divisor
  EXPECT_EQ(TypeName((t["amount"].cast("decimal(10,2)") + 1).type()), "decimal(38,2)");
  EXPECT_EQ(TypeName((t["order_id"] > 1).type()), "!bool");
  EXPECT_EQ(TypeName(t["amount"].fill_null(0).type()), "!float64");
  EXPECT_EQ(TypeName(IfElse(t["order_id"] > 1, 1, 2.5).type()), "!float64");
  EXPECT_EQ(TypeName(t["day"].year().type()), "!int64");
}

TEST(SchemaInference, AggregatesAreTypedAndKeysComeFirst) {
  Table t = Orders();
  Table out = t.group_by({"customer"}).aggregate({{"n", CountRows()},
                                                  {"total", t["order_id"].sum()},
                                                  {"average", t["order_id"].mean()},
                                                  {"first", t["day"].min()},
                                                  {"kinds", t["customer"].nunique()}});
  EXPECT_EQ(Types(out), "customer:string n:!int64 total:int64 average:float64 first:date kinds:!int64");
}

TEST(SchemaInference, JoinsMakeOuterSidesNullableAndRenameCollisions) {
  Table o = Orders();
  Table c = Customers();
  EXPECT_EQ(Types(o.join(c, {"customer"})),
            "order_id:!int64 customer:string amount:float64 day:!date region:string");
  EXPECT_EQ(Types(o.join(c, o["customer"] == c["customer"], JoinKind::kLeft)),
            "order_id:!int64 customer:string amount:float64 day:!date customer_right:string region:string");
  EXPECT_EQ(Types(o.join(c, {"customer"}, JoinKind::kRight)),
            "order_id:int64 customer:!string amount:float64 day:date region:string");
  EXPECT_EQ(Types(o.join(c, {"customer"}, JoinKind::kSemi)), "order_id:!int64 customer:string amount:float64 day:!date");
  EXPECT_EQ(Types(o.select({"order_id"}).cross_join(c)), "order_id:!int64 customer:!string region:string");
}

TEST(SchemaInference, UnionKeepsColumnOrderAndWidensNullability) {
  Table a = Memtable({}, {{"k", "!int64"}, {"v", "!string"}});
  Table b = Memtable({}, {{"k", "!int64"}, {"v", "string"}});
  EXPECT_EQ(Types(a.union_(b)), "k:!int64 v:string");
}

TEST(SchemaInference, MutateReplacesInPlaceAndAppends) {
  Table t = Orders();
  EXPECT_EQ(Types(t.mutate({{"amount", t["amount"].fill_null(0)}, {"big", t["amount"] > 10}})),
            "order_id:!int64 customer:string amount:!float64 day:!date big:bool");
  EXPECT_EQ(Types(t.rename({{"day", "order_day"}}).drop({"amount"})),
            "order_id:!int64 customer:string order_day:!date");
}

TEST(SchemaInference, ValuesOfAnAncestorPassThrough) {
  Table t = Orders();
  Table filtered = t.filter(t["amount"] > 0);
  EXPECT_EQ(Types(filtered.select({{"id", t["order_id"]}})), "id:!int64");
}

TEST(Errors, UnknownColumnNamesTheColumnsAndACloseMatch) {
  Diagnostic d = DiagnosticOf([] { Orders()["amout"]; });
  EXPECT_EQ(d.code, "SLU-EXPR-001");
  EXPECT_EQ(d.message, "unknown column `amout`; the table has: order_id, customer, amount, day");
  EXPECT_EQ(d.hint, "did you mean `amount`?");
  EXPECT_EQ(DiagnosticOf([] { Orders()["zzzzzz"]; }).hint, "use one of the table's columns");
  EXPECT_EQ(DiagnosticOf([] { Orders().select({"nope"}); }).code, "SLU-EXPR-001");
  EXPECT_EQ(DiagnosticOf([] { Orders().group_by({"nope"}); }).code, "SLU-EXPR-001");
  EXPECT_EQ(DiagnosticOf([] { Orders().join(Customers(), {"region"}); }).code, "SLU-EXPR-001");
}

TEST(Errors, TypeMismatchNamesTheOperationAndTypes) {
  Table t = Orders();
  Diagnostic d = DiagnosticOf([&] { t["customer"] > 1; });
  EXPECT_EQ(d.code, "SLU-EXPR-002");
  EXPECT_EQ(d.message, "type mismatch: `>` of `customer` (string) and `1` (!int64)");
  EXPECT_EQ(DiagnosticOf([&] { t["day"] + "x"; }).hint,
            "add days to a date with add_days(n); subtract dates with day_diff");
  EXPECT_EQ(DiagnosticOf([&] { t.filter(t["order_id"]); }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([&] { t["customer"].sum(); }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([&] { t["day"] == "2026-01-01"; }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([&] { t["amount"] && t["amount"]; }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([&] { t["day"].cast("float64"); }).code, "SLU-EXPR-002");
  EXPECT_EQ(DiagnosticOf([&] { IfElse(t["order_id"] > 1, "a", 1); }).code, "SLU-EXPR-002");
}

TEST(Errors, ValueOfAnotherTableIsExpr003) {
  Table o = Orders();
  Table c = Customers();
  Diagnostic d = DiagnosticOf([&] { o.filter(c["region"] == "north"); });
  EXPECT_EQ(d.code, "SLU-EXPR-003");
  EXPECT_EQ(d.message, "the value `(region == 'north')` in filter uses column `region` of another table");
  EXPECT_EQ(DiagnosticOf([&] { o.select({{"r", c["region"]}}); }).code, "SLU-EXPR-003");
  EXPECT_EQ(DiagnosticOf([&] { o.mutate({{"r", c["region"]}}); }).code, "SLU-EXPR-003");
  EXPECT_EQ(DiagnosticOf([&] { o.aggregate({{"n", c["region"].count()}}); }).code, "SLU-EXPR-003");
  EXPECT_EQ(DiagnosticOf([&] { o.order_by({{c["region"]}}); }).code, "SLU-EXPR-003");
  Table other = Memtable({}, {{"x", "string"}});
  EXPECT_EQ(DiagnosticOf([&] { o.join(c, o["customer"] == other["x"]); }).code, "SLU-EXPR-003");
  // A join predicate may use both sides; a mutated column is not the original one.
  EXPECT_EQ(DiagnosticOf([&] { o.join(c, o["customer"] == c["customer"]); }).code, "no error");
  Table m = o.mutate({{"amount", o["amount"] * 2}});
  EXPECT_EQ(DiagnosticOf([&] { m.filter(o["amount"] > 1); }).code, "SLU-EXPR-003");
}

TEST(Errors, MemtableRowsAreChecked) {
  Schema schema{{"id", "!int64"}, {"name", "string"}};
  Diagnostic missing = DiagnosticOf([&] { Memtable({{{"id", int64_t{1}}}}, schema); });
  EXPECT_EQ(missing.code, "SLU-EXPR-004");
  EXPECT_EQ(missing.message, "memtable row 1 lacks column `name`");
  Diagnostic extra =
      DiagnosticOf([&] { Memtable({{{"id", int64_t{1}}, {"name", "a"}, {"age", int64_t{3}}}}, schema); });
  EXPECT_EQ(extra.message, "memtable row 1 has column `age`, which the schema lacks");
  EXPECT_EQ(extra.hint, "the schema has: id, name");
  Diagnostic wrong = DiagnosticOf([&] { Memtable({{{"id", "one"}, {"name", "a"}}}, schema); });
  EXPECT_EQ(wrong.message, "memtable row 1: column `id` is !int64, not string");
  EXPECT_EQ(DiagnosticOf([&] { Memtable({{{"id", std::monostate{}}, {"name", "a"}}}, schema); }).code,
            "SLU-EXPR-004");
  EXPECT_EQ(DiagnosticOf([&] { Memtable({{{"id", int64_t{1}}, {"id", int64_t{2}}, {"name", "a"}}}, schema); }).code,
            "SLU-EXPR-004");
}

TEST(Errors, UnionOfDifferentSchemasIsExpr006) {
  Table a = Memtable({}, {{"k", "int64"}});
  Table b = Memtable({}, {{"k", "string"}});
  Diagnostic d = DiagnosticOf([&] { a.union_(b); });
  EXPECT_EQ(d.code, "SLU-EXPR-006");
  EXPECT_EQ(d.message, "union of different schemas: (k int64) and (k string)");
  EXPECT_EQ(DiagnosticOf([&] { a.union_(Memtable({}, {{"j", "int64"}})); }).code, "SLU-EXPR-006");
}

TEST(Errors, AggregateMisuseIsExpr007) {
  Table t = Orders();
  EXPECT_EQ(DiagnosticOf([&] { t.filter(t["amount"].sum() > 1); }).code, "SLU-EXPR-007");
  EXPECT_EQ(DiagnosticOf([&] { t.mutate({{"s", t["amount"].sum()}}); }).code, "SLU-EXPR-007");
  EXPECT_EQ(DiagnosticOf([&] { t["amount"].sum().max(); }).code, "SLU-EXPR-007");
  Diagnostic bare = DiagnosticOf([&] { t.group_by({"customer"}).aggregate({{"a", t["amount"]}}); });
  EXPECT_EQ(bare.code, "SLU-EXPR-007");
  EXPECT_EQ(bare.message, "the metric `a` uses column `amount` outside an aggregate");
  EXPECT_EQ(DiagnosticOf([&] { t.aggregate({{"one", 1}}); }).code, "SLU-EXPR-007");
  EXPECT_EQ(DiagnosticOf([&] { t.group_by({"customer"}).aggregate({{"c", t["customer"]}}); }).code, "no error");
}

TEST(Errors, DuplicateOutputColumnIsExpr008) {
  Table t = Orders();
  Diagnostic d = DiagnosticOf([&] { t.select({{"a", t["order_id"]}, {"a", t["amount"]}}); });
  EXPECT_EQ(d.code, "SLU-EXPR-008");
  EXPECT_EQ(d.message, "duplicate output column `a` in select");
  EXPECT_EQ(DiagnosticOf([&] { t.rename({{"amount", "day"}}); }).code, "SLU-EXPR-008");
  EXPECT_EQ(DiagnosticOf([&] { Memtable({}, {{"a", "int64"}, {"a", "string"}}); }).code, "SLU-EXPR-008");
  Table x = Memtable({}, {{"k", "int64"}, {"k_right", "int64"}});
  Table y = Memtable({}, {{"k", "int64"}});
  EXPECT_EQ(DiagnosticOf([&] { x.join(y, x["k"] == y["k"]); }).code, "SLU-EXPR-008");
}

TEST(Errors, MisuseIsExpr009) {
  Table t = Orders();
  EXPECT_EQ(DiagnosticOf([&] { t.select(std::vector<std::string>{}); }).code, "SLU-EXPR-009");
  EXPECT_EQ(DiagnosticOf([&] { t.limit(-1); }).code, "SLU-EXPR-009");
  EXPECT_EQ(DiagnosticOf([&] { t.drop({"order_id", "customer", "amount", "day"}); }).code, "SLU-EXPR-009");
  EXPECT_EQ(DiagnosticOf([&] { t.select({{"", t["order_id"] + 1}}); }).code, "SLU-EXPR-009");
  EXPECT_EQ(DiagnosticOf([&] { t.join(t, t["order_id"] == t["order_id"]); }).hint,
            "join with a view of it, t.join(t.view(), …), so each value says which side it comes from");
  EXPECT_EQ(DiagnosticOf([&] { Coalesce({}); }).code, "SLU-EXPR-009");
  EXPECT_EQ(DiagnosticOf([&] { Memtable({}, Schema{}); }).code, "SLU-EXPR-009");
  Table c = Customers();
  Diagnostic full = DiagnosticOf([&] { ToSql(t.join(c, {"customer"}, JoinKind::kOuter), Dialect::kClickHouse); });
  EXPECT_EQ(full.code, "SLU-EXPR-009");
  Diagnostic theta =
      DiagnosticOf([&] { ToSql(t.join(c, t["customer"] < c["customer"], JoinKind::kLeft), Dialect::kClickHouse); });
  EXPECT_EQ(theta.code, "SLU-EXPR-009");
}

TEST(Printing, TableNamesPerDialect) {
  Table t = TableRef({"proj", "shop", "orders"}, {{"id", "int64"}});
  EXPECT_EQ(ToSql(t, Dialect::kDuckDb), "SELECT *\nFROM \"shop\".\"orders\"");
  EXPECT_EQ(ToSql(t, Dialect::kClickHouse), "SELECT *\nFROM `shop`.`orders`");
  EXPECT_EQ(ToSql(t, Dialect::kBigQuery), "SELECT *\nFROM `proj.shop.orders`");
}

TEST(Printing, SharedSubtreeIsOneCte) {
  Table t = Orders();
  Table f = t.filter(t["amount"] > 1);
  std::string sql = ToSql(f.union_(f), Dialect::kDuckDb);
  EXPECT_EQ(sql.rfind("WITH t0 AS (", 0), 0u) << sql;
  EXPECT_EQ(sql.find("\"shop\".\"orders\""), sql.rfind("\"shop\".\"orders\"")) << sql;
  std::string clickhouse = ToSql(f.union_(f), Dialect::kClickHouse);
  EXPECT_EQ(clickhouse.find("WITH"), std::string::npos) << clickhouse;
}

TEST(Printing, OrFilterStaysGroupedUnderAnd) {
  Table t = Orders();
  Table f = t.filter(t["amount"] > 1 || t["order_id"] > 2).filter(t["customer"] == "a");
  EXPECT_NE(ToSql(f, Dialect::kPostgres).find("WHERE ((\"amount\" > 1) OR (\"order_id\" > 2)) AND (\"customer\" = 'a')"),
            std::string::npos)
      << ToSql(f, Dialect::kPostgres);
}

}  // namespace
}  // namespace sluice::rel
