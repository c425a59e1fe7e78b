// Code assets deployed with a SQL-model project (tests/projects/sdk_mixed): a daily count of the SQL model
// bronze.raw_events, and an unpartitioned total over the counts.
#include <sluice/dg.hpp>

namespace dg = sluice::dg;
namespace ibis = sluice::ibis;

sluice::dg::Definitions sluice_definitions() {
  auto event_counts = dg::asset(
      {
          .key = {"silver", "event_counts"},
          .ins = {{"events", dg::AssetIn("raw_events")}},
          .metadata = sluice::warehouse_asset_metadata({.partition_by_date = "event_date"}),
          .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
          .partitions_def = dg::DailyPartitionsDefinition("2026-01-01"),
          .backfill_policy = dg::BackfillPolicy::multi_run(2),
      },
      [](const dg::AssetExecutionContext& context, const dg::Inputs& inputs) {
        context.log().info("counting " + std::to_string(context.partition_keys().size()) + " day(s)");
        return inputs["events"].group_by({"event_date"}).aggregate({{"events", ibis::CountRows()}});
      });
  auto totals = dg::asset(
      {
          .key = {"gold", "totals"},
          .ins = {{"counts", dg::AssetIn({"silver", "event_counts"})}},
          .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
      },
      [](const dg::Inputs& inputs) {
        const ibis::Table& counts = inputs["counts"];
        return counts.aggregate({{"days", ibis::CountRows()}, {"events", counts["events"].sum()}});
      });
  return dg::Definitions{.assets = {event_counts, totals}, .resources = sluice::warehouse_resources(), .sql_project = "."};
}
