#include "engine/run_sql.hpp"

#include <algorithm>
#include <filesystem>

#include "core/file_system.hpp"
#include "definitions/model_sql.hpp"
#include "sql/dialect.hpp"
#include "sql/select_parser.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {

SourceLocation RunSql::LocationOf(const SqlCompute& model, const std::string& file, std::string_view file_text,
                                  size_t offset) const {
  // The file's header is as written; its body may have been expanded (macros): locate in header + expanded body,
  // as compile-time errors do.
  std::string expanded(file_text.substr(0, std::min(model.body_offset, file_text.size())));
  const size_t body_begin = expanded.size();
  expanded += model.body;
  return LocationAt(file, expanded, std::min(expanded.size(), body_begin + sql::OriginalOffset(replacements, offset)));
}

RunSql RenderRunSql(const Definitions& definitions, const Asset& asset, const std::optional<DateWindow>& window,
                    const Warehouse& warehouse) {
  const sql::Dialect dialect = warehouse.dialect();
  const SqlCompute& model = std::get<SqlCompute>(asset.compute);
  std::optional<std::vector<sql::Token>> body_tokens;
  // A partitioned upstream is read filtered to the window, as a subquery named after the relation unless the
  // model names it (PostgreSQL refuses a subquery in FROM without an alias).
  auto relation = [&](const ResolvedReference& reference) {
    const Asset& upstream = *definitions.Find(reference.upstream);
    std::string name = warehouse.QualifiedName(Relation{upstream.key.name_space(), upstream.relation_name});
    if (!window || !asset.partitions || !upstream.partitions) return name;
    const std::string column = sql::QuoteIdentifier(dialect, upstream.partitions->column);
    std::string filtered = "(SELECT * FROM " + name + " WHERE " + column + " >= " +
                           sql::DateLiteral(dialect, window->start) + " AND " + column + " < " +
                           sql::DateLiteral(dialect, window->end) + ")";
    if (!body_tokens) body_tokens = sql::TokenizeSignificant(model.body, dialect);
    if (sql::SourceHasAlias(*body_tokens, reference.call.end, dialect)) return filtered;
    return filtered + " AS " + sql::QuoteIdentifier(dialect, upstream.relation_name);
  };
  auto bound = [&](const PartitionBoundCall& call) {
    const char* name = call.bound == PartitionBound::kStart ? "@partition_start()" : "@partition_end()";
    if (!window) {
      throw Error(Diagnostic{"SLU-RUN-002",
                             std::string(name) + " is used by " + asset.key.ToString() + ", which is not partitioned",
                             call.at, "declare partitions (daily (…)) on the model", {}});
    }
    return sql::DateLiteral(dialect, call.bound == PartitionBound::kStart ? window->start : window->end);
  };
  RunSql sql{{}, ModelSqlReplacements(model, relation, bound)};
  sql.text = sql::ReplaceSpans(model.body, sql.replacements);
  return sql;
}

const std::string& ModelFileText(const Asset& asset) {
  static const std::string kNone;
  const auto* model = std::get_if<SqlCompute>(&asset.compute);
  return model != nullptr ? model->header : kNone;
}

}  // namespace sluice
