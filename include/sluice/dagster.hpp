// The Dagster object model Sluice's C++ SDK is written against: asset keys, assets and their inputs, partitions
// definitions, backfill policies, the execution context, resources and Definitions.
//
// This header is the SDK's "underlying dependency": it holds more than Sluice runs (hourly, weekly, monthly and static
// partitions, daily partitions with offsets or another time zone) so that deployment inspection can name what it
// rejects. Pipelines use the curated namespace `sluice::dg` (sluice/dg.hpp); only what it exposes is promised.
//
// Everything here is a plain value: building assets and Definitions never reads the environment and never connects.
// Key shapes, partitions and metadata are checked by deployment inspection (`inspect`, and before every run), not by
// the constructors, so one report names every problem.
// Thread-safety: immutable values once built; compute functions are called from the engine's worker threads, one call
// per run step.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <source_location>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "sluice/relational.hpp"

namespace sluice::dagster {

// A list of string parts. Sluice accepts one part (the default namespace) or two ([namespace, table]).
struct AssetKey {
  std::vector<std::string> path;

  AssetKey() = default;
  AssetKey(std::initializer_list<std::string> parts) : path(parts) {}
  AssetKey(std::vector<std::string> parts) : path(std::move(parts)) {}
  AssetKey(const char* name) : path{name} {}
  AssetKey(std::string name) : path{std::move(name)} {}

  std::string ToUserString() const;  // "bronze/orders", as Dagster prints keys
  auto operator<=>(const AssetKey&) const = default;
};

// Definition metadata: text values (what the warehouse IO manager reads).
using Metadata = std::map<std::string, std::string, std::less<>>;

// An upstream asset bound to a compute function's parameter.
struct AssetIn {
  AssetKey key;
  Metadata metadata;
  AssetIn() = default;
  AssetIn(AssetKey upstream, Metadata metadata = {}) : key(std::move(upstream)), metadata(std::move(metadata)) {}
};

// Daily partitions (Dagster's defaults: midnight, UTC, keys "%Y-%m-%d", no end offset).
struct DailyPartitionsDefinition {
  std::string start_date;  // "YYYY-MM-DD" (a time after it is accepted by Dagster; Sluice rejects it)
  std::optional<std::string> end_date;
  int minute_offset = 0;
  int hour_offset = 0;
  std::string timezone = "UTC";
  std::string fmt = "%Y-%m-%d";
  int end_offset = 0;

  DailyPartitionsDefinition() = default;
  DailyPartitionsDefinition(std::string start) : start_date(std::move(start)) {}
};

struct HourlyPartitionsDefinition {
  std::string start_date;
};
struct WeeklyPartitionsDefinition {
  std::string start_date;
};
struct MonthlyPartitionsDefinition {
  std::string start_date;
};
struct StaticPartitionsDefinition {
  std::vector<std::string> partition_keys;
};
// A cron-driven time window definition (Dagster's TimeWindowPartitionsDefinition).
struct TimeWindowPartitionsDefinition {
  std::string start;
  std::string cron_schedule;
  std::string fmt;
  std::string timezone = "UTC";
};

using PartitionsDefinition =
    std::variant<DailyPartitionsDefinition, HourlyPartitionsDefinition, WeeklyPartitionsDefinition,
                 MonthlyPartitionsDefinition, StaticPartitionsDefinition, TimeWindowPartitionsDefinition>;

// How a ranged backfill of the asset is split into runs (Dagster's BackfillPolicy).
struct BackfillPolicy {
  std::optional<int> max_partitions_per_run;  // nullopt: one run per contiguous range
  static BackfillPolicy single_run() { return BackfillPolicy{}; }
  static BackfillPolicy multi_run(int max_partitions_per_run = 1) { return BackfillPolicy{max_partitions_per_run}; }
};

// The half-open window a run owns: [start, end), dates as "YYYY-MM-DD" (midnight UTC).
struct TimeWindow {
  std::string start;
  std::string end;
};

// Lines logged by a compute function; each becomes an event of the run (`logs RUN_ID`).
class Logger {
 public:
  explicit Logger(std::function<void(const std::string&)> sink) : sink_(std::move(sink)) {}
  void info(const std::string& message) const { sink_("INFO " + message); }
  void warning(const std::string& message) const { sink_("WARNING " + message); }
  void error(const std::string& message) const { sink_("ERROR " + message); }

