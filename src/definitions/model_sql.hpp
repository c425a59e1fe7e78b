// A SQL model's SQL, rendered: the one path by which compile, run and the test compiler turn a model's body
// into the SQL they write or run. The body's bytes are kept except for each reference span, replaced by what
// `relation` renders for it, and each `@partition_start()` / `@partition_end()` call, replaced by what `bound`
// renders (left as written when `bound` is empty).
// Thread-safety: pure function; the callbacks are called on the calling thread (references first, in list order).
#pragma once

#include <functional>
#include <string>

#include "definitions/definitions.hpp"
#include "sql/reference_scanner.hpp"

namespace sluice {

using RelationRenderer = std::function<std::string(const ResolvedReference& reference)>;
using PartitionBoundRenderer = std::function<std::string(const PartitionBoundCall& call)>;

std::string RenderModelSql(const SqlCompute& model, const RelationRenderer& relation,
                           const PartitionBoundRenderer& bound = {});

// The spans RenderModelSql replaces, in text order, with their new text: ReplaceSpans(model.body, …) is the
// rendered SQL, and sql::OriginalOffset maps an offset in it back to the body.
std::vector<sql::SpanReplacement> ModelSqlReplacements(const SqlCompute& model, const RelationRenderer& relation,
                                                       const PartitionBoundRenderer& bound = {});

}  // namespace sluice
