// ActualState: what the warehouse holds now of a direct plan's objects, read with a constant number of catalog
// queries whatever the project's size, and the checks a build needs before it changes anything:
//   - an upstream outside the scope must exist (SLU-DEPLOY-003, naming the pipeline to add to the selection);
//   - an adopted `stream_table` source must exist with its replay columns of the right types (SLU-SOURCE-020
//     missing table, -021 missing column, -022 a column of another type), located at the source's YAML entry;
//   - a managed Kafka source whose objects exist but differ from the project (topic, brokers, consumer group,
//     format, settings, landing TTL) is reported as a SourceChange: StreamBuild silently kept the old object;
//     `build` leaves existing sources alone too (they hold landed data), and `plan` shows the difference.
// Read-only: nothing is created, altered or inserted.
// Thread-safety: functions over a Warehouse, as thread-safe as it is.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "definitions/definitions.hpp"
#include "deploy/direct_plan.hpp"
#include "deploy/fingerprints.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

struct SourceChange {
  std::string source;
  std::string object;  // kafka__x | raw__x
  std::string what;    // e.g. "kafka_topic_list: 'orders' in the warehouse, 'orders_v2' in the project"
};

enum class ModelChange { kNew, kChanged, kUnchanged };
std::string ModelChangeName(ModelChange change);  // new | changed | unchanged

struct ModelState {
  AssetKey model;
  bool exists = false;        // its relation is in the warehouse
  ModelChange change = ModelChange::kNew;
  std::string sha256;         // of the SQL the plan builds
  std::string diff;           // unified diff from the last build's SQL, when changed
};

struct ActualState {
  std::string server_version;
  // What stops a build on this server although the plan could be read: e.g. a managed Kafka source on a server whose
  // Kafka engine lacks the virtual columns its landing view reads (SLU-CLICKHOUSE-002, located at the source).
  std::vector<Diagnostic> blockers;
  std::vector<ModelState> models;  // in scope order
  std::vector<SourceChange> source_changes;
  std::vector<std::string> existing_sources;  // managed source objects already there (kept as they are)
};

// Reads the state and runs the checks above; throws the first failed check. Blockers are returned, not thrown, so
// that `plan` can still show the rest.
// The state of a warehouse that does not exist yet (a DuckDB file before the first build): every model new.
ActualState NothingBuiltState(const Definitions& definitions, const DirectPlan& plan);

// Model features the server lacks (SLU-CLICKHOUSE-001 blockers: the `::` cast, window functions, DateTime64 columns,
// TTL) are located in the model's text the definitions keep.
ActualState ReadActualState(const Definitions& definitions, const DirectPlan& plan, Warehouse& warehouse);

// The SQL a model's fingerprint covers: its canonical SQL.
std::string FingerprintSql(const Definitions& definitions, const Asset& model);

}  // namespace sluice