 private:
  std::function<void(const std::string&)> sink_;
};

// What a compute function is given about its run.
class AssetExecutionContext {
 public:
  AssetExecutionContext(AssetKey key, std::string run_id, std::vector<std::string> partition_keys,
                        std::optional<TimeWindow> window, Logger log)
      : key_(std::move(key)), run_id_(std::move(run_id)), partition_keys_(std::move(partition_keys)),
        window_(std::move(window)), log_(std::move(log)) {}

  const AssetKey& asset_key() const { return key_; }
  const std::string& run_id() const { return run_id_; }
  bool has_partition_key() const { return partition_keys_.size() == 1; }
  bool has_partition_key_range() const { return !partition_keys_.empty(); }
  // The run's one key; throws sluice::Error SLU-SDK-020 when the run owns a range or none (as Dagster does).
  const std::string& partition_key() const;
  // Every key the run owns, in order; empty when the asset is unpartitioned.
  const std::vector<std::string>& partition_keys() const { return partition_keys_; }
  // Throws SLU-SDK-020 when the asset is unpartitioned.
  const TimeWindow& partition_time_window() const;
  const Logger& log() const { return log_; }

 private:
  AssetKey key_;
  std::string run_id_;
  std::vector<std::string> partition_keys_;
  std::optional<TimeWindow> window_;
  Logger log_;
};

// The tables a compute function receives: each declared input by its parameter name.
class Inputs {
 public:
  explicit Inputs(std::map<std::string, rel::Table, std::less<>> tables) : tables_(std::move(tables)) {}
  // Throws SLU-SDK-021 naming the inputs there are when `name` is none of them.
  const rel::Table& operator[](std::string_view name) const;

 private:
  std::map<std::string, rel::Table, std::less<>> tables_;
};

using ComputeFunction = std::function<rel::Table(const AssetExecutionContext&, const Inputs&)>;

// Everything @asset takes, as designated initializers in declaration order.
struct AssetSpec {
  AssetKey key;
  std::map<std::string, AssetIn> ins;  // parameter name → upstream
  std::vector<AssetKey> deps;         // upstreams that are not inputs (ordering only)
  std::set<std::string> kinds;
  Metadata metadata;
  std::string io_manager_key = "io_manager";
  std::optional<PartitionsDefinition> partitions_def;
  std::optional<BackfillPolicy> backfill_policy;  // none: one partition per run, as in Dagster
  std::string description;
  std::string name;  // the function's name; defaults to the key's last part
};

struct AssetsDefinition {
  AssetSpec spec;
  ComputeFunction compute;
  std::string file;  // where `asset(...)` was called
  int line = 0;
};

// @asset: `fn` is called as fn(), fn(context) or fn(context, inputs), and returns a relational expression.
template <typename F>
AssetsDefinition asset(AssetSpec spec, F fn, std::source_location at = std::source_location::current()) {
  ComputeFunction compute;
  if constexpr (std::is_invocable_v<F>) {
    compute = [fn](const AssetExecutionContext&, const Inputs&) -> rel::Table { return fn(); };
  } else if constexpr (std::is_invocable_v<F, const AssetExecutionContext&>) {
    compute = [fn](const AssetExecutionContext& context, const Inputs&) -> rel::Table { return fn(context); };
  } else if constexpr (std::is_invocable_v<F, const Inputs&>) {
    compute = [fn](const AssetExecutionContext&, const Inputs& inputs) -> rel::Table { return fn(inputs); };
  } else {
    static_assert(std::is_invocable_v<F, const AssetExecutionContext&, const Inputs&>,
                  "an asset's function takes (), (context), (inputs) or (context, inputs)");
    compute = fn;
  }
  return AssetsDefinition{std::move(spec), std::move(compute), at.file_name(), static_cast<int>(at.line())};
}

// A resource: Sluice knows one kind, the warehouse IO manager (sluice/warehouse.hpp).
struct ResourceDefinition {
  std::string kind;  // "warehouse_io_manager"
};
using Resources = std::map<std::string, ResourceDefinition, std::less<>>;

struct Definitions {
  std::vector<AssetsDefinition> assets;
  Resources resources;
  // A Sluice addition: a SQL-model project folder (relative to the working directory) whose models join these assets
  // in one graph; code inputs may read its models. Empty: none.
  std::string sql_project;
};

}  // namespace sluice::dagster
