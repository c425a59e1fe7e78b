// Values: literals, column arithmetic, comparisons, boolean logic, null handling, casts, date and string functions
// and aggregates, each typed and checked as it is built.
#include <charconv>
#include <cmath>

#include "core/diagnostic.hpp"
#include "sql/relational/expr_nodes.hpp"

namespace sluice::rel {
namespace detail {

void Fail(std::string code, std::string message, std::string hint) {
  throw Error(MakeDiagnostic(std::move(code), std::move(message), SourceLocation{}, std::move(hint)));
}

std::string ColumnList(const Schema& schema) {
  std::string out;
  for (const Field& field : schema.fields()) out += (out.empty() ? "" : ", ") + field.name;
  return out;
}

namespace {

std::string ShowDouble(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string ShowLiteral(const rel::Literal& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) return "NULL";
        if constexpr (std::is_same_v<V, bool>) return v ? "true" : "false";
        if constexpr (std::is_same_v<V, int64_t>) return std::to_string(v);
        if constexpr (std::is_same_v<V, double>) return ShowDouble(v);
        if constexpr (std::is_same_v<V, std::string>) {
          std::string out = "'";
          for (char c : v) {
            if (c == '\'' || c == '\\') out += '\\';
            if (c == '\n') {
              out += "\\n";
            } else {
              out += c;
            }
          }
          return out + "'";
        }
        if constexpr (std::is_same_v<V, Date>) return "date " + v.ToString();
      },
      value);
}

const char* UnaryName(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNegate: return "-";
    case UnaryOp::kNot: return "not";
    case UnaryOp::kIsNull: return "is_null";
    case UnaryOp::kNotNull: return "not_null";
    case UnaryOp::kYear: return "year";
    case UnaryOp::kMonth: return "month";
    case UnaryOp::kDay: return "day";
    case UnaryOp::kDate: return "date";
    case UnaryOp::kTruncateMonth: return "truncate_month";
    case UnaryOp::kLower: return "lower";
    case UnaryOp::kUpper: return "upper";
    case UnaryOp::kLength: return "length";
  }
  return "?";
}

}  // namespace

const char* BinaryOperatorName(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSubtract: return "-";
    case BinaryOp::kMultiply: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kEqual: return "==";
    case BinaryOp::kNotEqual: return "!=";
    case BinaryOp::kLess: return "<";
    case BinaryOp::kLessEqual: return "<=";
    case BinaryOp::kGreater: return ">";
    case BinaryOp::kGreaterEqual: return ">=";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
    case BinaryOp::kAddDays: return "add_days";
    case BinaryOp::kDayDiff: return "day_diff";
    case BinaryOp::kContains: return "contains";
    case BinaryOp::kStartsWith: return "startswith";
    case BinaryOp::kConcat: return "concat";
  }
  return "?";
}

const char* AggregateName(AggregateFn fn) {
  switch (fn) {
    case AggregateFn::kSum: return "sum";
    case AggregateFn::kMean: return "mean";
    case AggregateFn::kMin: return "min";
    case AggregateFn::kMax: return "max";
    case AggregateFn::kCount: return "count";
    case AggregateFn::kNunique: return "nunique";
    case AggregateFn::kCountRows: return "count";
  }
  return "?";
}

std::string ShowValue(const ValueNode& value) {
  return std::visit(
      [&](const auto& kind) -> std::string {
        using K = std::decay_t<decltype(kind)>;
        if constexpr (std::is_same_v<K, ColumnRef>) return kind.name;
        if constexpr (std::is_same_v<K, LiteralValue>) {
          std::string shown = ShowLiteral(kind.value);
          if (std::holds_alternative<std::monostate>(kind.value)) shown += ":" + TypeName(value.type);
          return shown;
        }
        if constexpr (std::is_same_v<K, Unary>) {
          if (kind.op == UnaryOp::kNegate) return "-" + ShowValue(*kind.operand);
          return std::string(UnaryName(kind.op)) + "(" + ShowValue(*kind.operand) + ")";
        }
        if constexpr (std::is_same_v<K, Binary>) {
          std::string name = BinaryOperatorName(kind.op);
          if (kind.op >= BinaryOp::kAddDays) {
            return name + "(" + ShowValue(*kind.left) + ", " + ShowValue(*kind.right) + ")";
          }
          return "(" + ShowValue(*kind.left) + " " + name + " " + ShowValue(*kind.right) + ")";
        }
        if constexpr (std::is_same_v<K, Cast>) return "cast(" + ShowValue(*kind.operand) + ", " + TypeName(value.type) + ")";
        if constexpr (std::is_same_v<K, IfElseValue>) {
          return "if_else(" + ShowValue(*kind.condition) + ", " + ShowValue(*kind.then) + ", " +
                 ShowValue(*kind.otherwise) + ")";
        }
        if constexpr (std::is_same_v<K, CoalesceValue>) {
          std::string out = "coalesce(";
          for (size_t i = 0; i < kind.values.size(); ++i) out += (i ? ", " : "") + ShowValue(*kind.values[i]);
          return out + ")";
        }
        if constexpr (std::is_same_v<K, InList>) {
          std::string out = "isin(" + ShowValue(*kind.operand) + ", [";
          for (size_t i = 0; i < kind.values.size(); ++i) out += (i ? ", " : "") + ShowValue(*kind.values[i]);
          return out + "])";
        }
        if constexpr (std::is_same_v<K, AggregateValue>) {
          if (kind.fn == AggregateFn::kCountRows) return "count(*)";
          return std::string(AggregateName(kind.fn)) + "(" + ShowValue(*kind.operand) + ")";
        }
      },
      value.kind);
}

}  // namespace detail

