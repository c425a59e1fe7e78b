// The SELECT the warehouse runs for one step of a code asset (sdk/): its compute function called with the run's
// context and its inputs — each upstream a reference to the relation the warehouse holds, with the schema the
// warehouse reports, filtered to the step's half-open window when both are daily-partitioned — and the expression it
// returns printed in the warehouse's dialect. The write itself is the engine's one write path, as for a SQL model.
//
// Errors (sluice::Error, located at the asset's definition): the expression errors the function raises
// (SLU-EXPR-*), an exception of another kind (SLU-RUN-008 naming it), an input relation the warehouse lacks
// (SLU-RUN-006) or with a column type expressions cannot use (SLU-RUN-007), and a partitioned asset whose output has
// no DATE column of the partition column's name (SLU-RUN-009).
// Thread-safety: as the compute function and the warehouse (the executor calls one step per thread).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "sluice/date.hpp"
#include "definitions/definitions.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

std::string RenderCodeSql(const Definitions& definitions, const Asset& asset, const CodeCompute& code,
                          const std::optional<DateWindow>& window, const std::string& run_id, Warehouse& warehouse,
                          const std::function<void(const std::string&)>& log);

}  // namespace sluice
