// Lowering a table expression into SELECT statements of one dialect (ToSql).
//
// Each table node becomes a Query: a FROM source plus the clauses stacked on it. An operation is fused into the
// Query below it when SQL evaluates the clauses in that order anyway (a filter is a WHERE, or a HAVING over a
// grouped query; a projection replaces the select list, its names mapped to the expressions they stand for, so a
// later filter can use them), and otherwise the Query below becomes a subquery. A node reached twice from the root
// is lowered once, as a CTE (ClickHouse 18.16 has no table CTEs: there it is repeated as a subquery).
#include <map>
#include <set>

#include "core/diagnostic.hpp"
#include "sql/dialect.hpp"
#include "sql/relational/printer.hpp"
#include "sql/relational/value_sql.hpp"

namespace sluice::rel {

using namespace detail;

namespace {

using sql::Dialect;

struct Query {
  std::string from;   // a relation name, or "(\n…\n)"; empty: no FROM
  std::string alias;  // of the FROM source; empty for a join or no FROM
  bool bare = true;   // nothing but the FROM source
  std::vector<std::pair<std::string, std::string>> items;  // name → SQL; empty: SELECT *
  std::map<std::string, std::string> env;                  // output column → SQL over the FROM source
  std::set<std::string> from_columns;  // unqualified names the FROM source offers (where an alias could shadow one)
  std::vector<std::string> where;
  std::vector<std::string> group_by;
  bool aggregated = false;
  std::vector<std::string> having;
  std::vector<std::string> order_by;
  std::optional<int64_t> limit;
  int64_t offset = 0;
  bool distinct = false;
};

class Lowering {
 public:
  explicit Lowering(Dialect dialect) : dialect_(dialect) {}

  std::string Statement(const TableNode& root) {
    CountUses(root);
    Query query = Lower(root);
    std::string sql;
    if (!ctes_.empty()) {
      sql = "WITH ";
      for (size_t i = 0; i < ctes_.size(); ++i) sql += (i ? ",\n" : "") + ctes_[i];
      sql += "\n";
    }
    sql += Render(query);
    if (join_use_nulls_) sql += "\nSETTINGS join_use_nulls = 1";
    return sql;
  }

 private:
  bool ClickHouse() const { return dialect_ == Dialect::kClickHouse; }
  std::string Quote(const std::string& name) const { return sql::QuoteIdentifier(dialect_, name); }
  std::string NextAlias() { return "t" + std::to_string(next_alias_++); }

  void CountUses(const TableNode& node) {
    if (uses_[&node]++ > 0) return;
    for (const TableNode* child : Children(node)) CountUses(*child);
  }

  Query Source(std::string from, std::string alias, const Schema& schema) {
    Query query;
    query.from = std::move(from);
    query.alias = std::move(alias);
    for (const Field& field : schema.fields()) {
      query.env[field.name] = Quote(field.name);
      query.from_columns.insert(field.name);
    }
    return query;
  }

  static std::string Parenthesized(const std::string& sql) { return "(\n" + sql + "\n)"; }

  Query Wrap(const Query& inner, const Schema& schema) {
    return Source(Parenthesized(Render(inner)), NextAlias(), schema);
  }

  std::string Render(const Query& q) const {
    std::string sql = q.distinct ? "SELECT DISTINCT " : "SELECT ";
    if (q.items.empty()) {
      sql += "*";
    } else {
      for (size_t i = 0; i < q.items.size(); ++i) {
        const auto& [name, text] = q.items[i];
        sql += (i ? ", " : "") + (text == Quote(name) ? text : text + " AS " + Quote(name));
      }
    }
    if (!q.from.empty()) sql += "\nFROM " + q.from + (q.alias.empty() ? "" : " AS " + q.alias);
    auto clause = [&](const char* keyword, const std::vector<std::string>& parts, const char* separator) {
      if (parts.empty()) return;
      sql += std::string("\n") + keyword + " ";
      bool conjunction = std::string_view(separator) == " AND " && parts.size() > 1;
      for (size_t i = 0; i < parts.size(); ++i) {
        sql += (i ? separator : "") + (conjunction ? "(" + parts[i] + ")" : parts[i]);
      }
    };
    clause("WHERE", q.where, " AND ");
    clause("GROUP BY", q.group_by, ", ");
    clause("HAVING", q.having, " AND ");
    clause("ORDER BY", q.order_by, ", ");
    if (q.limit) sql += "\nLIMIT " + std::to_string(*q.limit);
    if (q.offset > 0) sql += (q.limit ? " OFFSET " : "\nOFFSET ") + std::to_string(q.offset);
    return sql;
  }

