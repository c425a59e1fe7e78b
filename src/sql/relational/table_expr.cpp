// Tables: memtables, table references and the operations over them, each with its schema inferred and its
// arguments checked as it is built.
#include "sluice/relational.hpp"

#include <algorithm>
#include <set>

#include "core/closest_name.hpp"
#include "core/diagnostic.hpp"
#include "sql/relational/expr_nodes.hpp"

namespace sluice::rel {
namespace detail {

std::vector<const TableNode*> Children(const TableNode& node) {
  return std::visit(
      [](const auto& op) -> std::vector<const TableNode*> {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, MemtableOp> || std::is_same_v<Op, TableRefOp>) {
          return {};
        } else if constexpr (std::is_same_v<Op, JoinOp> || std::is_same_v<Op, UnionOp>) {
          return {op.left.get(), op.right.get()};
        } else {
          return {op.parent.get()};
        }
      },
      node.kind);
}

bool ColumnReaches(const TableNode& node, const TableNode* ancestor, std::string_view column) {
  if (&node == ancestor) return node.schema.Find(column) != nullptr;
  return std::visit(
      [&](const auto& op) -> bool {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, FilterOp> || std::is_same_v<Op, OrderByOp> || std::is_same_v<Op, LimitOp> ||
                      std::is_same_v<Op, DistinctOp>) {
          return ColumnReaches(*op.parent, ancestor, column);
        } else if constexpr (std::is_same_v<Op, ProjectOp>) {
          for (const ProjectItem& item : op.items) {
            if (item.name != column) continue;
            const auto* ref = std::get_if<ColumnRef>(&item.value->kind);
            return ref != nullptr && ref->name == column && ColumnReaches(*op.parent, ancestor, column);
          }
          return false;
        } else {
          return false;
        }
      },
      node.kind);
}

}  // namespace detail

using namespace detail;

namespace {

[[noreturn]] void UnknownColumn(const Schema& schema, std::string_view column) {
  std::vector<std::string> names;
  for (const Field& field : schema.fields()) names.push_back(field.name);
  const std::optional<std::string> best = ClosestName(column, names);
  Fail("SLU-EXPR-001", "unknown column `" + std::string(column) + "`; the table has: " + ColumnList(schema),
       best ? "did you mean `" + *best + "`?" : "use one of the table's columns");
}

const Field& FieldOf(const Schema& schema, std::string_view column) {
  const Field* field = schema.Find(column);
  if (field == nullptr) UnknownColumn(schema, column);
  return *field;
}

Table MakeTable(TableKind kind, Schema schema) {
  return Table(std::make_shared<const TableNode>(TableNode{std::move(kind), std::move(schema)}));
}

// Checks that every column of `value` belongs to `table` (or, for a join predicate, to `other` too).
void RequireColumnsOf(const Value& value, const TableNode& table, const TableNode* other, const std::string& where) {
  ForEachColumn(*value.node(), [&](const ColumnRef& ref, bool) {
    if (ColumnReaches(table, ref.table.get(), ref.name)) return;
    if (other != nullptr && ColumnReaches(*other, ref.table.get(), ref.name)) return;
    Fail("SLU-EXPR-003",
         "the value `" + ShowValue(*value.node()) + "` in " + where + " uses column `" + ref.name +
             "` of another table",
         other != nullptr ? "a join predicate may use columns of its two tables only"
                          : "take the column from the table this operation applies to (t[\"" + ref.name +
                                "\"]), or join the other table first");
  });
}

void RequireRowValue(const Value& value, const std::string& where) {
  if (value.node()->has_aggregate) {
    Fail("SLU-EXPR-007", "aggregate `" + ShowValue(*value.node()) + "` in " + where,
         "aggregates belong in aggregate() (or group_by(...).aggregate())");
  }
}

void RequireUniqueNames(const std::vector<std::string>& names, const std::string& where) {
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty()) Fail("SLU-EXPR-009", "empty column name in " + where, "give every output column a name");
    if (!seen.insert(name).second) {
      Fail("SLU-EXPR-008", "duplicate output column `" + name + "` in " + where,
           "give each output column its own name (rename one of them)");
    }
  }
}

Schema CheckedSchema(std::vector<Field> fields, const std::string& where) {
  std::vector<std::string> names;
  for (const Field& field : fields) names.push_back(field.name);
  RequireUniqueNames(names, where);
  return Schema(std::move(fields));
}

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

