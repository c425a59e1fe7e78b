// The backfill benchmark's pipeline (run_bench_backfill.py): a daily code asset copying a daily SQL model's rows,
// ten partitions per run, so a 365-day backfill is 37 runs each replacing its dates atomically.
#include <sluice/dg.hpp>

namespace dg = sluice::dg;

sluice::dg::Definitions sluice_definitions() {
  auto copy = dg::asset(
      {
          .key = {"silver", "events_copy"},
          .ins = {{"events", dg::AssetIn({"bronze", "raw_events"})}},
          .metadata = sluice::warehouse_asset_metadata({.partition_by_date = "event_date"}),
          .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
          .partitions_def = dg::DailyPartitionsDefinition("2025-01-01"),
          .backfill_policy = dg::BackfillPolicy::multi_run(10),
      },
      [](const dg::Inputs& inputs) { return inputs["events"]; });
  return dg::Definitions{.assets = {copy}, .resources = sluice::warehouse_resources(), .sql_project = "."};
}
