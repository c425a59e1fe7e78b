// Relational expressions (the role Ibis plays for seed 000): immutable, shared expression trees for tables and the
// values computed over their columns, with schemas inferred and checked as they are built, and one printer per
// dialect (relational/printer.hpp).
//
// A Table is a relation: a memtable (rows and a schema), a reference to a warehouse relation with a known schema,
// or an operation over other tables (filter, select, mutate, aggregate, join, order_by, limit, union, distinct).
// A Value is a column expression over one table: a column of it, a literal, arithmetic, a comparison, boolean
// logic, null handling, a cast, a date function or an aggregate.
//
// Errors: building an expression that cannot be typed throws sluice::Error before anything connects —
// SLU-EXPR-001 unknown column (naming it, the columns there are, and a close match as the hint), -002 type
// mismatch (naming the operation and both types), -003 a value from another table, -004 bad memtable row (missing
// or extra column, value not of the column's type), -005 unknown type name, -006 set operation over different
// schemas, -007 aggregate where a row value is needed (or the reverse), -008 duplicate output column, -009 other
// misuse (empty select, bad limit …).
// Thread-safety: immutable values; share freely across threads.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/date.hpp"

namespace sluice::rel {

enum class TypeKind { kBool, kInt64, kFloat64, kDecimal, kString, kDate, kTimestamp };

struct DataType {
  TypeKind kind = TypeKind::kString;
  bool nullable = true;
  int precision = 0;  // kDecimal only
  int scale = 0;
  bool operator==(const DataType&) const = default;
};

// Ibis-style names: "bool"/"boolean", "int64", "float64", "decimal(P,S)", "string", "date", "timestamp"; a leading
// "!" means not nullable. Throws SLU-EXPR-005.
DataType ParseType(std::string_view name);
// "int64", "!date", "decimal(18,2)" … (ParseType's spelling).
std::string TypeName(const DataType& type);

struct Field {
  std::string name;
  DataType type;
  bool operator==(const Field&) const = default;
};

// Ordered columns. Built from {{"order_id", "string"}, {"amount", "float64"}} (names parsed with ParseType).
class Schema {
 public:
  Schema() = default;
  Schema(std::initializer_list<std::pair<std::string, std::string>> columns);
  explicit Schema(std::vector<Field> fields);

  const std::vector<Field>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  // The field named `name` (exact match), or nullptr.
  const Field* Find(std::string_view name) const;
  bool operator==(const Schema&) const = default;

 private:
  std::vector<Field> fields_;
};

// A literal: NULL, bool, int64, float64, string or date.
using Literal = std::variant<std::monostate, bool, int64_t, double, std::string, Date>;

namespace detail {
struct ValueNode;
struct TableNode;
}  // namespace detail

class Table;

class Value {
 public:
  // Literals convert implicitly, so `t["amount"] > 0` and `t["name"] == "x"` read as they would in Ibis.
  Value(bool value);
  Value(int value);
  Value(int64_t value);
  Value(double value);
  Value(const char* value);
  Value(std::string value);
  Value(Date value);

  const DataType& type() const;
  // The column name this value gets in a projection when none is given: the column's own, else an error at use.
  std::optional<std::string> default_name() const;

  Value cast(std::string_view type) const;
  Value is_null() const;
  Value not_null() const;
  Value fill_null(Value replacement) const;  // COALESCE(this, replacement)
  Value isin(std::vector<Value> values) const;
  // Dates and timestamps.
  Value year() const;
  Value month() const;
  Value day() const;
  Value date() const;               // a timestamp's date
  Value add_days(Value days) const;  // date + n days
  Value day_diff(Value earlier) const;  // whole days from `earlier` to this date
  Value truncate_month() const;
  // Aggregates (only in Table::aggregate).
  Value sum() const;
  Value mean() const;
  Value min() const;
  Value max() const;
  Value count() const;     // non-null values
  Value nunique() const;
  // Strings.
  Value lower() const;
  Value upper() const;
  Value length() const;                  // characters, int64
  Value contains(Value needle) const;    // substring test, bool
  Value startswith(Value prefix) const;  // bool
  Value concat(Value other) const;       // string || string

  const std::shared_ptr<const detail::ValueNode>& node() const { return node_; }
  explicit Value(std::shared_ptr<const detail::ValueNode> node) : node_(std::move(node)) {}

