// Definitions deployment inspection rejects, one asset per rule: what `inspect` must report, by rule and asset.
#include <sluice/dagster.hpp>
#include <sluice/dg.hpp>

namespace dg = sluice::dg;
namespace ibis = sluice::ibis;

namespace {

ibis::Table Rows() {
  return ibis::memtable({{{"event_date", *sluice::Date::Parse("2026-01-01")}}}, {{"event_date", "date"}});
}

}  // namespace

sluice::dg::Definitions sluice_definitions() {
  auto hourly = dg::asset({.key = {"bronze", "hourly"},
                           .metadata = sluice::warehouse_asset_metadata({.partition_by_date = "event_date"}),
                           .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
                           .partitions_def = sluice::dagster::HourlyPartitionsDefinition{"2026-01-01-00:00"}},
                          Rows);
  dg::DailyPartitionsDefinition berlin("2026-01-01");
  berlin.timezone = "Europe/Berlin";
  auto shifted = dg::asset({.key = {"bronze", "shifted"},
                            .metadata = sluice::warehouse_asset_metadata({.partition_by_date = "event_date"}),
                            .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
                            .partitions_def = berlin},
                           Rows);
  auto undated = dg::asset({.key = {"bronze", "undated"},
                            .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY,
                            .partitions_def = dg::DailyPartitionsDefinition("2026-01-01")},
                           Rows);
  auto deep = dg::asset({.key = {"a", "b", "c"}, .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY}, Rows);
  auto elsewhere = dg::asset(
      {.key = {"bronze", "elsewhere"}, .metadata = {{"project", "other"}}, .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY},
      Rows);
  auto fine = dg::asset({.key = "fine", .io_manager_key = sluice::WAREHOUSE_IO_MANAGER_KEY}, Rows);
  return dg::Definitions{.assets = {hourly, shifted, undated, deep, elsewhere, fine},
                         .resources = sluice::warehouse_resources()};
}
