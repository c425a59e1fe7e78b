// Deployment inspection (seed 000): the offline checks a pipeline must pass before it is deployed or run — what
// Sluice's warehouse IO can write with exact partition semantics. Never connects, never reads the environment.
//
// The checks of this file apply to any Definitions (a SQL-model project's partitioned models included): a
// partitioned asset is daily, its partition column is an output column, and where the output's types are known the
// column is a DATE. The C++ SDK (src/sdk/) adds the checks on what code declares before it becomes Definitions:
// partitions definitions other than default daily, key shapes, missing partition metadata, catalog overrides.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"

namespace sluice {

// One asset as inspection sees it.
struct InspectedAsset {
  std::string key;          // as declared: "bronze.orders", or "orders" for a key of one part
  std::string relation;     // "bronze.orders", or "<default namespace>.orders"
  std::string kind;         // table | view | seed | code | …
  std::string partitioning;  // "unpartitioned" or "daily from 2026-01-01 by event_date"
  std::string backfill_policy;  // "single_run" or "multi_run(10)"; "-" when unpartitioned
  std::vector<std::string> inputs;
  std::vector<std::string> kinds;
  std::string io_manager_key;
  SourceLocation defined_at;
};

// A rule an asset breaks: `diagnostic.code` names the rule (SLU-INSPECT-NNN), its message names the asset.
struct InspectionFinding {
  std::string asset;
  Diagnostic diagnostic;
};

struct InspectionReport {
  std::vector<InspectedAsset> assets;      // in key order
  std::vector<InspectionFinding> rejected;  // in asset order, then rule order
  bool ok() const { return rejected.empty(); }
};

// The report of `definitions`: every asset, and the rules its partitioned assets break
// (SLU-INSPECT-011 partition column not among the output columns, -012 partition column not a DATE).
InspectionReport InspectDefinitions(const Definitions& definitions);

// "single_run" or "multi_run(N)".
std::string BackfillPolicyText(const BackfillPolicy& policy);

}  // namespace sluice
