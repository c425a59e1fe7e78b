// The two examples of seed 000 written with Sluice's C++ SDK: a memtable of orders in bronze, the orders with a
// positive amount in silver, and a daily asset backfilled ten partitions per run. Built by sluice_add_pipeline into
// the program `sdk_orders`; `make demo` runs it (run_demo.sh).
#include <sluice/dg.hpp>

namespace dg = sluice::dg;
namespace ibis = sluice::ibis;

namespace {

const dg::AssetKey BRONZE_ORDERS{"bronze", "orders"};
const dg::AssetKey SILVER_ORDERS{"silver", "orders"};

// Seed 000, first example.
dg::AssetsDefinition orders = dg::asset(
    {
        .key = BRONZE_ORDERS,
        .kinds = {"ibis"},
        .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
    },
    [] {
      return ibis::memtable({{{"order_id", "o-1"}, {"amount", 100.0}}},
                            {{"order_id", "string"}, {"amount", "float64"}});
    });

dg::AssetsDefinition normalized_orders = dg::asset(
    {
        .key = SILVER_ORDERS,
        .ins = {{"orders", dg::AssetIn(BRONZE_ORDERS)}},
        .kinds = {"ibis"},
        .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
    },
    [](const dg::Inputs& inputs) {
      const ibis::Table& orders = inputs["orders"];
      return orders.filter(orders["amount"] > 0);
    });

// Seed 000, second example: one row per partition date, ten partitions per backfill run.
const dg::DailyPartitionsDefinition daily("2026-01-01");

dg::AssetsDefinition daily_orders = dg::asset(
    {
        .key = {"silver", "daily_orders"},
        .metadata = sluice::warehouse_asset_metadata({.partition_by_date = "event_date"}),
        .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
        .partitions_def = daily,
        .backfill_policy = dg::BackfillPolicy::multi_run(/*max_partitions_per_run=*/10),
    },
    [](const dg::AssetExecutionContext& context) {
      std::vector<ibis::Row> rows;
      for (const std::string& key : context.partition_keys()) {
        rows.push_back({{"event_date", *sluice::Date::Parse(key)}, {"order_count", int64_t{0}}});
      }
      return ibis::memtable(rows, {{"event_date", "date"}, {"order_count", "int64"}});
    });

}  // namespace

dg::Definitions sluice_definitions() {
  return dg::Definitions{
      .assets = {orders, normalized_orders, daily_orders},
      .resources = sluice::warehouse_resources(),
  };
}
