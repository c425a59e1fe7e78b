// What each asset becomes in the warehouse (StreamBuild reference §9 and §7.1): a model's canonical and resolved
// SQL, and, for a ClickHouse target, the DDL of the objects each model and each managed Kafka source owns. Rendered
// from Definitions alone; compile writes them as artifacts, plan and build execute them.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "definitions/definitions.hpp"
#include "sql/clickhouse_ddl.hpp"

namespace sluice {

// `compiled/models/<pipeline>/<model>.sql`.
std::string ModelQueryPath(const Asset& model);

// A model's canonical SQL: its statement with each reference replaced by the unqualified upstream relation,
// ending in exactly one newline.
std::string CanonicalSql(const Definitions& definitions, const Asset& model);

// What a reference to `upstream` reads: its relation, `<namespace>.` qualified when `qualified` (the SQL that runs).
// An adopted table is the table itself when qualified: the model reads its replay roles by their physical names
// (SqlCompute::role_column_reads); unqualified (StreamBuild's canonical SQL) one whose roles have other physical names
// is a subquery exposing the canonical `_replay_*` names. A Kafka source is its raw landing table; a Postgres source
// the `postgresql(...)` table function (password left as a placeholder; only when qualified).
std::string UpstreamRelation(const Asset& upstream, bool qualified);

// The column of UpstreamRelation(upstream, true) that holds a replay role (`_replay_offset`): the physical column an
// adopted table maps it to, else the role itself. What Sluice's own conditions on a replay anchor name.
std::string ReplayColumn(const Asset& upstream, const std::string& role);

// A condition Sluice wrote over the canonical role names (`_replay_offset <= 3`) made to read UpstreamRelation(
// upstream, true) itself: each bare word naming a role replaced by ReplayColumn.
std::string RoleColumnsRenamed(const Asset& upstream, const std::string& condition);

// The physical table a reference to `upstream` reads rows from: the adopted table, a Kafka source's raw landing
// table, a model's relation. Nullopt for a Postgres source (no table of the target's).
std::optional<std::string> UpstreamTable(const Asset& upstream);

// Replaces what one reference renders as: return nullopt to keep UpstreamRelation's text.
using ReferenceOverride = std::function<std::optional<std::string>(const ResolvedReference& reference)>;

// The model's statement with each reference replaced by its qualified upstream relation (or the override's text).
std::string ResolvedModelQuery(const Definitions& definitions, const Asset& model, const ReferenceOverride& override = {});

// One DDL statement of a ClickHouse object.
struct CompiledResource {
  std::string kind;  // managed_source | table | materialized_view | view
  std::string name;  // the relation
  std::string path;  // under target/
  std::string sql;   // one statement and a newline
};

// A model's objects: its view, or its table and the materialized view that fills it. None unless the target's
// adapter is clickhouse. Secrets (secret-named settings) redacted unless `secrets` is kKeep.
std::vector<CompiledResource> ModelResources(const Definitions& definitions, const Asset& model,
                                             sql::SecretHandling secrets = sql::SecretHandling::kRedact);

// A managed Kafka source's three objects; none for other sources, or unless the adapter is clickhouse.
std::vector<CompiledResource> SourceResources(const Definitions& definitions, const Asset& source,
                                              sql::SecretHandling secrets = sql::SecretHandling::kRedact,
                                              sql::CreateMode mode = sql::CreateMode::kCreate);

// The dependency a model is driven by (its `__source` / untyped `__ref`), or nullptr for a model with none.
const AssetDependency* DrivingInput(const Asset& model);

// `mv__<name>`: the materialized view that fills a table model, or a managed Kafka source's landing view; a model
// named by a deployment's physical relation (`<logical>__<id>`) gets `mv__<name>__<id>`.
std::string MaterializedViewName(const Asset& asset);

}  // namespace sluice
