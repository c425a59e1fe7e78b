// Describe: a table expression as indented text, one node a line (the input side of golden files).
#include "sql/relational/expr_nodes.hpp"
#include "sql/relational/printer.hpp"

namespace sluice::rel {

using namespace detail;

namespace {

std::string ShowSchema(const Schema& schema) {
  std::string out;
  for (const Field& field : schema.fields()) out += (out.empty() ? "" : ", ") + field.name + ": " + TypeName(field.type);
  return "[" + out + "]";
}

const char* JoinName(JoinKind kind) {
  switch (kind) {
    case JoinKind::kInner: return "inner";
    case JoinKind::kLeft: return "left";
    case JoinKind::kRight: return "right";
    case JoinKind::kOuter: return "outer";
    case JoinKind::kSemi: return "semi";
    case JoinKind::kAnti: return "anti";
    case JoinKind::kCross: return "cross";
  }
  return "?";
}

void DescribeNode(const TableNode& node, int depth, std::string& out) {
  std::string indent(static_cast<size_t>(depth) * 2, ' ');
  std::string line = std::visit(
      [&](const auto& op) -> std::string {
        using Op = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<Op, MemtableOp>) {
          std::string text = "memtable " + ShowSchema(node.schema) + ", " + std::to_string(op.rows.size()) + " rows";
          for (const auto& row : op.rows) {
            std::string values;
            for (size_t c = 0; c < row.size(); ++c) {
              ValueNode literal{LiteralValue{row[c]}, node.schema.fields()[c].type, false};
              values += (c ? ", " : "") + ShowValue(literal);
            }
            text += "\n" + indent + "  (" + values + ")";
          }
          return text;
        } else if constexpr (std::is_same_v<Op, TableRefOp>) {
          std::string name;
          for (const std::string* part : {&op.name.catalog, &op.name.name_space, &op.name.name}) {
            if (!part->empty()) name += (name.empty() ? "" : ".") + *part;
          }
          return "table " + name + " " + ShowSchema(node.schema);
        } else if constexpr (std::is_same_v<Op, FilterOp>) {
          return "filter " + ShowValue(*op.predicate);
        } else if constexpr (std::is_same_v<Op, ProjectOp>) {
          return op.verb + (op.shown.empty() ? "" : " " + op.shown) + " -> " + ShowSchema(node.schema);
        } else if constexpr (std::is_same_v<Op, AggregateOp>) {
          std::string keys;
          for (const std::string& key : op.keys) keys += (keys.empty() ? "" : ", ") + key;
          std::string metrics;
          for (const ProjectItem& metric : op.metrics) {
            metrics += (metrics.empty() ? "" : ", ") + metric.name + " = " + ShowValue(*metric.value);
          }
          return "aggregate" + (keys.empty() ? "" : " by " + keys) + ": " + metrics + " -> " + ShowSchema(node.schema);
        } else if constexpr (std::is_same_v<Op, JoinOp>) {
          std::string on;
          if (!op.keys.empty()) {
            for (const std::string& key : op.keys) on += (on.empty() ? "" : ", ") + key;
            on = " on " + on;
          } else if (op.predicate) {
            on = " on " + ShowValue(*op.predicate);
          }
          return std::string("join ") + JoinName(op.kind) + on + " -> " + ShowSchema(node.schema);
        } else if constexpr (std::is_same_v<Op, OrderByOp>) {
          std::string keys;
          for (const SortItem& key : op.keys) {
            keys += (keys.empty() ? "" : ", ") + ShowValue(*key.value) + (key.descending ? " desc" : "");
          }
          return "order_by " + keys;
        } else if constexpr (std::is_same_v<Op, LimitOp>) {
          return "limit " + std::to_string(op.count) + (op.offset ? " offset " + std::to_string(op.offset) : "");
        } else if constexpr (std::is_same_v<Op, UnionOp>) {
          return std::string(op.distinct ? "union distinct" : "union") + " -> " + ShowSchema(node.schema);
        } else {
          return "distinct";
        }
      },
      node.kind);
  out += indent + line + "\n";
  for (const TableNode* child : Children(node)) DescribeNode(*child, depth + 1, out);
}

}  // namespace

std::string Describe(const Table& table) {
  std::string out;
  DescribeNode(*table.node(), 0, out);
  return out;
}

}  // namespace sluice::rel
