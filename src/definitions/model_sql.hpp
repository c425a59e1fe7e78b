// A SQL model's SQL, rendered: the one path by which compile, run, deploy and the test compiler turn a model's body
// into the SQL they write or run. The body's bytes are kept except for each reference span, replaced by what
// `relation` renders for it, each `@partition_start()` / `@partition_end()` call, replaced by what `bound` renders
// (left as written when `bound` is empty), and — when the model runs (RoleColumns::kPhysical) — each canonical
// replay-role name the model reads from an adopted table that keeps it in another column (SqlCompute::
// role_column_reads), so that `relation` renders such a table as itself.
// Thread-safety: pure function; the callbacks are called on the calling thread (references first, in list order).
#pragma once

#include <functional>
#include <string>

#include "definitions/definitions.hpp"
#include "sql/reference_scanner.hpp"

namespace sluice {

using RelationRenderer = std::function<std::string(const ResolvedReference& reference)>;
using PartitionBoundRenderer = std::function<std::string(const PartitionBoundCall& call)>;

// How an adopted table that keeps its replay roles in columns of other names is read:
//   kPhysical   the SQL that runs: the role names the body writes become the physical columns, and the relation of
//               the table is the table itself (what a ClickHouse materialized view can read);
//   kCanonical  StreamBuild's canonical SQL (compile's `compiled/models/`, fingerprints, test mocks): the body as
//               written, the relation being a subquery that exposes the canonical names.
enum class RoleColumns { kPhysical, kCanonical };

std::string RenderModelSql(const SqlCompute& model, const RelationRenderer& relation,
                           const PartitionBoundRenderer& bound = {}, RoleColumns roles = RoleColumns::kPhysical);

// The spans RenderModelSql replaces, in text order, with their new text: ReplaceSpans(model.body, …) is the
// rendered SQL, and sql::OriginalOffset maps an offset in it back to the body.
std::vector<sql::SpanReplacement> ModelSqlReplacements(const SqlCompute& model, const RelationRenderer& relation,
                                                       const PartitionBoundRenderer& bound = {},
                                                       RoleColumns roles = RoleColumns::kPhysical);

}  // namespace sluice
