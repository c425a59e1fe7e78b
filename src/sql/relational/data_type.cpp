// Types and schemas of relational expressions, and their names in Sluice and in each warehouse dialect.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <set>

#include "core/diagnostic.hpp"
#include "core/text.hpp"
#include "sql/relational/expr_nodes.hpp"
#include "sql/relational/printer.hpp"

namespace sluice::rel {
namespace {

std::optional<int> ParseInt(std::string_view text) {
  std::string trimmed(TrimBlanks(text));
  int value = 0;
  auto [end, error] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), value);
  if (error != std::errc() || end != trimmed.data() + trimmed.size()) return std::nullopt;
  return value;
}

// `inner` of `prefix(inner)` (prefix compared as given), or nullopt.
std::optional<std::string> Wrapped(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size() + 2 || text.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view rest = text.substr(prefix.size());
  size_t open = rest.find_first_not_of(' ');
  if (open == std::string_view::npos || rest[open] != '(' || rest.back() != ')') return std::nullopt;
  return std::string(rest.substr(open + 1, rest.size() - open - 2));
}

// Precision and scale of "P,S" (scale optional); nullopt when malformed or out of 1..38.
std::optional<std::pair<int, int>> DecimalArguments(std::string_view arguments) {
  size_t comma = arguments.find(',');
  std::optional<int> precision = ParseInt(arguments.substr(0, comma));
  std::optional<int> scale = comma == std::string_view::npos ? 0 : ParseInt(arguments.substr(comma + 1));
  if (!precision || !scale || *precision < 1 || *precision > 38 || *scale < 0 || *scale > *precision) {
    return std::nullopt;
  }
  return std::pair{*precision, *scale};
}

DataType Make(TypeKind kind, bool nullable, int precision = 0, int scale = 0) {
  return DataType{kind, nullable, precision, scale};
}

std::optional<DataType> DecimalType(std::string_view arguments, bool nullable) {
  auto decimal = DecimalArguments(arguments);
  if (!decimal) return std::nullopt;
  return Make(TypeKind::kDecimal, nullable, decimal->first, decimal->second);
}

// DuckDB, PostgreSQL and BigQuery spell types case-insensitively, with optional parameters; `lower` is lowercase.
std::optional<DataType> FromSqlStandardType(sql::Dialect dialect, const std::string& lower) {
  static const std::set<std::string> kInts = {"bigint",  "int8",     "long",    "integer", "int",      "int4",
                                              "signed",  "smallint", "int2",    "short",   "tinyint",  "int1",
                                              "hugeint", "ubigint",  "uinteger", "usmallint", "utinyint", "int64",
                                              "byteint", "serial",   "bigserial"};
  static const std::set<std::string> kFloats = {"double", "float8", "double precision", "real", "float4", "float",
                                                "float64"};
  static const std::set<std::string> kStrings = {"varchar", "text", "string", "char", "bpchar", "character",
                                                 "character varying", "nvarchar"};
  static const std::set<std::string> kTimestamps = {"timestamp",
                                                    "timestamp without time zone",
                                                    "timestamp with time zone",
                                                    "timestamptz",
                                                    "datetime",
                                                    "timestamp_s",
                                                    "timestamp_ms",
                                                    "timestamp_ns"};
  std::string base = lower;
  std::string arguments;
  if (size_t open = lower.find('('); open != std::string::npos && lower.back() == ')') {
    base = std::string(TrimBlanks(std::string_view(lower).substr(0, open)));
    arguments = lower.substr(open + 1, lower.size() - open - 2);
  }
  if (base == "decimal" || base == "numeric") {
    if (!arguments.empty()) return DecimalType(arguments, true);
    // Unparameterized: DuckDB's default is DECIMAL(18,3); PostgreSQL's and BigQuery's NUMERIC hold scale 9 here.
    return dialect == sql::Dialect::kDuckDb ? Make(TypeKind::kDecimal, true, 18, 3)
                                            : Make(TypeKind::kDecimal, true, 38, 9);
  }
  if (!arguments.empty() && !kStrings.count(base)) return std::nullopt;  // only VARCHAR(n) and the like
  if (kInts.count(base)) return Make(TypeKind::kInt64, true);
  if (kFloats.count(base)) return Make(TypeKind::kFloat64, true);
  if (kStrings.count(base)) return Make(TypeKind::kString, true);
  if (base == "date") return Make(TypeKind::kDate, true);
  if (kTimestamps.count(base)) return Make(TypeKind::kTimestamp, true);
  if (base == "boolean" || base == "bool" || base == "logical") return Make(TypeKind::kBool, true);
  return std::nullopt;
}