  // Whether an output name of `q` is also an unqualified FROM column it does not stand for: ORDER BY would read
  // the bare name as the output column.
  bool Shadows(const Query& q) const {
    for (const auto& [name, text] : q.items) {
      if (q.from_columns.count(name) && text != Quote(name)) return true;
    }
    return false;
  }

  std::string RenderOver(const Query& q, const ValueNode& value) {
    // A name that stands for an expression is parenthesized where it is used as an operand.
    ColumnResolver resolve = [&](const ColumnRef& ref) {
      const std::string& text = q.env.at(ref.name);
      bool plain = text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.\"`") ==
                   std::string::npos;
      return plain ? text : "(" + text + ")";
    };
    return RenderValue(dialect_, value, resolve);
  }

  Query Lower(const TableNode& node) {
    bool shared = uses_[&node] > 1 && !std::holds_alternative<TableRefOp>(node.kind) && !ClickHouse();
    if (shared) {
      auto named = cte_names_.find(&node);
      if (named == cte_names_.end()) {
        Query body = LowerNode(node);
        std::string name = NextAlias();
        ctes_.push_back(name + " AS " + Parenthesized(Render(body)));
        named = cte_names_.emplace(&node, name).first;
      }
      return Source(named->second, "", node.schema);
    }
    return LowerNode(node);
  }

  Query LowerNode(const TableNode& node) {
    return std::visit([&](const auto& op) { return LowerOp(node, op); }, node.kind);
  }

  Query LowerOp(const TableNode& node, const TableRefOp& op) {
    std::string name;
    if (dialect_ == Dialect::kBigQuery) {
      for (const std::string* part : {&op.name.catalog, &op.name.name_space, &op.name.name}) {
        if (!part->empty()) name += (name.empty() ? "" : ".") + *part;
      }
      name = Quote(name);
    } else {
      name = op.name.name_space.empty() ? Quote(op.name.name)
                                        : sql::QualifiedName(dialect_, op.name.name_space, op.name.name);
    }
    return Source(name, "", node.schema);
  }

  Query LowerOp(const TableNode& node, const MemtableOp& op) {
    return Source(Parenthesized(MemtableSql(node.schema, op)), NextAlias(), node.schema);
  }