Table Project(const Table& parent, std::vector<ProjectItem> items, std::string verb, std::string shown) {
  std::vector<Field> fields;
  for (const ProjectItem& item : items) fields.push_back(Field{item.name, item.value->type});
  Schema schema = CheckedSchema(std::move(fields), verb);
  return MakeTable(ProjectOp{parent.node(), std::move(items), std::move(verb), std::move(shown)}, std::move(schema));
}

std::vector<ProjectItem> NamedItems(const Table& table, const std::vector<NamedValue>& values, const std::string& verb) {
  std::vector<ProjectItem> items;
  for (const NamedValue& named : values) {
    std::string name = named.name;
    if (name.empty()) {
      std::optional<std::string> default_name = named.value.default_name();
      if (!default_name) {
        Fail("SLU-EXPR-009", "the value `" + ShowValue(*named.value.node()) + "` in " + verb + " has no name",
             "name computed values: {\"name\", value}");
      }
      name = *default_name;
    }
    RequireColumnsOf(named.value, *table.node(), nullptr, verb);
    RequireRowValue(named.value, verb);
    items.push_back(ProjectItem{name, named.value.node()});
  }
  return items;
}

std::string ShowItems(const std::vector<ProjectItem>& items) {
  std::string out;
  for (const ProjectItem& item : items) {
    std::string shown = ShowValue(*item.value);
    out += (out.empty() ? "" : ", ") + (shown == item.name ? shown : item.name + " = " + shown);
  }
  return out;
}

Table Aggregated(const Table& table, std::vector<std::string> keys, const std::vector<NamedValue>& metrics) {
  std::vector<Field> fields;
  for (const std::string& key : keys) fields.push_back(FieldOf(table.schema(), key));
  if (keys.empty() && metrics.empty()) {
    Fail("SLU-EXPR-009", "aggregate with no metrics", "give aggregate at least one metric, e.g. {\"n\", CountRows()}");
  }
  std::vector<ProjectItem> items;
  for (const NamedValue& metric : metrics) {
    if (metric.name.empty()) {
      Fail("SLU-EXPR-009", "the metric `" + ShowValue(*metric.value.node()) + "` has no name",
           "name each metric: {\"total\", t[\"amount\"].sum()}");
    }
    RequireColumnsOf(metric.value, *table.node(), nullptr, "aggregate");
    ForEachColumn(*metric.value.node(), [&](const ColumnRef& ref, bool in_aggregate) {
      if (in_aggregate || std::find(keys.begin(), keys.end(), ref.name) != keys.end()) return;
      Fail("SLU-EXPR-007",
           "the metric `" + metric.name + "` uses column `" + ref.name + "` outside an aggregate",
           keys.empty() ? "wrap the column in an aggregate (sum, min, max …)"
                        : "wrap the column in an aggregate, or group by it");
    });
    if (!metric.value.node()->has_aggregate && !std::holds_alternative<ColumnRef>(metric.value.node()->kind)) {
      bool any_column = false;
      ForEachColumn(*metric.value.node(), [&](const ColumnRef&, bool) { any_column = true; });
      if (!any_column) {
        Fail("SLU-EXPR-007", "the metric `" + metric.name + "` is not an aggregate",
             "a metric aggregates rows: sum, mean, min, max, count, nunique or CountRows()");
      }
    }
    fields.push_back(Field{metric.name, metric.value.type()});
    items.push_back(ProjectItem{metric.name, metric.value.node()});
  }
  Schema schema = CheckedSchema(std::move(fields), "aggregate");
  return MakeTable(AggregateOp{table.node(), std::move(keys), std::move(items)}, std::move(schema));
}


}  // namespace

Value Table::operator[](std::string_view column) const {
  const Field& field = FieldOf(schema(), column);
  return Value(std::make_shared<const ValueNode>(ValueNode{ColumnRef{node_, field.name}, field.type, false}));
}

const Schema& Table::schema() const { return node_->schema; }

Table Table::filter(Value predicate) const {
  if (predicate.type().kind != TypeKind::kBool) {
    Fail("SLU-EXPR-002",
         "type mismatch: filter predicate `" + ShowValue(*predicate.node()) + "` is " + TypeName(predicate.type()) +
             ", not bool",
         "filter by a comparison, e.g. t[\"amount\"] > 0");
  }
  RequireColumnsOf(predicate, *node_, nullptr, "filter");
  RequireRowValue(predicate, "filter");
  return MakeTable(FilterOp{node_, predicate.node()}, schema());
}