using namespace detail;

namespace {

Value Make(ValueKind kind, DataType type, bool has_aggregate) {
  return Value(std::make_shared<const ValueNode>(ValueNode{std::move(kind), type, has_aggregate}));
}

Value MakeLiteral(rel::Literal value) {
  DataType type = TypeOfLiteral(value);
  return Make(LiteralValue{std::move(value)}, type, false);
}

bool AnyAggregate(std::initializer_list<const Value*> values) {
  for (const Value* v : values) {
    if (v->node()->has_aggregate) return true;
  }
  return false;
}

[[noreturn]] void Mismatch(const std::string& operation, const Value& a, const Value* b, const std::string& hint) {
  std::string message = "type mismatch: " + operation + " of `" + ShowValue(*a.node()) + "` (" + TypeName(a.type()) + ")";
  if (b != nullptr) message += " and `" + ShowValue(*b->node()) + "` (" + TypeName(b->type()) + ")";
  Fail("SLU-EXPR-002", message, hint);
}

DataType WithNullable(DataType type, bool nullable) {
  type.nullable = nullable;
  return type;
}

Value Arithmetic(BinaryOp op, const Value& a, const Value& b) {
  std::string name = std::string("`") + BinaryOperatorName(op) + "`";
  if (!IsNumeric(a.type()) || !IsNumeric(b.type())) {
    std::string hint = "arithmetic takes int64, float64 or decimal values";
    if (IsTemporal(a.type())) hint = "add days to a date with add_days(n); subtract dates with day_diff";
    if (a.type().kind == TypeKind::kString && b.type().kind == TypeKind::kString) hint = "join strings with concat";
    Mismatch(name, a, &b, hint);
  }
  bool nullable = a.type().nullable || b.type().nullable;
  DataType type;
  if (op == BinaryOp::kDivide) {
    type = DataType{TypeKind::kFloat64, true};  // NULL when dividing by zero
  } else if (op == BinaryOp::kMultiply && a.type().kind == TypeKind::kDecimal &&
             b.type().kind == TypeKind::kDecimal) {
    int scale = std::min(38, a.type().scale + b.type().scale);
    type = DataType{TypeKind::kDecimal, nullable, 38, scale};
  } else {
    type = *CommonType(a.type(), b.type());
    if (type.kind == TypeKind::kDecimal) type.precision = 38;  // sums and products widen
  }
  return Make(Binary{op, a.node(), b.node()}, type, AnyAggregate({&a, &b}));
}

Value Comparison(BinaryOp op, const Value& a, const Value& b) {
  std::optional<DataType> common = CommonType(a.type(), b.type());
  if (!common) {
    std::string hint = "compare values of one kind: numbers with numbers, strings with strings, dates with dates";
    if (IsTemporal(a.type()) || IsTemporal(b.type())) hint += "; write a date as DateLiteral(\"2026-01-01\")";
    Mismatch(std::string("`") + BinaryOperatorName(op) + "`", a, &b, hint);
  }
  return Make(Binary{op, a.node(), b.node()}, DataType{TypeKind::kBool, common->nullable}, AnyAggregate({&a, &b}));
}

Value Logical(BinaryOp op, const Value& a, const Value& b) {
  if (a.type().kind != TypeKind::kBool || b.type().kind != TypeKind::kBool) {
    Mismatch(std::string("`") + BinaryOperatorName(op) + "`", a, &b, "boolean logic takes bool values (comparisons)");
  }
  return Make(Binary{op, a.node(), b.node()}, DataType{TypeKind::kBool, a.type().nullable || b.type().nullable},
              AnyAggregate({&a, &b}));
}

Value UnaryOf(UnaryOp op, const Value& a, DataType type) {
  return Make(Unary{op, a.node()}, type, a.node()->has_aggregate);
}

void RequireKind(const Value& a, std::initializer_list<TypeKind> kinds, const std::string& operation,
                 const std::string& hint) {
  for (TypeKind kind : kinds) {
    if (a.type().kind == kind) return;
  }
  Mismatch(operation, a, nullptr, hint);
}

Value Aggregate(AggregateFn fn, const Value& a) {
  if (a.node()->has_aggregate) {
    Fail("SLU-EXPR-007",
         std::string("aggregate of an aggregate: ") + AggregateName(fn) + "(" + ShowValue(*a.node()) + ")",
         "aggregate row values only; aggregate the result of an aggregate in a second aggregate() step");
  }
  DataType type = a.type();
  switch (fn) {
    case AggregateFn::kSum:
      if (!IsNumeric(type)) Mismatch("sum", a, nullptr, "sum takes int64, float64 or decimal values");
      if (type.kind == TypeKind::kDecimal) type.precision = 38;
      type.nullable = true;
      break;
    case AggregateFn::kMean:
      if (!IsNumeric(type)) Mismatch("mean", a, nullptr, "mean takes int64, float64 or decimal values");
      type = DataType{TypeKind::kFloat64, true};
      break;
    case AggregateFn::kMin:
    case AggregateFn::kMax:
      if (type.kind == TypeKind::kBool) Mismatch(AggregateName(fn), a, nullptr, "min and max take ordered values");
      type.nullable = true;
      break;
    case AggregateFn::kCount:
    case AggregateFn::kNunique:
    case AggregateFn::kCountRows:
      type = DataType{TypeKind::kInt64, false};
      break;
  }
  return Make(AggregateValue{fn, a.node()}, type, true);
}

}  // namespace

