#include "definitions/model_sql.hpp"

#include <algorithm>

namespace sluice {

std::vector<sql::SpanReplacement> ModelSqlReplacements(const SqlCompute& model, const RelationRenderer& relation,
                                                       const PartitionBoundRenderer& bound, RoleColumns roles) {
  std::vector<sql::SpanReplacement> replacements;
  replacements.reserve(model.references.size() + model.partition_bounds.size() + model.role_column_reads.size());
  for (const ResolvedReference& reference : model.references) {
    replacements.push_back({reference.call.begin, reference.call.end, relation(reference)});
  }
  if (bound) {
    for (const PartitionBoundCall& call : model.partition_bounds) replacements.push_back({call.begin, call.end, bound(call)});
  }
  if (roles == RoleColumns::kPhysical) {
    replacements.insert(replacements.end(), model.role_column_reads.begin(), model.role_column_reads.end());
  }
  // A zero-length insertion (after a `*`) goes before a span starting where it is.
  std::sort(replacements.begin(), replacements.end(), [](const sql::SpanReplacement& a, const sql::SpanReplacement& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  return replacements;
}

std::string RenderModelSql(const SqlCompute& model, const RelationRenderer& relation,
                           const PartitionBoundRenderer& bound, RoleColumns roles) {
  return sql::ReplaceSpans(model.body, ModelSqlReplacements(model, relation, bound, roles));
}

}  // namespace sluice