  std::string MemtableSql(const Schema& schema, const MemtableOp& op) {
    const auto& fields = schema.fields();
    auto literal = [&](const rel::Literal& value, const DataType& type) {
      return RenderLiteral(dialect_, value, type, false);
    };
    if (dialect_ == Dialect::kBigQuery) {
      std::string type = "ARRAY<STRUCT<";
      for (size_t c = 0; c < fields.size(); ++c) {
        DataType shown = fields[c].type;
        type += (c ? ", " : "") + Quote(fields[c].name) + " " + WarehouseTypeName(dialect_, shown);
      }
      type += ">>";
      std::string rows;
      for (size_t r = 0; r < op.rows.size(); ++r) {
        rows += std::string(r ? ",\n" : "\n") + "STRUCT(";
        for (size_t c = 0; c < fields.size(); ++c) rows += (c ? ", " : "") + literal(op.rows[r][c], fields[c].type);
        rows += ")";
      }
      return "SELECT *\nFROM UNNEST(" + type + "[" + rows + (rows.empty() ? "" : "\n") + "])";
    }
    if (op.rows.empty() || ClickHouse()) {
      // One typed SELECT a row (ClickHouse has no VALUES list in a FROM); no rows: one that yields none.
      std::vector<std::string> selects;
      size_t count = std::max<size_t>(op.rows.size(), 1);
      for (size_t r = 0; r < count; ++r) {
        std::string select = "SELECT ";
        for (size_t c = 0; c < fields.size(); ++c) {
          std::string value = op.rows.empty() ? EmptyValue(fields[c].type) : literal(op.rows[r][c], fields[c].type);
          select += (c ? ", " : "") + RenderCast(dialect_, value, fields[c].type) + " AS " + Quote(fields[c].name);
        }
        selects.push_back(select);
      }
      std::string sql;
      for (size_t i = 0; i < selects.size(); ++i) sql += (i ? "\nUNION ALL\n" : "") + selects[i];
      if (op.rows.empty()) sql += ClickHouse() ? " WHERE 0" : " WHERE FALSE";
      return sql;
    }
    std::string alias = NextAlias();
    std::string select = "SELECT ";
    std::string names;
    for (size_t c = 0; c < fields.size(); ++c) {
      select += (c ? ", " : "") + RenderCast(dialect_, Quote(fields[c].name), fields[c].type) + " AS " +
                Quote(fields[c].name);
      names += (c ? ", " : "") + Quote(fields[c].name);
    }
    std::string values;
    for (size_t r = 0; r < op.rows.size(); ++r) {
      values += std::string(r ? ",\n" : "\n") + "(";
      for (size_t c = 0; c < fields.size(); ++c) values += (c ? ", " : "") + literal(op.rows[r][c], fields[c].type);
      values += ")";
    }
    return select + "\nFROM (VALUES" + values + "\n) AS " + alias + "(" + names + ")";
  }

  // A value of `type` for the typed SELECT of an empty memtable (ClickHouse cannot cast NULL to a non-Nullable).
  std::string EmptyValue(const DataType& type) const {
    if (!ClickHouse() || type.nullable) return "NULL";
    switch (type.kind) {
      case TypeKind::kString: return "''";
      case TypeKind::kDate: return "toDate('1970-01-01')";
      case TypeKind::kTimestamp: return "toDateTime('1970-01-01 00:00:00')";
      default: return "0";
    }
  }

  Query LowerOp(const TableNode& node, const FilterOp& op) {
    Query q = Lower(*op.parent);
    if (q.limit || q.distinct || (q.aggregated && q.group_by.empty())) q = Wrap(q, op.parent->schema);
    std::string predicate = RenderOver(q, *op.predicate);
    (q.aggregated ? q.having : q.where).push_back(predicate);
    q.bare = false;
    (void)node;
    return q;
  }

  Query LowerOp(const TableNode& node, const ProjectOp& op) {
    Query q = Lower(*op.parent);
    if (q.distinct) q = Wrap(q, op.parent->schema);
    std::vector<std::pair<std::string, std::string>> items;
    for (const ProjectItem& item : op.items) {
      std::string text = RenderOver(q, *item.value);
      const auto* literal = std::get_if<LiteralValue>(&item.value->kind);
      if (literal != nullptr && !std::holds_alternative<std::string>(literal->value) &&
          !std::holds_alternative<Date>(literal->value) && !std::holds_alternative<std::monostate>(literal->value)) {
        text = RenderCast(dialect_, text, item.value->type);  // so the column has exactly its type
      }
      items.emplace_back(item.name, text);
    }
    Query fused = q;
    fused.items = items;
    fused.env.clear();
    for (const auto& [name, text] : items) fused.env[name] = text;
    fused.bare = false;
    if ((!q.order_by.empty() || q.limit) && Shadows(fused)) {
      // Re-render over the subquery: the projection's names would capture the ORDER BY's.
      Query wrapped = Wrap(q, op.parent->schema);
      wrapped.items.clear();
      for (const ProjectItem& item : op.items) wrapped.items.emplace_back(item.name, RenderOver(wrapped, *item.value));
      wrapped.env.clear();
      for (const auto& [name, text] : wrapped.items) wrapped.env[name] = text;
      wrapped.bare = false;
      return wrapped;
    }
    (void)node;
    return fused;
  }