Table Table::select(std::vector<std::string> columns) const {
  std::vector<NamedValue> values;
  for (const std::string& column : columns) values.push_back(NamedValue{column, (*this)[column]});
  return select(std::move(values));
}

Table Table::select(std::vector<NamedValue> values) const {
  if (values.empty()) Fail("SLU-EXPR-009", "select of no columns", "select at least one column");
  std::vector<ProjectItem> items = NamedItems(*this, values, "select");
  std::string shown = ShowItems(items);
  return Project(*this, std::move(items), "select", std::move(shown));
}

Table Table::mutate(std::vector<NamedValue> values) const {
  if (values.empty()) Fail("SLU-EXPR-009", "mutate of no columns", "give mutate at least one {name, value}");
  std::vector<ProjectItem> added = NamedItems(*this, values, "mutate");
  std::vector<std::string> names;
  for (const ProjectItem& item : added) names.push_back(item.name);
  RequireUniqueNames(names, "mutate");
  std::vector<ProjectItem> items;
  for (const Field& field : schema().fields()) {
    auto replaced = std::find_if(added.begin(), added.end(), [&](const ProjectItem& i) { return i.name == field.name; });
    items.push_back(replaced != added.end() ? *replaced : ProjectItem{field.name, (*this)[field.name].node()});
  }
  for (const ProjectItem& item : added) {
    if (schema().Find(item.name) == nullptr) items.push_back(item);
  }
  return Project(*this, std::move(items), "mutate", ShowItems(added));
}

Table Table::drop(std::vector<std::string> columns) const {
  for (const std::string& column : columns) FieldOf(schema(), column);
  std::vector<ProjectItem> items;
  for (const Field& field : schema().fields()) {
    if (std::find(columns.begin(), columns.end(), field.name) == columns.end()) {
      items.push_back(ProjectItem{field.name, (*this)[field.name].node()});
    }
  }
  if (items.empty()) Fail("SLU-EXPR-009", "drop of every column", "keep at least one column");
  return Project(*this, std::move(items), "drop", Joined(columns));
}

Table Table::rename(std::vector<std::pair<std::string, std::string>> old_to_new) const {
  std::string shown;
  for (const auto& [from, to] : old_to_new) {
    FieldOf(schema(), from);
    shown += (shown.empty() ? "" : ", ") + from + " -> " + to;
  }
  std::vector<ProjectItem> items;
  for (const Field& field : schema().fields()) {
    std::string name = field.name;
    for (const auto& [from, to] : old_to_new) {
      if (from == field.name) name = to;
    }
    items.push_back(ProjectItem{name, (*this)[field.name].node()});
  }
  return Project(*this, std::move(items), "rename", shown);
}

GroupedTable Table::group_by(std::vector<std::string> keys) const {
  if (keys.empty()) Fail("SLU-EXPR-009", "group_by with no keys", "call aggregate() on the table for one row");
  for (const std::string& key : keys) FieldOf(schema(), key);
  RequireUniqueNames(keys, "group_by");
  return GroupedTable(*this, std::move(keys));
}

Table GroupedTable::aggregate(std::vector<NamedValue> metrics) const { return Aggregated(table_, keys_, metrics); }

Table Table::aggregate(std::vector<NamedValue> metrics) const {
  if (metrics.empty()) {
    Fail("SLU-EXPR-009", "aggregate with no metrics", "give aggregate at least one metric, e.g. {\"n\", CountRows()}");
  }
  return Aggregated(*this, {}, metrics);
}

