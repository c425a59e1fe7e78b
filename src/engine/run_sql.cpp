#include "engine/run_sql.hpp"

#include <algorithm>
#include <filesystem>

#include "core/file_system.hpp"
#include "definitions/model_sql.hpp"
#include "sql/dialect.hpp"

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
  auto relation = [&](const ResolvedReference& reference) {
    const Asset& upstream = *definitions.Find(reference.upstream);
    std::string name = warehouse.QualifiedName(Relation{upstream.key.name_space(), upstream.relation_name});
    if (!window || !asset.partitions || !upstream.partitions) return name;
    const std::string column = sql::QuoteIdentifier(dialect, upstream.partitions->column);
    return "(SELECT * FROM " + name + " WHERE " + column + " >= " + sql::DateLiteral(dialect, window->start) + " AND " +
           column + " < " + sql::DateLiteral(dialect, window->end) + ")";
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
  const SqlCompute& model = std::get<SqlCompute>(asset.compute);
  RunSql sql{{}, ModelSqlReplacements(model, relation, bound)};
  sql.text = sql::ReplaceSpans(model.body, sql.replacements);
  return sql;
}

std::string ModelFileText(const std::string& project_root, const Asset& asset) {
  try {
    return ReadFile(std::filesystem::path(project_root) / asset.defined_at.file);
  } catch (const Error&) {
    return {};
  }
}

}  // namespace sluice
