// Fingerprints: the SQL each model was last built from, kept in the warehouse beside its data (`_sluice`
// schema/database, table `fingerprints`, one row appended per model and build), so `plan` can show what changed
// since the last build as a unified diff.
// Errors: warehouse errors pass through (SLU-WAREHOUSE-*).
// Thread-safety: functions over a Warehouse, as thread-safe as it is.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "warehouse/warehouse.hpp"

namespace sluice {

struct Fingerprint {
  std::string model;       // AssetKey text, e.g. orders_demo.orders
  std::string sql;         // the model's canonical SQL
  std::string sha256;      // of `sql`
  std::string run_id;      // the build that applied it
  std::string applied_at;  // ISO-8601 UTC
};

// The latest fingerprint of each model, by model. Empty when no build has recorded one.
std::map<std::string, Fingerprint> ReadFingerprints(Warehouse& warehouse);

// Appends `fingerprints` (creating the table on first use).
void WriteFingerprints(Warehouse& warehouse, const std::vector<Fingerprint>& fingerprints);

// `before` → `after` as a unified diff (`--- from`, `+++ to`, hunks with 3 lines of context); empty when equal.
std::string UnifiedDiff(const std::string& before, const std::string& after, const std::string& from,
                        const std::string& to);

}  // namespace sluice
