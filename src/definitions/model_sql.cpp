#include "definitions/model_sql.hpp"

#include <algorithm>


namespace sluice {

std::vector<sql::SpanReplacement> ModelSqlReplacements(const SqlCompute& model, const RelationRenderer& relation,
                                                       const PartitionBoundRenderer& bound) {
  std::vector<sql::SpanReplacement> replacements;
  replacements.reserve(model.references.size() + model.partition_bounds.size());
  for (const ResolvedReference& reference : model.references) {
    replacements.push_back({reference.call.begin, reference.call.end, relation(reference)});
  }
  if (bound) {
    for (const PartitionBoundCall& call : model.partition_bounds) replacements.push_back({call.begin, call.end, bound(call)});
  }
  std::sort(replacements.begin(), replacements.end(),
            [](const sql::SpanReplacement& a, const sql::SpanReplacement& b) { return a.begin < b.begin; });
  return replacements;
}

std::string RenderModelSql(const SqlCompute& model, const RelationRenderer& relation,
                           const PartitionBoundRenderer& bound) {
  return sql::ReplaceSpans(model.body, ModelSqlReplacements(model, relation, bound));
}

}  // namespace sluice
