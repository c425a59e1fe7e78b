// Checks and inferences over the assets of a project being loaded, by asset index (the loader's order: the
// sources, then the models): the uniqueness of physical relation names and the source each driving chain
// reaches.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "definitions/definitions.hpp"

namespace sluice {

// An asset index that is none: an unknown upstream, a model without a driving input, a chain reaching no source.
inline constexpr size_t kNoAsset = SIZE_MAX;

// Physical relation names — the assets' own and the objects generated for them (`mv__<model>` of a table
// model; `kafka__<source>` and `mv__<source>` of a Kafka source) — are unique per namespace. Claims are taken in
// asset order, each asset's relation first; the first claim of a name already claimed throws SLU-PROJECT-005
// located at its asset, except that several adopted tables may share one table.
void CheckRelationNames(const std::vector<Asset>& assets);

// For each asset, the index of the source its chain of driving inputs reaches (a source reaches itself), or
// kNoAsset when the chain ends without one. `driving_upstream[i]` is asset i's driving input, or kNoAsset.
// Linear in the assets: every asset is walked once. A driving cycle ends its walk (Definitions reports it).
std::vector<size_t> DrivingSources(const std::vector<Asset>& assets, const std::vector<size_t>& driving_upstream);

}  // namespace sluice
