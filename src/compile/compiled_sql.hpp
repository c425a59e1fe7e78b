// What each asset compiles to (StreamBuild reference §9): a model's canonical SQL and, for a ClickHouse target,
// the DDL of the objects each model and each managed Kafka source owns. Rendered from Definitions alone.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "definitions/definitions.hpp"

namespace sluice {

// `compiled/models/<pipeline>/<model>.sql`.
std::string ModelQueryPath(const Asset& model);

// A model's canonical SQL: its statement with each reference replaced by the unqualified upstream relation,
// ending in exactly one newline.
std::string CanonicalSql(const Definitions& definitions, const Asset& model);

// One DDL file of a ClickHouse object.
struct CompiledResource {
  std::string kind;  // managed_source | table | materialized_view | view
  std::string name;  // the relation
  std::string path;  // under target/
  std::string sql;   // one statement and a newline; secrets redacted
};

// A model's objects: its view, or its table and the materialized view that fills it. None unless the target's
// adapter is clickhouse.
std::vector<CompiledResource> ModelResources(const Definitions& definitions, const Asset& model);

// A managed Kafka source's three objects; none for other sources, or unless the adapter is clickhouse.
std::vector<CompiledResource> SourceResources(const Definitions& definitions, const Asset& source);

}  // namespace sluice