namespace {

// The output columns of a join: the left's, then the right's (renamed on collision); for a join by names the
// keys once, taken from the side that always has them.
std::vector<JoinColumn> JoinColumns(const Schema& left, const Schema& right, JoinKind kind,
                                    const std::vector<std::string>& keys) {
  std::vector<JoinColumn> columns;
  if (kind == JoinKind::kSemi || kind == JoinKind::kAnti) {
    for (const Field& field : left.fields()) columns.push_back(JoinColumn{field.name, JoinSide::kLeft, field.name});
    return columns;
  }
  auto is_key = [&](const std::string& name) { return std::find(keys.begin(), keys.end(), name) != keys.end(); };
  JoinSide key_side = kind == JoinKind::kRight ? JoinSide::kRight
                      : kind == JoinKind::kOuter ? JoinSide::kBoth
                                                 : JoinSide::kLeft;
  for (const Field& field : left.fields()) {
    columns.push_back(JoinColumn{field.name, is_key(field.name) ? key_side : JoinSide::kLeft, field.name});
  }
  for (const Field& field : right.fields()) {
    if (is_key(field.name)) continue;
    std::string name = left.Find(field.name) != nullptr ? field.name + "_right" : field.name;
    columns.push_back(JoinColumn{name, JoinSide::kRight, field.name});
  }
  return columns;
}

Schema JoinSchema(const Schema& left, const Schema& right, JoinKind kind, const std::vector<JoinColumn>& columns) {
  bool left_nullable = kind == JoinKind::kRight || kind == JoinKind::kOuter;
  bool right_nullable = kind == JoinKind::kLeft || kind == JoinKind::kOuter;
  std::vector<Field> fields;
  for (const JoinColumn& column : columns) {
    DataType type;
    if (column.side == JoinSide::kLeft) {
      type = left.Find(column.source)->type;
      if (left_nullable) type.nullable = true;
    } else if (column.side == JoinSide::kRight) {
      type = right.Find(column.source)->type;
      if (right_nullable) type.nullable = true;
    } else {
      type = *detail::CommonType(left.Find(column.source)->type, right.Find(column.source)->type);
    }
    fields.push_back(Field{column.name, type});
  }
  return CheckedSchema(std::move(fields), "join");
}

void RequireDistinctSides(const TableNode& left, const TableNode& right) {
  if (&left == &right) {
    Fail("SLU-EXPR-009", "join of a table with itself",
         "join with a view of it, t.join(t.view(), …), so each value says which side it comes from");
  }
}

Table MakeJoin(const Table& left, const Table& right, JoinKind kind, ValuePtr predicate, std::vector<std::string> keys) {
  std::vector<JoinColumn> columns = JoinColumns(left.schema(), right.schema(), kind, keys);
  Schema schema = JoinSchema(left.schema(), right.schema(), kind, columns);
  return MakeTable(JoinOp{left.node(), right.node(), kind, std::move(predicate), std::move(keys), std::move(columns)},
                   std::move(schema));
}

}  // namespace

Table Table::join(const Table& right, Value predicate, JoinKind kind) const {
  RequireDistinctSides(*node_, *right.node());
  if (kind == JoinKind::kCross) {
    Fail("SLU-EXPR-009", "a cross join takes no predicate", "use cross_join(right)");
  }
  if (predicate.type().kind != TypeKind::kBool) {
    Fail("SLU-EXPR-002",
         "type mismatch: join predicate `" + ShowValue(*predicate.node()) + "` is " + TypeName(predicate.type()) +
             ", not bool",
         "join on a comparison, e.g. left[\"id\"] == right[\"id\"]");
  }
  RequireColumnsOf(predicate, *node_, right.node().get(), "join");
  RequireRowValue(predicate, "join");
  return MakeJoin(*this, right, kind, predicate.node(), {});
}

Table Table::join(const Table& right, std::vector<std::string> on, JoinKind kind) const {
  RequireDistinctSides(*node_, *right.node());
  if (kind == JoinKind::kCross) Fail("SLU-EXPR-009", "a cross join takes no key columns", "use cross_join(right)");
  if (on.empty()) Fail("SLU-EXPR-009", "join on no key columns", "name at least one column both tables have");
  RequireUniqueNames(on, "join keys");
  std::optional<Value> predicate;
  for (const std::string& key : on) {
    Value equal = (*this)[key] == right[key];
    predicate = predicate ? *predicate && equal : equal;
  }
  return MakeJoin(*this, right, kind, predicate->node(), std::move(on));
}

Table Table::cross_join(const Table& right) const {
  RequireDistinctSides(*node_, *right.node());
  return MakeJoin(*this, right, JoinKind::kCross, nullptr, {});
}

Table Table::order_by(std::vector<SortKey> keys) const {
  if (keys.empty()) Fail("SLU-EXPR-009", "order_by with no keys", "give order_by at least one value");
  std::vector<SortItem> items;
  for (const SortKey& key : keys) {
    RequireColumnsOf(key.value, *node_, nullptr, "order_by");
    RequireRowValue(key.value, "order_by");
    items.push_back(SortItem{key.value.node(), key.descending});
  }
  return MakeTable(OrderByOp{node_, std::move(items)}, schema());
}