std::optional<DataType> FromClickHouseType(std::string_view text, bool nullable) {
  std::string type(TrimBlanks(text));
  if (auto inner = Wrapped(type, "Nullable")) return FromClickHouseType(*inner, true);
  if (auto inner = Wrapped(type, "LowCardinality")) return FromClickHouseType(*inner, nullable);
  if (auto inner = Wrapped(type, "Decimal")) return DecimalType(*inner, nullable);
  static const std::pair<const char*, int> kScaled[] = {{"Decimal32", 9}, {"Decimal64", 18}, {"Decimal128", 38}};
  for (const auto& [name, precision] : kScaled) {
    if (auto inner = Wrapped(type, name)) return DecimalType(std::to_string(precision) + "," + *inner, nullable);
  }
  if (Wrapped(type, "FixedString")) return Make(TypeKind::kString, nullable);
  if (Wrapped(type, "DateTime") || Wrapped(type, "DateTime64")) return Make(TypeKind::kTimestamp, nullable);
  static const std::set<std::string> kInts = {"Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64"};
  if (kInts.count(type)) return Make(TypeKind::kInt64, nullable);
  if (type == "Float32" || type == "Float64") return Make(TypeKind::kFloat64, nullable);
  if (type == "String") return Make(TypeKind::kString, nullable);
  if (type == "Date" || type == "Date32") return Make(TypeKind::kDate, nullable);
  if (type == "DateTime") return Make(TypeKind::kTimestamp, nullable);
  if (type == "Bool") return Make(TypeKind::kBool, nullable);
  return std::nullopt;
}

}  // namespace

DataType ParseType(std::string_view name) {
  std::string text = AsciiLower(TrimBlanks(name));
  bool nullable = true;
  if (!text.empty() && text[0] == '!') {
    nullable = false;
    text = std::string(TrimBlanks(std::string_view(text).substr(1)));
  }
  std::optional<DataType> type;
  if (text == "bool" || text == "boolean") type = Make(TypeKind::kBool, nullable);
  if (text == "int64") type = Make(TypeKind::kInt64, nullable);
  if (text == "float64") type = Make(TypeKind::kFloat64, nullable);
  if (text == "string") type = Make(TypeKind::kString, nullable);
  if (text == "date") type = Make(TypeKind::kDate, nullable);
  if (text == "timestamp") type = Make(TypeKind::kTimestamp, nullable);
  if (auto arguments = Wrapped(text, "decimal")) type = DecimalType(*arguments, nullable);
  if (!type) {
    detail::Fail("SLU-EXPR-005", "unknown type `" + std::string(name) + "`",
                 "use bool, int64, float64, decimal(P,S) with 1 <= P <= 38 and 0 <= S <= P, string, date or "
                 "timestamp, with a leading ! for a column that is never NULL");
  }
  return *type;
}

std::string TypeName(const DataType& type) {
  std::string name = type.nullable ? "" : "!";
  switch (type.kind) {
    case TypeKind::kBool: return name + "bool";
    case TypeKind::kInt64: return name + "int64";
    case TypeKind::kFloat64: return name + "float64";
    case TypeKind::kDecimal:
      return name + "decimal(" + std::to_string(type.precision) + "," + std::to_string(type.scale) + ")";
    case TypeKind::kString: return name + "string";
    case TypeKind::kDate: return name + "date";
    case TypeKind::kTimestamp: return name + "timestamp";
  }
  return name;
}

Schema::Schema(std::initializer_list<std::pair<std::string, std::string>> columns) {
  for (const auto& [name, type] : columns) fields_.push_back(Field{name, ParseType(type)});
}

Schema::Schema(std::vector<Field> fields) : fields_(std::move(fields)) {}