  Query LowerOp(const TableNode& node, const AggregateOp& op) {
    Query q = Lower(*op.parent);
    if (q.limit || q.distinct || q.aggregated) q = Wrap(q, op.parent->schema);
    q.order_by.clear();  // an aggregate's rows have no order
    std::vector<std::pair<std::string, std::string>> items;
    for (const std::string& key : op.keys) {
      items.emplace_back(key, q.env.at(key));
      q.group_by.push_back(q.env.at(key));
    }
    for (const ProjectItem& metric : op.metrics) items.emplace_back(metric.name, RenderOver(q, *metric.value));
    q.items = items;
    q.env.clear();
    for (const auto& [name, text] : items) q.env[name] = text;
    q.aggregated = true;
    q.bare = false;
    (void)node;
    return q;
  }

  // A join side as a FROM item: a relation or subquery with its alias.
  std::pair<std::string, std::string> JoinSource(const TableNode& side) {
    Query q = Lower(side);
    if (q.bare && !q.alias.empty()) return {q.from, q.alias};
    if (q.bare) return {q.from, NextAlias()};
    return {Parenthesized(Render(q)), NextAlias()};
  }

  Query LowerOp(const TableNode& node, const JoinOp& op) {
    auto [left_from, left_alias] = JoinSource(*op.left);
    auto [right_from, right_alias] = JoinSource(*op.right);
    auto qualify = [&](const std::string& alias, const std::string& name) { return alias + "." + Quote(name); };
    ColumnResolver resolve = [&](const ColumnRef& ref) {
      bool left = ColumnReaches(*op.left, ref.table.get(), ref.name);
      return qualify(left ? left_alias : right_alias, ref.name);
    };
    Query q;
    q.bare = false;
    for (const JoinColumn& column : op.columns) {
      std::string text = column.side == JoinSide::kLeft    ? qualify(left_alias, column.source)
                         : column.side == JoinSide::kRight ? qualify(right_alias, column.source)
                                                           : std::string(ClickHouse() ? "coalesce" : "COALESCE") + "(" +
                                                                 qualify(left_alias, column.source) + ", " +
                                                                 qualify(right_alias, column.source) + ")";
      q.items.emplace_back(column.name, text);
      q.env[column.name] = text;
    }
    std::string left_item = left_from + " AS " + left_alias;
    std::string right_item = right_from + " AS " + right_alias;
    if (ClickHouse()) return ClickHouseJoin(node, op, q, left_from, left_alias, right_from, right_alias);
    if (op.kind == JoinKind::kSemi || op.kind == JoinKind::kAnti) {
      q.from = left_item;
      q.where.push_back(std::string(op.kind == JoinKind::kAnti ? "NOT " : "") + "EXISTS (\nSELECT 1\nFROM " +
                        right_item + "\nWHERE " + RenderValue(dialect_, *op.predicate, resolve) + "\n)");
      return q;
    }
    const char* keyword = op.kind == JoinKind::kInner  ? "INNER JOIN"
                          : op.kind == JoinKind::kLeft  ? "LEFT JOIN"
                          : op.kind == JoinKind::kRight ? "RIGHT JOIN"
                          : op.kind == JoinKind::kOuter ? "FULL OUTER JOIN"
                                                        : "CROSS JOIN";
    q.from = left_item + "\n" + keyword + " " + right_item;
    if (op.predicate) q.from += "\nON " + RenderValue(dialect_, *op.predicate, resolve);
    return q;
  }

