// The relational expression cases of tests/golden/relational/<name>.test, built in C++ by name. The golden runner
// (relational_test.cpp) compares each one's Describe and SQL with its file; the execution test
// (tests/integration/relational_execution_test.cpp) runs the ones built only on memtables on DuckDB and ClickHouse.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "sql/relational/printer.hpp"
#include "sluice/relational.hpp"

namespace sluice::golden {

using namespace sluice::rel;

inline Date Day(const char* text) { return *Date::Parse(text); }

// order_id, customer, amount (nullable), day.
inline Table Orders() {
  return Memtable({{{"order_id", int64_t{1}}, {"customer", "ann"}, {"amount", 10.5}, {"day", Day("2026-01-01")}},
                   {{"order_id", int64_t{2}}, {"customer", "bob"}, {"amount", 20.0}, {"day", Day("2026-01-02")}},
                   {{"order_id", int64_t{3}}, {"customer", "ann"}, {"amount", std::monostate{}}, {"day", Day("2026-02-15")}},
                   {{"order_id", int64_t{4}}, {"customer", "cy"}, {"amount", 5.0}, {"day", Day("2026-03-31")}}},
                  {{"order_id", "!int64"}, {"customer", "!string"}, {"amount", "float64"}, {"day", "!date"}});
}

// customer, region: ann and bob have regions, dee has none of the orders.
inline Table Customers() {
  return Memtable({{{"customer", "ann"}, {"region", "north"}},
                   {{"customer", "bob"}, {"region", "south"}},
                   {{"customer", "dee"}, {"region", "east"}}},
                  {{"customer", "!string"}, {"region", "!string"}});
}

inline const std::map<std::string, std::function<Table()>>& RelationalCases() {
  static const std::map<std::string, std::function<Table()>> cases = {
      {"memtable", [] { return Orders(); }},
      {"memtable_empty",
       [] { return Memtable({}, {{"id", "!int64"}, {"name", "string"}, {"day", "!date"}, {"ok", "bool"}}); }},
      {"memtable_strings",
       [] {
         return Memtable({{{"s", "it's"}}, {{"s", "back\\slash"}}, {{"s", "two\nlines"}}, {{"s", std::monostate{}}}},
                         {{"s", "string"}});
       }},
      {"memtable_types",
       [] {
         return Memtable({{{"b", true}, {"i", int64_t{-7}}, {"f", int64_t{2}}, {"d", 12.25}, {"t", Day("2026-05-01")}},
                          {{"b", false}, {"i", std::monostate{}}, {"f", -0.5}, {"d", std::monostate{}},
                           {"t", std::monostate{}}}},
                         {{"b", "!bool"}, {"i", "int64"}, {"f", "!float64"}, {"d", "decimal(10,2)"}, {"t", "timestamp"}});
       }},
      {"table_ref",
       [] {
         Table t = TableRef({"proj", "sales", "orders"}, {{"order_id", "!int64"}, {"amount", "float64"}});
         return t.filter(t["amount"] > 100).select({"order_id"});
       }},
      {"filter",
       [] {
         Table t = Orders();
         return t.filter(t["amount"] >= 10).filter(t["customer"] != "bob");
       }},
      {"select",
       [] {
         Table t = Orders();
         return t.select({{"id", t["order_id"]}, {"customer", t["customer"]}, {"doubled", t["amount"] * 2}});
       }},
      {"mutate",
       [] {
         Table t = Orders();
         return t.mutate({{"amount", t["amount"].fill_null(0.0)}, {"one", 1}, {"label", t["customer"].upper()}});
       }},
      {"rename_drop",
       [] {
         Table t = Orders();
         return t.rename({{"customer", "who"}}).drop({"day"});
       }},
      {"aggregate_grouped",
       [] {
         Table t = Orders();
         return t.group_by({"customer"}).aggregate({{"n", CountRows()},
                                                    {"total", t["amount"].sum()},
                                                    {"average", t["amount"].mean()},
                                                    {"smallest", t["amount"].min()},
                                                    {"largest", t["amount"].max()},
                                                    {"priced", t["amount"].count()},
                                                    {"days", t["day"].nunique()}});
       }},
      {"aggregate_all",
       [] {
         Table t = Orders();
         return t.aggregate({{"n", CountRows()}, {"total", t["amount"].sum()}, {"ids", t["order_id"].sum()},
                             {"last_day", t["day"].max()}});
       }},
      {"aggregate_empty",
       [] {
         Table t = Orders();
         Table none = t.filter(t["order_id"] > 100);
         return none.aggregate({{"n", CountRows()}, {"total", none["amount"].sum()}, {"first", none["day"].min()}});
       }},
      {"having",
       [] {
         Table t = Orders();
         Table per = t.group_by({"customer"}).aggregate({{"n", CountRows()}});
         return per.filter(per["n"] > 1);
       }},
      {"join_inner",
       [] {
         Table o = Orders();
         Table c = Customers();
         return o.join(c, {"customer"}).select({"order_id", "customer", "region"});
       }},
      {"join_left",
       [] {
         Table o = Orders();
         Table c = Customers();
         return o.join(c, o["customer"] == c["customer"], JoinKind::kLeft);
       }},
      {"join_right",
       [] {
         Table o = Orders();
         Table c = Customers();
         return o.join(c, {"customer"}, JoinKind::kRight).select({"customer", "order_id", "region"});
       }},
      {"join_outer",
       [] {
         Table o = Orders();
         Table c = Customers();
         return o.join(c, {"customer"}, JoinKind::kOuter).select({"customer", "order_id", "region"});
       }},
      {"join_semi",
       [] {
         Table o = Orders();
         Table c = Customers();
         return o.join(c, {"customer"}, JoinKind::kSemi).select({"order_id"});
       }},
      {"join_anti",
       [] {
         Table o = Orders();
         Table c = Customers();
         return c.join(o, c["customer"] == o["customer"], JoinKind::kAnti);
       }},
      {"join_cross",
       [] {
         Table a = Memtable({{{"x", int64_t{1}}}, {{"x", int64_t{2}}}}, {{"x", "!int64"}});
         Table b = Memtable({{{"y", "p"}}, {{"y", "q"}}}, {{"y", "!string"}});
         return a.cross_join(b);
       }},
      {"join_self",
       [] {
         Table o = Orders();
         Table later = o.view();
         Table pairs = o.join(later, o["customer"] == later["customer"] && o["order_id"] < later["order_id"]);
         return pairs.select({{"first", pairs["order_id"]}, {"second", pairs["order_id_right"]}});
       }},
      {"order_limit",
       [] {
         Table t = Orders();
         return t.order_by({{t["amount"], true}, {t["order_id"]}}).limit(2, 1);
       }},
      {"union_all",
       [] {
         Table a = Memtable({{{"k", int64_t{1}}, {"v", "a"}}, {{"k", int64_t{2}}, {"v", "b"}}},
                            {{"k", "!int64"}, {"v", "!string"}});
         Table b = Memtable({{{"k", int64_t{2}}, {"v", "b"}}, {{"k", int64_t{3}}, {"v", std::monostate{}}}},
                            {{"k", "!int64"}, {"v", "string"}});
         return a.union_(b);
       }},
      {"union_distinct",
       [] {
         Table a = Memtable({{{"k", int64_t{1}}}, {{"k", int64_t{2}}}}, {{"k", "!int64"}});
         Table b = Memtable({{{"k", int64_t{2}}}, {{"k", int64_t{3}}}}, {{"k", "!int64"}});
         return a.union_(b, true);
       }},
      {"distinct",
       [] {
         Table t = Orders();
         return t.select({"customer"}).distinct();
       }},
      {"cast",
       [] {
         Table t = Orders();
         return t.select({{"id_text", t["order_id"].cast("string")},
                          {"amount_int", (t["amount"] * 2).cast("int64")},
                          {"day_text", t["day"].cast("string")},
                          {"price", t["amount"].cast("decimal(12,2)")}});
       }},
      {"arithmetic",
       [] {
         Table t = Orders();
         return t.select({{"order_id", t["order_id"]},
                          {"plus", t["order_id"] + 10},
                          {"minus", -t["order_id"] - 1},
                          {"times", t["amount"] * t["order_id"]},
                          {"ratio", t["order_id"] / 2},
                          {"by_zero", t["amount"] / (t["order_id"] - t["order_id"])}});
       }},
      {"comparison_logic",
       [] {
         Table t = Orders();
         return t.filter((t["amount"] > 6 && t["amount"] <= 20.0) || !(t["customer"] != "cy"))
             .select({{"order_id", t["order_id"]},
                      {"big", t["amount"] > 15},
                      {"listed", t["customer"].isin({"ann", "cy"})},
                      {"early", t["day"] < DateLiteral("2026-02-01")}});
       }},
      {"null_handling",
       [] {
         Table t = Orders();
         return t.select({{"order_id", t["order_id"]},
                          {"missing", t["amount"].is_null()},
                          {"present", t["amount"].not_null()},
                          {"filled", t["amount"].fill_null(-1.0)},
                          {"first", Coalesce({t["amount"], TypedLiteral(std::monostate{}, "float64"), 0.0})},
                          {"size", IfElse(t["amount"] > 10, "big", "small")}});
       }},
      {"date_functions",
       [] {
         Table t = Orders();
         return t.select({{"order_id", t["order_id"]},
                          {"y", t["day"].year()},
                          {"m", t["day"].month()},
                          {"d", t["day"].day()},
                          {"week_later", t["day"].add_days(7)},
                          {"since_new_year", t["day"].day_diff(DateLiteral("2026-01-01"))},
                          {"month_start", t["day"].truncate_month()},
                          {"fixed", DateLiteral("2026-12-31")}});
       }},
      {"string_functions",
       [] {
         Table t = Customers();
         return t.select({{"customer", t["customer"]},
                          {"upper", t["region"].upper()},
                          {"length", t["region"].length()},
                          {"has_o", t["region"].contains("o")},
                          {"starts_s", t["region"].startswith("s")},
                          {"tag", t["customer"].concat("@").concat(t["region"].lower())}});
       }},
      {"shared_subtree",
       [] {
         Table t = Orders();
         Table priced = t.filter(t["amount"].not_null());
         Table totals = priced.group_by({"customer"}).aggregate({{"total", priced["amount"].sum()}});
         return priced.join(totals, {"customer"}).select({"order_id", "customer", "total"});
       }},
      {"deep_chain",
       [] {
         Table t = Orders();
         Table a = t.filter(t["order_id"] > 1);
         Table b = a.mutate({{"net", a["amount"].fill_null(0.0) * 0.8}});
         Table c = b.filter(b["net"] > 1);
         Table d = c.select({"order_id", "customer", "net"});
         Table e = d.rename({{"net", "net_amount"}});
         Table f = e.order_by({{e["net_amount"], true}});
         return f.limit(10);
       }},
  };
  return cases;
}

}  // namespace sluice::golden