Value::Value(bool value) : Value(MakeLiteral(value)) {}
Value::Value(int value) : Value(MakeLiteral(int64_t{value})) {}
Value::Value(int64_t value) : Value(MakeLiteral(value)) {}
Value::Value(double value) : Value(MakeLiteral(value)) {}
Value::Value(const char* value) : Value(MakeLiteral(std::string(value))) {}
Value::Value(std::string value) : Value(MakeLiteral(std::move(value))) {}
Value::Value(Date value) : Value(MakeLiteral(value)) {}

const DataType& Value::type() const { return node_->type; }

std::optional<std::string> Value::default_name() const {
  if (const auto* column = std::get_if<ColumnRef>(&node_->kind)) return column->name;
  return std::nullopt;
}

Value Value::cast(std::string_view type_name) const {
  DataType target = ParseType(type_name);
  const DataType& from = type();
  bool allowed = from.kind == target.kind || (IsNumeric(from) && IsNumeric(target)) ||
                 from.kind == TypeKind::kString || target.kind == TypeKind::kString ||
                 (IsTemporal(from) && IsTemporal(target)) ||
                 (from.kind == TypeKind::kBool && target.kind == TypeKind::kInt64) ||
                 (from.kind == TypeKind::kInt64 && target.kind == TypeKind::kBool);
  if (!allowed) {
    Mismatch("cast to " + TypeName(target), *this, nullptr,
             "numbers cast to numbers, anything to and from string, dates to and from timestamps, bool to and from "
             "int64");
  }
  target.nullable = from.nullable;  // a cast keeps NULLs and cannot make them
  return Make(Cast{node_}, target, node_->has_aggregate);
}

Value Value::is_null() const { return UnaryOf(UnaryOp::kIsNull, *this, DataType{TypeKind::kBool, false}); }
Value Value::not_null() const { return UnaryOf(UnaryOp::kNotNull, *this, DataType{TypeKind::kBool, false}); }

Value Value::fill_null(Value replacement) const { return Coalesce({*this, std::move(replacement)}); }

Value Value::isin(std::vector<Value> values) const {
  bool nullable = type().nullable;
  bool aggregate = node_->has_aggregate;
  std::vector<ValuePtr> nodes;
  for (const Value& v : values) {
    std::optional<DataType> common = CommonType(type(), v.type());
    if (!common) Mismatch("isin", *this, &v, "the values of isin must be of the column's kind");
    nullable = nullable || v.type().nullable;
    aggregate = aggregate || v.node()->has_aggregate;
    nodes.push_back(v.node());
  }
  return Make(InList{node_, std::move(nodes)}, DataType{TypeKind::kBool, nullable}, aggregate);
}