Table Table::limit(int64_t n, int64_t offset) const {
  if (n < 0 || offset < 0) {
    Fail("SLU-EXPR-009",
         "limit " + std::to_string(n) + " offset " + std::to_string(offset) + ": negative row count",
         "give limit a count and an offset of 0 or more");
  }
  return MakeTable(LimitOp{node_, n, offset}, schema());
}

Table Table::union_(const Table& other, bool distinct) const {
  const auto& a = schema().fields();
  const auto& b = other.schema().fields();
  bool same = a.size() == b.size();
  std::vector<Field> fields;
  for (size_t i = 0; same && i < a.size(); ++i) {
    same = a[i].name == b[i].name && a[i].type.kind == b[i].type.kind && a[i].type.precision == b[i].type.precision &&
           a[i].type.scale == b[i].type.scale;
    if (same) fields.push_back(Field{a[i].name, a[i].type.nullable ? a[i].type : b[i].type});
  }
  if (!same) {
    auto show = [](const Schema& s) {
      std::string out;
      for (const Field& f : s.fields()) out += (out.empty() ? "" : ", ") + f.name + " " + TypeName(f.type);
      return "(" + out + ")";
    };
    Fail("SLU-EXPR-006", "union of different schemas: " + show(schema()) + " and " + show(other.schema()),
         "select the same columns, in the same order and of the same types, on both sides (cast where needed)");
  }
  return MakeTable(UnionOp{node_, other.node(), distinct}, Schema(std::move(fields)));
}

Table Table::distinct() const { return MakeTable(DistinctOp{node_}, schema()); }

Table Table::view() const {
  std::vector<ProjectItem> items;
  for (const Field& field : schema().fields()) items.push_back(ProjectItem{field.name, (*this)[field.name].node()});
  return Project(*this, std::move(items), "view", "");
}

Table Memtable(std::vector<Row> rows, Schema schema) {
  if (schema.size() == 0) Fail("SLU-EXPR-009", "memtable with no columns", "give the memtable a schema");
  Schema checked = CheckedSchema(schema.fields(), "memtable schema");
  std::vector<std::vector<rel::Literal>> values;
  for (size_t r = 0; r < rows.size(); ++r) {
    std::string where = "memtable row " + std::to_string(r + 1);
    std::vector<std::optional<rel::Literal>> row(checked.size());
    for (const auto& [name, value] : rows[r]) {
      auto field = std::find_if(checked.fields().begin(), checked.fields().end(),
                                [&](const Field& f) { return f.name == name; });
      if (field == checked.fields().end()) {
        Fail("SLU-EXPR-004", where + " has column `" + name + "`, which the schema lacks",
             "the schema has: " + ColumnList(checked));
      }
      size_t index = static_cast<size_t>(field - checked.fields().begin());
      if (row[index]) Fail("SLU-EXPR-004", where + " gives column `" + name + "` twice", "give each column once");
      std::optional<rel::Literal> converted = ConvertLiteral(value, field->type);
      if (!converted) {
        Fail("SLU-EXPR-004",
             where + ": column `" + name + "` is " + TypeName(field->type) + ", not " +
                 TypeName(TypeOfLiteral(value)).substr(1),
             "give a value of the column's type (a Date for date and timestamp columns)");
      }
      if (std::holds_alternative<std::monostate>(*converted) && !field->type.nullable) {
        Fail("SLU-EXPR-004", where + ": NULL in column `" + name + "`, which is " + TypeName(field->type),
             "give a value, or declare the column nullable (drop the leading !)");
      }
      row[index] = std::move(converted);
    }
    std::vector<rel::Literal> complete;
    for (size_t c = 0; c < row.size(); ++c) {
      if (!row[c]) {
        Fail("SLU-EXPR-004", where + " lacks column `" + checked.fields()[c].name + "`",
             "give every column of the schema (NULL as std::monostate{})");
      }
      complete.push_back(std::move(*row[c]));
    }
    values.push_back(std::move(complete));
  }
  return MakeTable(MemtableOp{std::move(values)}, std::move(checked));
}

Table TableRef(TableName name, Schema schema) {
  if (name.name.empty()) Fail("SLU-EXPR-009", "table reference with no name", "name the relation");
  if (schema.size() == 0) {
    Fail("SLU-EXPR-009", "table reference " + name.name + " with no columns", "give the relation's schema");
  }
  Schema checked = CheckedSchema(schema.fields(), "the schema of " + name.name);
  return MakeTable(TableRefOp{std::move(name)}, std::move(checked));
}

}  // namespace sluice::rel
