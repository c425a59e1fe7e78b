// Test support: assets built by hand in C++, with no project files, as the SDK builds them. Header-only, for
// tests of every layer that consumes Definitions.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "definitions/definitions.hpp"
#include "sql/reference_scanner.hpp"

namespace sluice::testing {

// A table model of pipeline `pipeline` whose statement is `body`: each `__ref("x")` / `__source("x")` in it reads
// upstreams.at("x") (the first call is the driving input, the others plain references), and each
// `@partition_start()` / `@partition_end()` call is recorded.
inline Asset HandBuiltModel(const std::string& name_space, const std::string& pipeline, const std::string& name,
                            const std::string& body, const std::map<std::string, AssetKey>& upstreams,
                            ModelColumns columns = {}) {
  Asset asset;
  asset.key = AssetKey::Of(name_space, name);
  asset.relation_name = name;
  asset.pipeline = pipeline;
  asset.defined_at = SourceLocation{"hand_built/" + name, 1, 1};
  SqlCompute sql;
  sql.body = body;
  sql.columns = std::move(columns);
  for (const sql::ReferenceCall& call : sql::FindReferences(body, sql::Dialect::kDuckDb)) {
    const EdgeType edge = sql.references.empty() ? EdgeType::kDrivingInput : EdgeType::kReference;
    const AssetKey& upstream = upstreams.at(call.name);
    sql.references.push_back(ResolvedReference{call, upstream, edge, asset.defined_at});
    bool known = false;
    for (const AssetDependency& dep : asset.deps) known = known || dep.upstream == upstream;
    if (!known) asset.deps.push_back(AssetDependency{upstream, edge});
  }
  for (const sql::MacroCall& call : sql::FindMacroCalls(body, sql::Dialect::kDuckDb)) {
    const PartitionBound bound = call.name == "partition_start" ? PartitionBound::kStart : PartitionBound::kEnd;
    sql.partition_bounds.push_back(PartitionBoundCall{call.begin, call.end, bound, asset.defined_at});
  }
  asset.compute = std::move(sql);
  return asset;
}

// A seed source: the CSV at `path` (relative to the project root) loaded as `name_space.name`.
inline Asset HandBuiltSeed(const std::string& name_space, const std::string& name, const std::string& path) {
  Asset asset;
  asset.key = AssetKey::Of(name_space, name);
  asset.relation_name = name;
  asset.compute = SeedCompute{path, {}};
  asset.defined_at = SourceLocation{"hand_built/" + name, 1, 1};
  return asset;
}

}  // namespace sluice::testing