Value Value::year() const {
  RequireKind(*this, {TypeKind::kDate, TypeKind::kTimestamp}, "year", "year takes a date or timestamp");
  return UnaryOf(UnaryOp::kYear, *this, DataType{TypeKind::kInt64, type().nullable});
}
Value Value::month() const {
  RequireKind(*this, {TypeKind::kDate, TypeKind::kTimestamp}, "month", "month takes a date or timestamp");
  return UnaryOf(UnaryOp::kMonth, *this, DataType{TypeKind::kInt64, type().nullable});
}
Value Value::day() const {
  RequireKind(*this, {TypeKind::kDate, TypeKind::kTimestamp}, "day", "day takes a date or timestamp");
  return UnaryOf(UnaryOp::kDay, *this, DataType{TypeKind::kInt64, type().nullable});
}
Value Value::date() const {
  RequireKind(*this, {TypeKind::kTimestamp, TypeKind::kDate}, "date", "date takes a timestamp");
  return UnaryOf(UnaryOp::kDate, *this, DataType{TypeKind::kDate, type().nullable});
}
Value Value::add_days(Value days) const {
  RequireKind(*this, {TypeKind::kDate, TypeKind::kTimestamp}, "add_days", "add_days takes a date or timestamp");
  if (days.type().kind != TypeKind::kInt64) Mismatch("add_days", *this, &days, "the number of days is an int64");
  return Make(Binary{BinaryOp::kAddDays, node_, days.node()},
              WithNullable(type(), type().nullable || days.type().nullable), AnyAggregate({this, &days}));
}
Value Value::day_diff(Value earlier) const {
  if (type().kind != TypeKind::kDate || earlier.type().kind != TypeKind::kDate) {
    Mismatch("day_diff", *this, &earlier, "day_diff takes two dates");
  }
  return Make(Binary{BinaryOp::kDayDiff, node_, earlier.node()},
              DataType{TypeKind::kInt64, type().nullable || earlier.type().nullable}, AnyAggregate({this, &earlier}));
}
Value Value::truncate_month() const {
  RequireKind(*this, {TypeKind::kDate}, "truncate_month", "truncate_month takes a date");
  return UnaryOf(UnaryOp::kTruncateMonth, *this, type());
}

Value Value::sum() const { return Aggregate(AggregateFn::kSum, *this); }
Value Value::mean() const { return Aggregate(AggregateFn::kMean, *this); }
Value Value::min() const { return Aggregate(AggregateFn::kMin, *this); }
Value Value::max() const { return Aggregate(AggregateFn::kMax, *this); }
Value Value::count() const { return Aggregate(AggregateFn::kCount, *this); }
Value Value::nunique() const { return Aggregate(AggregateFn::kNunique, *this); }

Value Value::lower() const {
  RequireKind(*this, {TypeKind::kString}, "lower", "lower takes a string");
  return UnaryOf(UnaryOp::kLower, *this, type());
}
Value Value::upper() const {
  RequireKind(*this, {TypeKind::kString}, "upper", "upper takes a string");
  return UnaryOf(UnaryOp::kUpper, *this, type());
}
Value Value::length() const {
  RequireKind(*this, {TypeKind::kString}, "length", "length takes a string");
  return UnaryOf(UnaryOp::kLength, *this, DataType{TypeKind::kInt64, type().nullable});
}

namespace {
Value StringBinary(BinaryOp op, const Value& a, const Value& b, TypeKind result) {
  if (a.type().kind != TypeKind::kString || b.type().kind != TypeKind::kString) {
    Mismatch(BinaryOperatorName(op), a, &b, std::string(BinaryOperatorName(op)) + " takes two strings");
  }
  return Make(Binary{op, a.node(), b.node()}, DataType{result, a.type().nullable || b.type().nullable},
              AnyAggregate({&a, &b}));
}
}  // namespace

Value Value::contains(Value needle) const { return StringBinary(BinaryOp::kContains, *this, needle, TypeKind::kBool); }
Value Value::startswith(Value prefix) const {
  return StringBinary(BinaryOp::kStartsWith, *this, prefix, TypeKind::kBool);
}
Value Value::concat(Value other) const { return StringBinary(BinaryOp::kConcat, *this, other, TypeKind::kString); }

