// sluice::dg — the curated namespace pipelines are written against (the seed's `segmentstream.dagster`): direct
// re-exports of the objects Sluice supports, nothing else. What sits outside it (sluice/dagster.hpp) may change and
// is not part of the compatibility contract.
//
// A pipeline's executable defines one function, `sluice_definitions()`, returning its dg::Definitions; the CMake
// function `sluice_add_pipeline` (cmake/SluicePipeline.cmake) builds it into a program with Sluice's commands.
#pragma once

#include "sluice/dagster.hpp"
#include "sluice/ibis.hpp"
#include "sluice/warehouse.hpp"

namespace sluice::dg {

using dagster::asset;
using dagster::AssetExecutionContext;
using dagster::AssetIn;
using dagster::AssetKey;
using dagster::AssetsDefinition;
using dagster::AssetSpec;
using dagster::BackfillPolicy;
using dagster::DailyPartitionsDefinition;
using dagster::Definitions;
using dagster::Inputs;
using dagster::Metadata;
using dagster::TimeWindow;

}  // namespace sluice::dg

// Defined by the pipeline: its definitions. Called once per process, when a command needs them.
sluice::dg::Definitions sluice_definitions();
