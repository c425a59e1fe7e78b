// Values as SQL of each dialect: literals, operators, functions and aggregates.
#include "sql/relational/value_sql.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include "sql/dialect.hpp"
#include "sql/relational/printer.hpp"

namespace sluice::rel::detail {
namespace {

using sql::Dialect;

std::string DoubleText(double value) {
  char buffer[64];
  auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value);
  std::string text(buffer, end);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string NonFinite(Dialect dialect, double value) {
  std::string word = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  if (dialect == Dialect::kClickHouse) return std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  std::string spelled = dialect == Dialect::kBigQuery ? word : (std::isnan(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity");
  return RenderCast(dialect, sql::QuoteString(dialect, spelled), DataType{TypeKind::kFloat64, false});
}

std::string DateText(Dialect dialect, Date date, bool timestamp) {
  std::string day = date.ToString();
  if (!timestamp) return sql::DateLiteral(dialect, date);
  return dialect == Dialect::kClickHouse ? "toDateTime('" + day + " 00:00:00')" : "TIMESTAMP '" + day + " 00:00:00'";
}

std::string Call(const std::string& name, const std::vector<std::string>& arguments) {
  std::string out = name + "(";
  for (size_t i = 0; i < arguments.size(); ++i) out += (i ? ", " : "") + arguments[i];
  return out + ")";
}

const DataType kFloat{TypeKind::kFloat64, false};

class Renderer {
 public:
  Renderer(Dialect dialect, const ColumnResolver& resolve) : dialect_(dialect), resolve_(resolve) {}

  std::string Render(const ValueNode& value, bool top) {
    return std::visit([&](const auto& kind) { return RenderKind(value, kind, top); }, value.kind);
  }

 private:
  bool ClickHouse() const { return dialect_ == Dialect::kClickHouse; }

  // The operand as a float64 when it is not one already (a decimal mixed with a float, a division).
  std::string AsFloat(const ValueNode& value) {
    std::string sql = Render(value, false);
    if (value.type.kind == TypeKind::kFloat64) return sql;
    return RenderCast(dialect_, sql, DataType{TypeKind::kFloat64, value.type.nullable});
  }

  // Operands of an arithmetic or comparison: a decimal next to a float becomes a float (ClickHouse has no
  // common type for them; the others would compute in decimal).
  std::pair<std::string, std::string> Operands(const ValueNode& a, const ValueNode& b) {
    bool mixed = (a.type.kind == TypeKind::kDecimal && b.type.kind == TypeKind::kFloat64) ||
                 (a.type.kind == TypeKind::kFloat64 && b.type.kind == TypeKind::kDecimal);
    if (mixed) return {AsFloat(a), AsFloat(b)};
    return {Render(a, false), Render(b, false)};
  }

  std::string Wrap(std::string sql, bool top) { return top ? sql : "(" + sql + ")"; }

  std::string RenderKind(const ValueNode&, const ColumnRef& column, bool) { return resolve_(column); }

  std::string RenderKind(const ValueNode& value, const LiteralValue& literal, bool) {
    return RenderLiteral(dialect_, literal.value, value.type, true);
  }

  std::string RenderKind(const ValueNode& value, const Unary& unary, bool top) {
    const ValueNode& operand = *unary.operand;
    std::string x = Render(operand, false);
    bool timestamp = operand.type.kind == TypeKind::kTimestamp;
    switch (unary.op) {
      case UnaryOp::kNegate: return Wrap("-" + x, top);
      case UnaryOp::kNot: return Wrap("NOT " + x, top);
      case UnaryOp::kIsNull: return Wrap(x + " IS NULL", top);
      case UnaryOp::kNotNull: return Wrap(x + " IS NOT NULL", top);
      case UnaryOp::kYear:
      case UnaryOp::kMonth:
      case UnaryOp::kDay: {
        static const char* kDuck[] = {"year", "month", "day"};
        static const char* kPart[] = {"YEAR", "MONTH", "DAY"};
        static const char* kClickHouse[] = {"toYear", "toMonth", "toDayOfMonth"};
        int i = unary.op == UnaryOp::kYear ? 0 : unary.op == UnaryOp::kMonth ? 1 : 2;
        switch (dialect_) {
          case Dialect::kDuckDb: return Call(kDuck[i], {x});
          case Dialect::kPostgres: return "CAST(EXTRACT(" + std::string(kPart[i]) + " FROM " + x + ") AS bigint)";
          case Dialect::kBigQuery: return "EXTRACT(" + std::string(kPart[i]) + " FROM " + x + ")";
          case Dialect::kClickHouse: return Call("toInt64", {Call(kClickHouse[i], {x})});
        }
        break;
      }
      case UnaryOp::kDate:
        if (!timestamp) return x;
        if (dialect_ == Dialect::kBigQuery) return Call("DATE", {x});
        if (ClickHouse()) return Call("toDate", {x});
        return RenderCast(dialect_, x, value.type);
      case UnaryOp::kTruncateMonth:
        switch (dialect_) {
          case Dialect::kDuckDb:
          case Dialect::kPostgres: return RenderCast(dialect_, "date_trunc('month', " + x + ")", value.type);
          case Dialect::kBigQuery: return "DATE_TRUNC(" + x + ", MONTH)";
          case Dialect::kClickHouse: return Call("toStartOfMonth", {x});
        }
        break;
      case UnaryOp::kLower: return Call(ClickHouse() ? "lowerUTF8" : "lower", {x});
      case UnaryOp::kUpper: return Call(ClickHouse() ? "upperUTF8" : "upper", {x});
      case UnaryOp::kLength:
        switch (dialect_) {
          case Dialect::kDuckDb: return Call("length", {x});
          case Dialect::kPostgres: return "CAST(length(" + x + ") AS bigint)";
          case Dialect::kBigQuery: return Call("LENGTH", {x});
          case Dialect::kClickHouse: return Call("toInt64", {Call("lengthUTF8", {x})});
        }
        break;
    }
    return x;
  }

  std::string RenderKind(const ValueNode& value, const Binary& binary, bool top) {
    const ValueNode& a = *binary.left;
    const ValueNode& b = *binary.right;
    switch (binary.op) {
      case BinaryOp::kAdd:
      case BinaryOp::kSubtract:
      case BinaryOp::kMultiply:
      case BinaryOp::kEqual:
      case BinaryOp::kNotEqual:
      case BinaryOp::kLess:
      case BinaryOp::kLessEqual:
      case BinaryOp::kGreater:
      case BinaryOp::kGreaterEqual: {
        static const char* kSymbols[] = {"+", "-", "*", "/", "=", "<>", "<", "<=", ">", ">="};
        auto [x, y] = Operands(a, b);
        return Wrap(x + " " + kSymbols[static_cast<int>(binary.op)] + " " + y, top);
      }
      case BinaryOp::kDivide: {
        std::string divisor = AsFloat(b);
        return Wrap(AsFloat(a) + " / " + Call(ClickHouse() ? "nullIf" : "NULLIF", {divisor, "0"}), top);
      }
      case BinaryOp::kAnd: return Wrap(Render(a, false) + " AND " + Render(b, false), top);
      case BinaryOp::kOr: return Wrap(Render(a, false) + " OR " + Render(b, false), top);
      case BinaryOp::kAddDays: return AddDays(value, a, b, top);
      case BinaryOp::kDayDiff: {
        std::string later = Render(a, false);
        std::string earlier = Render(b, false);
        switch (dialect_) {
          case Dialect::kDuckDb: return Call("date_diff", {"'day'", earlier, later});
          case Dialect::kPostgres: return "CAST(" + later + " - " + earlier + " AS bigint)";
          case Dialect::kBigQuery: return Call("DATE_DIFF", {later, earlier, "DAY"});
          case Dialect::kClickHouse: return Call("toInt64", {Call("dateDiff", {"'day'", earlier, later})});
        }
        break;
      }
      case BinaryOp::kContains: {
        std::string haystack = Render(a, false);
        std::string needle = Render(b, false);
        switch (dialect_) {
          case Dialect::kDuckDb: return Call("contains", {haystack, needle});
          case Dialect::kPostgres: return Wrap(Call("strpos", {haystack, needle}) + " > 0", top);
          case Dialect::kBigQuery: return Wrap(Call("STRPOS", {haystack, needle}) + " > 0", top);
          case Dialect::kClickHouse: return Wrap(Call("position", {haystack, needle}) + " > 0", top);
        }
        break;
      }
      case BinaryOp::kStartsWith: {
        std::string text = Render(a, false);
        std::string prefix = Render(b, false);
        switch (dialect_) {
          case Dialect::kDuckDb:
          case Dialect::kPostgres: return Call("starts_with", {text, prefix});
          case Dialect::kBigQuery: return Call("STARTS_WITH", {text, prefix});
          case Dialect::kClickHouse:  // startsWith is newer than 18.16
            return Wrap(Call("substring", {text, "1", Call("length", {prefix})}) + " = " + prefix, top);
        }
        break;
      }
      case BinaryOp::kConcat:
        if (ClickHouse()) return Call("concat", {Render(a, false), Render(b, false)});
        return Wrap(Render(a, false) + " || " + Render(b, false), top);
    }
    return "";
  }

  std::string AddDays(const ValueNode& value, const ValueNode& a, const ValueNode& b, bool top) {
    std::string x = Render(a, false);
    std::string days = Render(b, false);
    bool timestamp = a.type.kind == TypeKind::kTimestamp;
    switch (dialect_) {
      case Dialect::kDuckDb:
        if (timestamp) return Wrap(x + " + to_days(CAST(" + days + " AS INTEGER))", top);
        return Wrap(x + " + CAST(" + days + " AS INTEGER)", top);
      case Dialect::kPostgres:
        if (timestamp) return Wrap(x + " + " + days + " * INTERVAL '1 day'", top);
        return Wrap(x + " + CAST(" + days + " AS integer)", top);
      case Dialect::kBigQuery:
        return Call(timestamp ? "TIMESTAMP_ADD" : "DATE_ADD", {x, "INTERVAL " + days + " DAY"});
      case Dialect::kClickHouse: return Call("addDays", {x, days});
    }
    (void)value;
    return x;
  }

  std::string RenderKind(const ValueNode& value, const Cast& cast, bool) {
    const ValueNode& operand = *cast.operand;
    std::string x = Render(operand, true);
    if (ClickHouse() && value.type.kind == TypeKind::kDate && operand.type.kind == TypeKind::kTimestamp) {
      return Call("toDate", {x});
    }
    return RenderCast(dialect_, x, value.type);
  }

  std::string RenderKind(const ValueNode& value, const IfElseValue& if_else, bool) {
    bool as_float = value.type.kind == TypeKind::kFloat64;
    std::string then = as_float ? AsFloat(*if_else.then) : Render(*if_else.then, true);
    std::string otherwise = as_float ? AsFloat(*if_else.otherwise) : Render(*if_else.otherwise, true);
    return "CASE WHEN " + Render(*if_else.condition, true) + " THEN " + then + " ELSE " + otherwise + " END";
  }

  std::string RenderKind(const ValueNode& value, const CoalesceValue& coalesce, bool) {
    bool as_float = value.type.kind == TypeKind::kFloat64;
    std::vector<std::string> arguments;
    for (const auto& v : coalesce.values) arguments.push_back(as_float ? AsFloat(*v) : Render(*v, true));
    return Call(ClickHouse() ? "coalesce" : "COALESCE", arguments);
  }

  std::string RenderKind(const ValueNode&, const InList& in, bool top) {
    if (in.values.empty()) return ClickHouse() ? "0" : "FALSE";
    std::vector<std::string> values;
    for (const auto& v : in.values) values.push_back(Render(*v, true));
    return Wrap(Render(*in.operand, false) + " IN " + Call("", values), top);
  }

  std::string RenderKind(const ValueNode& value, const AggregateValue& aggregate, bool) {
    if (aggregate.fn == AggregateFn::kCountRows) return ClickHouse() ? "toInt64(count())" : "COUNT(*)";
    const ValueNode& operand = *aggregate.operand;
    std::string x = Render(operand, true);
    if (ClickHouse()) {
      std::string inner;
      switch (aggregate.fn) {
        case AggregateFn::kCount: return Call("toInt64", {Call("count", {x})});
        case AggregateFn::kNunique: return Call("toInt64", {Call("uniqExact", {x})});
        case AggregateFn::kSum: inner = Call("sum", {x}); break;
        case AggregateFn::kMean:
          inner = Call("avg", {operand.type.kind == TypeKind::kDecimal ? AsFloat(operand) : x});
          break;
        case AggregateFn::kMin: inner = Call("min", {x}); break;
        case AggregateFn::kMax: inner = Call("max", {x}); break;
        case AggregateFn::kCountRows: break;
      }
      // No input values yields NULL, as in the other dialects (ClickHouse gives 0 or nan).
      return "if(count(" + x + ") = 0, NULL, " + inner + ")";
    }
    switch (aggregate.fn) {
      case AggregateFn::kSum: {
        std::string sum = "SUM(" + x + ")";
        bool recast = (dialect_ == Dialect::kDuckDb && operand.type.kind == TypeKind::kInt64) ||
                      (dialect_ == Dialect::kPostgres && operand.type.kind != TypeKind::kFloat64);
        return recast ? RenderCast(dialect_, sum, value.type) : sum;
      }
      case AggregateFn::kMean: {
        std::string mean = "AVG(" + x + ")";
        bool recast = dialect_ == Dialect::kPostgres ||
                      (dialect_ == Dialect::kBigQuery && operand.type.kind == TypeKind::kDecimal);
        return recast ? RenderCast(dialect_, mean, value.type) : mean;
      }
      case AggregateFn::kMin: return "MIN(" + x + ")";
      case AggregateFn::kMax: return "MAX(" + x + ")";
      case AggregateFn::kCount: return "COUNT(" + x + ")";
      case AggregateFn::kNunique: return "COUNT(DISTINCT " + x + ")";
      case AggregateFn::kCountRows: break;
    }
    return x;
  }

  Dialect dialect_;
  const ColumnResolver& resolve_;
};

}  // namespace

std::string RenderCast(Dialect dialect, const std::string& sql, const DataType& type) {
  DataType shown = type;
  if (dialect != Dialect::kClickHouse) shown.nullable = false;
  return "CAST(" + sql + " AS " + WarehouseTypeName(dialect, shown) + ")";
}

std::string RenderLiteral(Dialect dialect, const rel::Literal& value, const DataType& type, bool exact) {
  return std::visit(
      [&](const auto& v) -> std::string {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          if (!exact) return "NULL";
          DataType nullable = type;
          nullable.nullable = true;
          return RenderCast(dialect, "NULL", nullable);
        }
        if constexpr (std::is_same_v<V, bool>) {
          if (dialect == Dialect::kClickHouse) return v ? "1" : "0";
          return v ? "TRUE" : "FALSE";
        }
        if constexpr (std::is_same_v<V, int64_t>) {
          if (v == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807 - 1)";
          return std::to_string(v);
        }
        if constexpr (std::is_same_v<V, double>) {
          if (!std::isfinite(v)) return NonFinite(dialect, v);
          std::string text = DoubleText(v);
          if (v < 0) text = "(" + text + ")";
          bool typed_by_cast = type.kind == TypeKind::kDecimal ||
                               (dialect == Dialect::kDuckDb || dialect == Dialect::kPostgres);
          if (exact && typed_by_cast) return RenderCast(dialect, text, DataType{type.kind, false, type.precision, type.scale});
          return text;
        }
        if constexpr (std::is_same_v<V, std::string>) return sql::QuoteString(dialect, v);
        if constexpr (std::is_same_v<V, Date>) return DateText(dialect, v, type.kind == TypeKind::kTimestamp);
      },
      value);
}

std::string RenderValue(Dialect dialect, const ValueNode& value, const ColumnResolver& resolve, bool top) {
  return Renderer(dialect, resolve).Render(value, top);
}

}  // namespace sluice::rel::detail