Value operator+(const Value& a, const Value& b) { return Arithmetic(BinaryOp::kAdd, a, b); }
Value operator-(const Value& a, const Value& b) { return Arithmetic(BinaryOp::kSubtract, a, b); }
Value operator*(const Value& a, const Value& b) { return Arithmetic(BinaryOp::kMultiply, a, b); }
Value operator/(const Value& a, const Value& b) { return Arithmetic(BinaryOp::kDivide, a, b); }
Value operator-(const Value& a) {
  if (!IsNumeric(a.type())) Mismatch("negation", a, nullptr, "negate int64, float64 or decimal values");
  return UnaryOf(UnaryOp::kNegate, a, a.type());
}
Value operator==(const Value& a, const Value& b) { return Comparison(BinaryOp::kEqual, a, b); }
Value operator!=(const Value& a, const Value& b) { return Comparison(BinaryOp::kNotEqual, a, b); }
Value operator<(const Value& a, const Value& b) { return Comparison(BinaryOp::kLess, a, b); }
Value operator<=(const Value& a, const Value& b) { return Comparison(BinaryOp::kLessEqual, a, b); }
Value operator>(const Value& a, const Value& b) { return Comparison(BinaryOp::kGreater, a, b); }
Value operator>=(const Value& a, const Value& b) { return Comparison(BinaryOp::kGreaterEqual, a, b); }
Value operator&&(const Value& a, const Value& b) { return Logical(BinaryOp::kAnd, a, b); }
Value operator||(const Value& a, const Value& b) { return Logical(BinaryOp::kOr, a, b); }
Value operator!(const Value& a) {
  if (a.type().kind != TypeKind::kBool) Mismatch("`not`", a, nullptr, "negate bool values (comparisons)");
  return UnaryOf(UnaryOp::kNot, a, a.type());
}

Value TypedLiteral(rel::Literal value, std::string_view type_name) {
  DataType type = ParseType(type_name);
  std::optional<rel::Literal> converted = ConvertLiteral(value, type);
  if (!converted) {
    Fail("SLU-EXPR-002",
         "type mismatch: literal " + ShowValue(*MakeLiteral(value).node()) + " is not a " + TypeName(type),
         "give a value of the named type, or NULL");
  }
  bool is_null = std::holds_alternative<std::monostate>(*converted);
  if (is_null && !type.nullable) {
    Fail("SLU-EXPR-002", "type mismatch: NULL literal of the non-nullable type " + TypeName(type),
         "drop the leading ! from the type");
  }
  if (!is_null) type.nullable = false;
  return Make(LiteralValue{std::move(*converted)}, type, false);
}

Value DateLiteral(std::string_view yyyy_mm_dd) {
  std::optional<Date> date = Date::Parse(yyyy_mm_dd);
  if (!date) {
    Fail("SLU-EXPR-002", "type mismatch: `" + std::string(yyyy_mm_dd) + "` is not a date",
         "write a real calendar day as YYYY-MM-DD");
  }
  return Value(*date);
}

Value IfElse(Value condition, Value then, Value otherwise) {
  if (condition.type().kind != TypeKind::kBool) {
    Mismatch("if_else condition", condition, nullptr, "the condition of if_else is a bool value");
  }
  std::optional<DataType> common = CommonType(then.type(), otherwise.type());
  if (!common) Mismatch("if_else branches", then, &otherwise, "both branches of if_else must be of one kind");
  return Make(IfElseValue{condition.node(), then.node(), otherwise.node()}, *common,
              AnyAggregate({&condition, &then, &otherwise}));
}

Value Coalesce(std::vector<Value> values) {
  if (values.empty()) Fail("SLU-EXPR-009", "coalesce of no values", "give coalesce at least one value");
  DataType type = values.front().type();
  bool nullable = true;
  bool aggregate = false;
  std::vector<ValuePtr> nodes;
  for (const Value& v : values) {
    std::optional<DataType> common = CommonType(type, v.type());
    if (!common) Mismatch("coalesce", values.front(), &v, "the values of coalesce (fill_null) must be of one kind");
    type = *common;
    nullable = nullable && v.type().nullable;
    aggregate = aggregate || v.node()->has_aggregate;
    nodes.push_back(v.node());
  }
  type.nullable = nullable;
  return Make(CoalesceValue{std::move(nodes)}, type, aggregate);
}

Value CountRows() { return Make(AggregateValue{AggregateFn::kCountRows, nullptr}, DataType{TypeKind::kInt64, false}, true); }

}  // namespace sluice::rel