const Field* Schema::Find(std::string_view name) const {
  for (const Field& field : fields_) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

std::optional<DataType> FromWarehouseType(sql::Dialect dialect, std::string_view type) {
  if (dialect == sql::Dialect::kClickHouse) return FromClickHouseType(type, false);
  std::string lower = AsciiLower(TrimBlanks(type));
  // Collapse runs of spaces ("double  precision") and spaces around parentheses and commas.
  std::string compact;
  for (char c : lower) {
    if (c == ' ' && (compact.empty() || compact.back() == ' ' || compact.back() == '(' || compact.back() == ',')) {
      continue;
    }
    if ((c == '(' || c == ')' || c == ',') && !compact.empty() && compact.back() == ' ') compact.pop_back();
    compact += c;
  }
  return FromSqlStandardType(dialect, compact);
}

std::string WarehouseTypeName(sql::Dialect dialect, const DataType& type) {
  std::string decimal_arguments = std::to_string(type.precision) + ", " + std::to_string(type.scale);
  switch (dialect) {
    case sql::Dialect::kDuckDb:
      switch (type.kind) {
        case TypeKind::kBool: return "BOOLEAN";
        case TypeKind::kInt64: return "BIGINT";
        case TypeKind::kFloat64: return "DOUBLE";
        case TypeKind::kDecimal: return "DECIMAL(" + decimal_arguments + ")";
        case TypeKind::kString: return "VARCHAR";
        case TypeKind::kDate: return "DATE";
        case TypeKind::kTimestamp: return "TIMESTAMP";
      }
      break;
    case sql::Dialect::kPostgres:
      switch (type.kind) {
        case TypeKind::kBool: return "boolean";
        case TypeKind::kInt64: return "bigint";
        case TypeKind::kFloat64: return "double precision";
        case TypeKind::kDecimal: return "numeric(" + decimal_arguments + ")";
        case TypeKind::kString: return "text";
        case TypeKind::kDate: return "date";
        case TypeKind::kTimestamp: return "timestamp";
      }
      break;
    case sql::Dialect::kBigQuery:
      switch (type.kind) {
        case TypeKind::kBool: return "BOOL";
        case TypeKind::kInt64: return "INT64";
        case TypeKind::kFloat64: return "FLOAT64";
        case TypeKind::kDecimal: return "NUMERIC(" + decimal_arguments + ")";
        case TypeKind::kString: return "STRING";
        case TypeKind::kDate: return "DATE";
        case TypeKind::kTimestamp: return "TIMESTAMP";
      }
      break;
    case sql::Dialect::kClickHouse: {
      std::string name;
      switch (type.kind) {
        case TypeKind::kBool: name = "UInt8"; break;
        case TypeKind::kInt64: name = "Int64"; break;
        case TypeKind::kFloat64: name = "Float64"; break;
        case TypeKind::kDecimal: name = "Decimal(" + decimal_arguments + ")"; break;
        case TypeKind::kString: name = "String"; break;
        case TypeKind::kDate: name = "Date"; break;
        case TypeKind::kTimestamp: name = "DateTime"; break;
      }
      return type.nullable ? "Nullable(" + name + ")" : name;
    }
  }
  return "";
}

namespace detail {

std::optional<DataType> CommonType(const DataType& a, const DataType& b) {
  bool nullable = a.nullable || b.nullable;
  if (IsNumeric(a) && IsNumeric(b)) {
    if (a.kind == TypeKind::kFloat64 || b.kind == TypeKind::kFloat64) return Make(TypeKind::kFloat64, nullable);
    if (a.kind == TypeKind::kDecimal || b.kind == TypeKind::kDecimal) {
      // int64 needs 19 integer digits; otherwise keep the larger integer part and scale, capped at 38.
      int scale = std::max(a.kind == TypeKind::kDecimal ? a.scale : 0, b.kind == TypeKind::kDecimal ? b.scale : 0);
      int integer_digits = std::max(a.kind == TypeKind::kDecimal ? a.precision - a.scale : 19,
                                    b.kind == TypeKind::kDecimal ? b.precision - b.scale : 19);
      return Make(TypeKind::kDecimal, nullable, std::min(38, integer_digits + scale), scale);
    }
    return Make(TypeKind::kInt64, nullable);
  }
  if (IsTemporal(a) && IsTemporal(b)) {
    return Make(a.kind == b.kind ? a.kind : TypeKind::kTimestamp, nullable);
  }
  if (a.kind == b.kind) return Make(a.kind, nullable, a.precision, a.scale);
  return std::nullopt;
}

DataType TypeOfLiteral(const rel::Literal& value) {
  return std::visit(
      [](const auto& v) -> DataType {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) return Make(TypeKind::kString, true);
        if constexpr (std::is_same_v<V, bool>) return Make(TypeKind::kBool, false);
        if constexpr (std::is_same_v<V, int64_t>) return Make(TypeKind::kInt64, false);
        if constexpr (std::is_same_v<V, double>) return Make(TypeKind::kFloat64, false);
        if constexpr (std::is_same_v<V, std::string>) return Make(TypeKind::kString, false);
        if constexpr (std::is_same_v<V, Date>) return Make(TypeKind::kDate, false);
      },
      value);
}

std::optional<rel::Literal> ConvertLiteral(const rel::Literal& value, const DataType& type) {
  if (std::holds_alternative<std::monostate>(value)) return value;
  switch (type.kind) {
    case TypeKind::kBool:
      if (std::holds_alternative<bool>(value)) return value;
      break;
    case TypeKind::kInt64:
      if (std::holds_alternative<int64_t>(value)) return value;
      break;
    case TypeKind::kFloat64:
    case TypeKind::kDecimal:
      if (const auto* i = std::get_if<int64_t>(&value)) return static_cast<double>(*i);
      if (const auto* d = std::get_if<double>(&value)) {
        if (type.kind == TypeKind::kDecimal && !std::isfinite(*d)) return std::nullopt;
        return value;
      }
      break;
    case TypeKind::kString:
      if (std::holds_alternative<std::string>(value)) return value;
      break;
    case TypeKind::kDate:
    case TypeKind::kTimestamp:
      if (std::holds_alternative<Date>(value)) return value;
      break;
  }
  return std::nullopt;
}

}  // namespace detail
}  // namespace sluice::rel