 private:
  std::shared_ptr<const detail::ValueNode> node_;
};

Value operator+(const Value& a, const Value& b);
Value operator-(const Value& a, const Value& b);
Value operator*(const Value& a, const Value& b);
Value operator/(const Value& a, const Value& b);  // always float64, NULL when dividing by zero
Value operator-(const Value& a);
Value operator==(const Value& a, const Value& b);
Value operator!=(const Value& a, const Value& b);
Value operator<(const Value& a, const Value& b);
Value operator<=(const Value& a, const Value& b);
Value operator>(const Value& a, const Value& b);
Value operator>=(const Value& a, const Value& b);
Value operator&&(const Value& a, const Value& b);
Value operator||(const Value& a, const Value& b);
Value operator!(const Value& a);

// A typed literal, e.g. NULL as "int64" (ibis.literal). Named TypedLiteral because `Literal` is the variant type.
// Throws SLU-EXPR-005 for an unknown type, -002 when the value is not of that type.
Value TypedLiteral(rel::Literal value, std::string_view type);
Value DateLiteral(std::string_view yyyy_mm_dd);           // ibis.date("2026-01-01"); throws SLU-EXPR-002
Value IfElse(Value condition, Value then, Value otherwise);
Value Coalesce(std::vector<Value> values);
Value CountRows();  // count(*)

enum class JoinKind { kInner, kLeft, kRight, kOuter, kSemi, kAnti, kCross };

struct NamedValue {
  std::string name;
  Value value;
};

struct SortKey {
  Value value;
  bool descending = false;
};

class GroupedTable;

class Table {
 public:
  // A column of this table (SLU-EXPR-001 when it has none of that name).
  Value operator[](std::string_view column) const;
  const Schema& schema() const;

  Table filter(Value predicate) const;  // a bool value over this table
  Table select(std::vector<std::string> columns) const;
  Table select(std::vector<NamedValue> values) const;
  Table mutate(std::vector<NamedValue> values) const;  // adds or replaces columns, keeping the others in order
  Table drop(std::vector<std::string> columns) const;
  Table rename(std::vector<std::pair<std::string, std::string>> old_to_new) const;
  GroupedTable group_by(std::vector<std::string> keys) const;
  Table aggregate(std::vector<NamedValue> metrics) const;  // no grouping: one row
  // Columns of `right` whose names collide with this table's get the suffix "_right" (Ibis's rule); for kSemi and
  // kAnti only this table's columns are kept. kCross takes no predicate.
  Table join(const Table& right, Value predicate, JoinKind kind = JoinKind::kInner) const;
  // Equi-join on columns named the same on both sides; the key columns appear once.
  Table join(const Table& right, std::vector<std::string> on, JoinKind kind = JoinKind::kInner) const;
  // Disambiguates `join(right, {"k"})`, which would otherwise also convert to a Value.
  Table join(const Table& right, std::initializer_list<std::string> on, JoinKind kind = JoinKind::kInner) const {
    return join(right, std::vector<std::string>(on), kind);
  }
  Table cross_join(const Table& right) const;
  Table order_by(std::vector<SortKey> keys) const;
  Table limit(int64_t n, int64_t offset = 0) const;
  Table union_(const Table& other, bool distinct = false) const;
  Table distinct() const;
  // The same rows as a distinct table expression: what a self-join joins with (t.join(t.view(), …)), since a value
  // must say which side of a join it comes from.
  Table view() const;

  const std::shared_ptr<const detail::TableNode>& node() const { return node_; }
  explicit Table(std::shared_ptr<const detail::TableNode> node) : node_(std::move(node)) {}

 private:
  std::shared_ptr<const detail::TableNode> node_;
};

class GroupedTable {
 public:
  Table aggregate(std::vector<NamedValue> metrics) const;

 private:
  friend class Table;
  GroupedTable(Table table, std::vector<std::string> keys) : table_(std::move(table)), keys_(std::move(keys)) {}
  Table table_;
  std::vector<std::string> keys_;
};

// One memtable row: column name → value (every column of the schema exactly once; SLU-EXPR-004 otherwise).
using Row = std::vector<std::pair<std::string, rel::Literal>>;

// ibis.memtable(rows, schema=…).
Table Memtable(std::vector<Row> rows, Schema schema);

// A warehouse relation with a known schema. `catalog` is only printed where the dialect has catalogs (BigQuery's
// project).
struct TableName {
  std::string catalog;
  std::string name_space;
  std::string name;
};
Table TableRef(TableName name, Schema schema);

}  // namespace sluice::rel
