// From the SDK's values (sluice/dagster.hpp) to what the rest of Sluice consumes: the deployment inspection report
// of code definitions, and the Definitions value — the same one a SQL-model project produces, so the engine, state,
// status, runs, logs and partitions treat code assets and SQL models alike.
//
// Inspection (InspectCode) rejects, naming the asset and the rule: a key of other than one or two identifier parts
// (SLU-INSPECT-001), metadata naming the catalog (`catalog`, `project`, `database`: -002; the catalog is always the
// configured one), a partitions definition other than daily (-003), a daily definition that is not midnight UTC with
// YYYY-MM-DD keys and no end offset or end date (-004), a daily asset without partition_by_date metadata (-005),
// partition_by_date on an unpartitioned asset or naming no valid column (-006), an io_manager_key not bound to the
// warehouse IO manager (-007), an input or dep naming no asset (-008), two assets with one relation (-009), a backfill
// policy of fewer than one partition per run (-010).
// Thread-safety: pure functions; the Definitions keep copies of the compute functions.
#pragma once

#include <string>
#include <vector>

#include "definitions/definitions.hpp"
#include "definitions/deployment_inspection.hpp"
#include "sluice/dagster.hpp"

namespace sluice::sdk {

// The report of code definitions, keys shown as declared ("orders" for the default namespace). With `sql`, the
// assets of a SQL-model project the code is deployed with: code inputs may name them, and their checks
// (InspectDefinitions) join the report.
InspectionReport InspectCode(const dagster::Definitions& code, const Definitions* sql = nullptr);

// Definitions of `code` (plus the assets of `sql`, when given), one-part keys placed in `default_namespace`. Throws
// sluice::Error with every finding of InspectCode when it rejects anything.
Definitions ToDefinitions(const dagster::Definitions& code, const std::string& default_namespace,
                          const Definitions* sql = nullptr);

}  // namespace sluice::sdk
