// The nodes behind rel::Value and rel::Table (private to src/sql/relational/): closed sets of node kinds as
// std::variant, each node immutable once built, its type or schema computed and checked by the builder.
//
// A column reference keeps the table node it was taken from. A value belongs to a table when each of its columns
// comes from that table, or from an ancestor whose column reaches the table unchanged under the same name
// (through filter, order_by, limit, distinct, or a projection that keeps the column as is): `t.filter(p)` can be
// followed by `.select({t["a"]})`, as in Ibis.
// Thread-safety: immutable values.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/relational.hpp"

namespace sluice::rel::detail {

using ValuePtr = std::shared_ptr<const ValueNode>;
using TablePtr = std::shared_ptr<const TableNode>;

struct ColumnRef {
  TablePtr table;
  std::string name;
};

struct LiteralValue {
  rel::Literal value;
};

enum class UnaryOp {
  kNegate, kNot, kIsNull, kNotNull, kYear, kMonth, kDay, kDate, kTruncateMonth, kLower, kUpper, kLength
};
struct Unary {
  UnaryOp op;
  ValuePtr operand;
};

enum class BinaryOp {
  kAdd, kSubtract, kMultiply, kDivide, kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kAnd, kOr,
  kAddDays, kDayDiff, kContains, kStartsWith, kConcat
};
struct Binary {
  BinaryOp op;
  ValuePtr left;
  ValuePtr right;
};

struct Cast {
  ValuePtr operand;  // the target type is the node's type
};

struct IfElseValue {
  ValuePtr condition;
  ValuePtr then;
  ValuePtr otherwise;
};

struct CoalesceValue {
  std::vector<ValuePtr> values;
};

struct InList {
  ValuePtr operand;
  std::vector<ValuePtr> values;
};

enum class AggregateFn { kSum, kMean, kMin, kMax, kCount, kNunique, kCountRows };
struct AggregateValue {
  AggregateFn fn;
  ValuePtr operand;  // null for kCountRows
};

using ValueKind =
    std::variant<ColumnRef, LiteralValue, Unary, Binary, Cast, IfElseValue, CoalesceValue, InList, AggregateValue>;

struct ValueNode {
  ValueKind kind;
  DataType type;
  bool has_aggregate = false;  // an aggregate somewhere inside
};

// Table operations.
struct MemtableOp {
  std::vector<std::vector<rel::Literal>> rows;  // in schema order, each value of its column's type (or NULL)
};
struct TableRefOp {
  TableName name;
};
struct FilterOp {
  TablePtr parent;
  ValuePtr predicate;
};

// select, mutate, drop, rename and view all become one projection; `verb` and `shown` say how it was asked for
// (what Describe prints).
struct ProjectItem {
  std::string name;
  ValuePtr value;
};
struct ProjectOp {
  TablePtr parent;
  std::vector<ProjectItem> items;
  std::string verb;   // "select", "mutate", "drop", "rename", "view"
  std::string shown;  // the arguments as Describe prints them
};

struct AggregateOp {
  TablePtr parent;
  std::vector<std::string> keys;
  std::vector<ProjectItem> metrics;
};

enum class JoinSide { kLeft, kRight, kBoth };  // kBoth: the key of a USING-style join on a full outer join
struct JoinColumn {
  std::string name;    // output name
  JoinSide side;
  std::string source;  // the column's name on its side
};
struct JoinOp {
  TablePtr left;
  TablePtr right;
  JoinKind kind;
  ValuePtr predicate;             // null for a cross join
  std::vector<std::string> keys;  // the `on` columns of an equi-join by name (shown by Describe)
  std::vector<JoinColumn> columns;
};

struct SortItem {
  ValuePtr value;
  bool descending = false;
};
struct OrderByOp {
  TablePtr parent;
  std::vector<SortItem> keys;
};
struct LimitOp {
  TablePtr parent;
  int64_t count = 0;
  int64_t offset = 0;
};
struct UnionOp {
  TablePtr left;
  TablePtr right;
  bool distinct = false;
};
struct DistinctOp {
  TablePtr parent;
};

using TableKind = std::variant<MemtableOp, TableRefOp, FilterOp, ProjectOp, AggregateOp, JoinOp, OrderByOp, LimitOp,
                               UnionOp, DistinctOp>;

struct TableNode {
  TableKind kind;
  Schema schema;
};

// The tables a node reads, in order (none for memtables and table references).
std::vector<const TableNode*> Children(const TableNode& node);

// Whether `column` of `ancestor` reaches `node` unchanged under the same name (or node == ancestor).
bool ColumnReaches(const TableNode& node, const TableNode* ancestor, std::string_view column);

// Calls `visit` on each column reference in `value`, with whether it sits inside an aggregate.
template <typename Visit>
void ForEachColumn(const ValueNode& value, Visit&& visit, bool in_aggregate = false);

// Throws sluice::Error with the diagnostic `code` (no location: expressions are built in code).
[[noreturn]] void Fail(std::string code, std::string message, std::string hint = "");

// The builder's text for a value (what Describe and error messages show), e.g. (amount > 0), sum(amount).
std::string ShowValue(const ValueNode& value);

// "a, b, c" of the schema's names.
std::string ColumnList(const Schema& schema);

// Type predicates.
inline bool IsNumeric(const DataType& t) {
  return t.kind == TypeKind::kInt64 || t.kind == TypeKind::kFloat64 || t.kind == TypeKind::kDecimal;
}
inline bool IsTemporal(const DataType& t) { return t.kind == TypeKind::kDate || t.kind == TypeKind::kTimestamp; }

// The type both values can be compared or combined as (numeric promotion, date and timestamp), nullable when
// either is; nullopt when there is none.
std::optional<DataType> CommonType(const DataType& a, const DataType& b);

// The literal's own type (a NULL is a nullable string until typed).
DataType TypeOfLiteral(const rel::Literal& value);

// Converts `value` to `type`'s representation (int64 → float64 for a float column …); nullopt when it is not of
// that type. NULL converts to any type.
std::optional<rel::Literal> ConvertLiteral(const rel::Literal& value, const DataType& type);

template <typename Visit>
void ForEachColumn(const ValueNode& value, Visit&& visit, bool in_aggregate) {
  std::visit(
      [&](const auto& kind) {
        using K = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<K, ColumnRef>) {
          visit(kind, in_aggregate);
        } else if constexpr (std::is_same_v<K, Unary>) {
          ForEachColumn(*kind.operand, visit, in_aggregate);
        } else if constexpr (std::is_same_v<K, Binary>) {
          ForEachColumn(*kind.left, visit, in_aggregate);
          ForEachColumn(*kind.right, visit, in_aggregate);
        } else if constexpr (std::is_same_v<K, Cast>) {
          ForEachColumn(*kind.operand, visit, in_aggregate);
        } else if constexpr (std::is_same_v<K, IfElseValue>) {
          ForEachColumn(*kind.condition, visit, in_aggregate);
          ForEachColumn(*kind.then, visit, in_aggregate);
          ForEachColumn(*kind.otherwise, visit, in_aggregate);
        } else if constexpr (std::is_same_v<K, CoalesceValue>) {
          for (const auto& v : kind.values) ForEachColumn(*v, visit, in_aggregate);
        } else if constexpr (std::is_same_v<K, InList>) {
          ForEachColumn(*kind.operand, visit, in_aggregate);
          for (const auto& v : kind.values) ForEachColumn(*v, visit, in_aggregate);
        } else if constexpr (std::is_same_v<K, AggregateValue>) {
          if (kind.operand) ForEachColumn(*kind.operand, visit, true);
        }
      },
      value.kind);
}

}  // namespace sluice::rel::detail