  // ClickHouse 18.16 joins on equalities only (ALL strictness), fills unmatched rows with defaults unless
  // join_use_nulls = 1, and gives a key column of the other side the matched side's value: each key expression is
  // therefore computed into a column of its own that nothing else reads. Semi and anti joins become IN / NOT IN.
  Query ClickHouseJoin(const TableNode& node, const JoinOp& op, Query q, const std::string& left_from,
                       const std::string& left_alias, const std::string& right_from, const std::string& right_alias) {
    std::vector<const ValueNode*> conjuncts;
    if (op.predicate) Conjuncts(*op.predicate, conjuncts);
    std::vector<std::pair<const ValueNode*, const ValueNode*>> keys;
    std::vector<const ValueNode*> residual;
    for (const ValueNode* conjunct : conjuncts) {
      const auto* equal = std::get_if<Binary>(&conjunct->kind);
      int a = equal && equal->op == BinaryOp::kEqual ? SideOf(op, *equal->left) : 0;
      int b = equal && equal->op == BinaryOp::kEqual ? SideOf(op, *equal->right) : 0;
      if (a == 1 && b == 2) {
        keys.emplace_back(equal->left.get(), equal->right.get());
      } else if (a == 2 && b == 1) {
        keys.emplace_back(equal->right.get(), equal->left.get());
      } else {
        residual.push_back(conjunct);
      }
    }
    ColumnResolver bare = [&](const ColumnRef& ref) { return Quote(ref.name); };
    auto qualify = [&](const std::string& alias, const std::string& name) { return alias + "." + Quote(name); };
    ColumnResolver resolve = [&](const ColumnRef& ref) {
      bool left = ColumnReaches(*op.left, ref.table.get(), ref.name);
      return qualify(left ? left_alias : right_alias, ref.name);
    };
    bool outer = op.kind == JoinKind::kLeft || op.kind == JoinKind::kRight || op.kind == JoinKind::kOuter;
    if (!residual.empty() && op.kind != JoinKind::kInner) {
      Fail("SLU-EXPR-009",
           "ClickHouse cannot run this join: `" + ShowValue(*residual.front()) +
               "` is not an equality of a left and a right value",
           "ClickHouse (18.16) joins on equalities only; use an inner join and filter, or equality keys");
    }
    if (op.kind == JoinKind::kOuter) {
      Fail("SLU-EXPR-009", "ClickHouse cannot run a full outer join here",
           "ClickHouse 18.16 fails on FULL OUTER JOIN with NULLs for both sides (or crashes); union a left join "
           "and the anti join of the other side instead");
    }
    std::string left_item = left_from + " AS " + left_alias;
    std::string right_item = right_from + " AS " + right_alias;
    if (op.kind == JoinKind::kSemi || op.kind == JoinKind::kAnti) {
      std::string left_keys;
      std::string right_keys;
      for (size_t i = 0; i < keys.size(); ++i) {
        left_keys += (i ? ", " : "") + RenderValue(dialect_, *keys[i].first, resolve);
        right_keys += (i ? ", " : "") + RenderValue(dialect_, *keys[i].second, resolve);
      }
      if (keys.size() > 1) left_keys = "(" + left_keys + ")";
      q.from = left_item;
      q.where.push_back(left_keys + (op.kind == JoinKind::kAnti ? " NOT IN " : " IN ") + "(\nSELECT " + right_keys +
                        "\nFROM " + right_item + "\n)");
      (void)node;
      return q;
    }
    if (keys.empty()) {
      q.from = left_item + "\nCROSS JOIN " + right_item;
    } else {
      std::string left_keys;
      std::string right_keys;
      std::string on;
      for (size_t i = 0; i < keys.size(); ++i) {
        std::string left_key = Quote("__sluice_left_key_" + std::to_string(i));
        std::string right_key = Quote("__sluice_right_key_" + std::to_string(i));
        left_keys += ", " + RenderValue(dialect_, *keys[i].first, bare) + " AS " + left_key;
        right_keys += ", " + RenderValue(dialect_, *keys[i].second, bare) + " AS " + right_key;
        on += (i ? " AND " : "") + left_alias + "." + left_key + " = " + right_alias + "." + right_key;
      }
      auto keyed = [&](const std::string& from, const std::string& keys_sql) {
        std::string source = from.rfind("(", 0) == 0 ? from + " AS " + NextAlias() : from;
        return Parenthesized("SELECT *" + keys_sql + "\nFROM " + source);
      };
      std::string left_item_keyed = keyed(left_from, left_keys) + " AS " + left_alias;
      std::string right_item_keyed = keyed(right_from, right_keys) + " AS " + right_alias;
      if (op.kind == JoinKind::kRight) {
        // A right join is the left join of the swapped sides: 18.16 cannot put NULLs into the left side's
        // non-Nullable columns (join_use_nulls covers the right side only).
        q.from = right_item_keyed + "\nALL LEFT JOIN " + left_item_keyed + "\nON " + on;
      } else {
        q.from = left_item_keyed + "\n" + (op.kind == JoinKind::kInner ? "ALL INNER JOIN " : "ALL LEFT JOIN ") +
                 right_item_keyed + "\nON " + on;
      }
    }
    for (const ValueNode* condition : residual) q.where.push_back(RenderValue(dialect_, *condition, resolve));
    if (outer) join_use_nulls_ = true;
    return q;
  }

