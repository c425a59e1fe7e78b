#include "definitions/model_sql.hpp"


namespace sluice {

std::string RenderModelSql(const SqlCompute& model, const RelationRenderer& relation,
                           const PartitionBoundRenderer& bound) {
  std::vector<sql::SpanReplacement> replacements;
  replacements.reserve(model.references.size() + model.partition_bounds.size());
  auto reference = model.references.begin();
  auto call = model.partition_bounds.begin();
  // Both lists are in text order: merge them.
  while (reference != model.references.end() || call != model.partition_bounds.end()) {
    const bool next_is_reference = call == model.partition_bounds.end() ||
                                   (reference != model.references.end() && reference->call.begin < call->begin);
    if (next_is_reference) {
      replacements.push_back({reference->call.begin, reference->call.end, relation(*reference)});
      ++reference;
    } else {
      if (bound) replacements.push_back({call->begin, call->end, bound(*call)});
      ++call;
    }
  }
  return sql::ReplaceSpans(model.body, replacements);
}

}  // namespace sluice
