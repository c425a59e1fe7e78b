// The definitions a run of a virtual pipeline's days writes through: each virtual model named by the physical
// relation its stable view reads now (the deployment published last), so that `sluice run --partition D` replaces
// day D in that table — atomically, with its ledger row, as every run writes — and readers of the stable view see it.
// The asset keys stay the models' own, so the ledger and `status` know the days as the model's.
// Errors: SLU-DEPLOY-037 when a model of `written` is not bound to a deployment (never published; repair first when
// its view reads something else). Reads the live bindings of each namespace in one query.
// Thread-safety: reads the warehouse from the calling thread.
#pragma once

#include <vector>

#include "definitions/definitions.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// Whether any of `keys` is a model of a virtual pipeline.
bool WritesVirtualModels(const Definitions& definitions, const std::vector<AssetKey>& keys);

Definitions PublishedDefinitions(const Definitions& definitions, Warehouse& warehouse,
                                 const std::vector<AssetKey>& written);

}  // namespace sluice