  static void Conjuncts(const ValueNode& value, std::vector<const ValueNode*>& out) {
    const auto* binary = std::get_if<Binary>(&value.kind);
    if (binary != nullptr && binary->op == BinaryOp::kAnd) {
      Conjuncts(*binary->left, out);
      Conjuncts(*binary->right, out);
    } else {
      out.push_back(&value);
    }
  }

  // 1 when every column of `value` is the left side's, 2 when every one is the right's, 0 otherwise.
  static int SideOf(const JoinOp& op, const ValueNode& value) {
    bool left = false;
    bool right = false;
    ForEachColumn(value, [&](const ColumnRef& ref, bool) {
      (ColumnReaches(*op.left, ref.table.get(), ref.name) ? left : right) = true;
    });
    return left && !right ? 1 : right && !left ? 2 : 0;
  }

  Query LowerOp(const TableNode& node, const OrderByOp& op) {
    Query q = Lower(*op.parent);
    if (q.limit || q.distinct || Shadows(q)) q = Wrap(q, op.parent->schema);
    std::vector<std::string> keys;
    for (const SortItem& key : op.keys) {
      std::string text = RenderOver(q, *key.value) + (key.descending ? " DESC" : " ASC");
      if (key.value->type.nullable) text += " NULLS LAST";
      keys.push_back(text);
    }
    keys.insert(keys.end(), q.order_by.begin(), q.order_by.end());
    q.order_by = keys;
    q.bare = false;
    (void)node;
    return q;
  }

  Query LowerOp(const TableNode& node, const LimitOp& op) {
    Query q = Lower(*op.parent);
    if (q.limit || q.offset > 0) q = Wrap(q, op.parent->schema);
    q.limit = op.count;
    q.offset = op.offset;
    q.bare = false;
    (void)node;
    return q;
  }

  Query LowerOp(const TableNode& node, const UnionOp& op) {
    auto branch = [&](const TableNode& side) {
      Query q = Lower(side);
      if (!q.order_by.empty() || q.limit || q.offset > 0) q = Wrap(q, side.schema);
      return Render(q);
    };
    std::string left = branch(*op.left);
    std::string right = branch(*op.right);
    const char* keyword = !op.distinct || ClickHouse()    ? "UNION ALL"
                          : dialect_ == Dialect::kBigQuery ? "UNION DISTINCT"
                                                           : "UNION";
    Query q = Source(Parenthesized(left + "\n" + keyword + "\n" + right), NextAlias(), node.schema);
    if (op.distinct && ClickHouse()) {
      q.distinct = true;  // 18.16 has UNION ALL only
      q.bare = false;
    }
    return q;
  }

  Query LowerOp(const TableNode& node, const DistinctOp& op) {
    Query q = Lower(*op.parent);
    if (q.limit || q.distinct || !q.order_by.empty()) q = Wrap(q, op.parent->schema);
    q.distinct = true;
    q.bare = false;
    (void)node;
    return q;
  }

  Dialect dialect_;
  int next_alias_ = 0;
  bool join_use_nulls_ = false;
  std::map<const TableNode*, int> uses_;
  std::map<const TableNode*, std::string> cte_names_;
  std::vector<std::string> ctes_;
};

}  // namespace

std::string ToSql(const Table& table, sql::Dialect dialect) { return Lowering(dialect).Statement(*table.node()); }

}  // namespace sluice::rel
