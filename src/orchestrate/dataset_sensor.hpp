// The multi-asset dataset sensor (reference §6.5–§6.6): given the datasets a job waits for, what the state store
// recorded of their materializations and the stored cursor, whether to request a run now — with which logical and
// previous datetimes and merged sl_options — or why not. One evaluation is a pure function of its inputs: it reads
// no clock and does no I/O beyond the SensorHistory it is given, so the daemon's tick is tested deterministically.
//
// An evaluation:
//   1. reads, per configured dataset, its newest materialization with a sequence greater than the cursor;
//   2. gates: ANY passes when one dataset has such a record, ALL when every one has ("No materializations observed");
//   3. merges the records' sl_options, fail-loud (SLU-SENSOR-001);
//   4. rebuilds each materialized dataset: cron and freshness from the record's metadata, else as configured, and its
//      partition datetime (below);
//   5. when no record is dated: requests a run with no dates, or skips ("…but not for […]") when a dataset has no
//      record;
//   6. takes the greatest partition datetime as the anchor;
//   7. checks every other dataset (unmaterialized ones included) for a partition consistent with the anchor (§6.6),
//      and requests a run at the greatest partition found, or skips ("…are not consistent with <anchor>"). With
//      nothing to check it requests a run at the anchor, previous as §6.6 step 1 finds it or unset.
// ANY governs the gate only: after it every non-optional dataset must be consistent.
//
// The cursor: on a request it moves to the greatest sequence among the records the gate read, so those
// materializations never trigger again; on a skip it stays, so records keep accumulating until they are
// consistent. A record at or before the cursor never passes the gate, though the consistency check may still find
// it through SensorHistory::Recent (which ignores the cursor).
//
// A record's partition datetime, in order: its `partition` (an encoded key or datetime text); else metadata
// `sl_data_interval_end`; else metadata `sl_scheduled_date` (text, or a number of seconds since the epoch). The first
// source present decides; when it does not parse the record is undated, never an error. All cron arithmetic is in UTC.
// Crons read from a record's metadata that do not parse count as no cron; configured crons and the data cycle are
// parsed strictly (SLU-CRON-001..003).
//
// Errors: SLU-SENSOR-001 two triggering records set the same sl_options section and key to different values;
// SLU-SENSOR-002 a record's sl_options is neither a JSON object of objects nor text holding one.
// Thread-safety: EvaluateDatasetSensor is reentrant; it uses `history` from the calling thread only.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::orchestrate {

enum class TriggeringStrategy { kAny, kAll };

// "any"/"all" (case-insensitive); anything else is kAny, the original's silent fallback (a caller that wants an
// error validates first).
TriggeringStrategy ParseTriggeringStrategy(std::string_view text);

// One monitored dataset as configured.
struct SensorDataset {
  std::string uri;  // the dataset URI (DatasetUri), the asset key
  std::optional<std::string> cron;
  int64_t freshness = 0;  // seconds
};

// One recorded materialization of a dataset.
struct DatasetMaterialization {
  int64_t sequence = 0;  // increasing across all datasets (the store's order)
  std::string uri;
  std::string partition;  // the encoded logical datetime (QuoteDatetime), or "" when undated
  // sl_cron, sl_freshness, sl_scheduled_date, sl_data_interval_end, sl_options …
  nlohmann::json metadata = nlohmann::json::object();
};

struct SensorSettings {
  TriggeringStrategy strategy = TriggeringStrategy::kAny;
  std::optional<std::string> data_cycle;  // a cron (presets such as "hourly" already mapped), or unset
  bool beyond_data_cycle_enabled = true;
  bool optional_dataset_enabled = false;
  std::optional<std::chrono::system_clock::time_point> start_date;
};

// What an evaluation reads from the state store; the daemon implements it over SQLite, tests over a vector.
class SensorHistory {
 public:
  virtual ~SensorHistory() = default;
  // The newest materialization of `uri` with sequence > after, or nullopt.
  virtual std::optional<DatasetMaterialization> LatestAfter(const std::string& uri, int64_t after) = 0;
  // Up to `limit` materializations of `uri`, oldest first (the newest `limit` ones), whatever their sequence.
  virtual std::vector<DatasetMaterialization> Recent(const std::string& uri, int limit) = 0;
  // The greatest logical datetime of a SUCCESS run of this job earlier than `before`, or nullopt.
  virtual std::optional<std::chrono::system_clock::time_point> PreviousSuccess(
      std::chrono::system_clock::time_point before) = 0;
};

struct SensorRunRequest {
  // Unset: a request with no dates (no triggering record was dated).
  std::optional<std::chrono::system_clock::time_point> logical_datetime;
  std::optional<std::chrono::system_clock::time_point> previous_logical_datetime;
  // The merged sl_options of the triggering materializations ({} when none).
  nlohmann::json sl_options = nlohmann::json::object();
};

struct SensorEvaluation {
  std::optional<SensorRunRequest> request;  // set: a run is requested
  std::string skip_reason;                  // set when no run is requested
  int64_t cursor = 0;                       // the cursor to store (see above)
};

// The history scan's depth: how many recent records of a dataset the consistency check reads.
inline constexpr int kSensorHistoryScanLimit = 100;

// One evaluation (steps above). `cursor` is the stored cursor: the greatest sequence consumed, 0 at first.
// Throws SLU-SENSOR-001/-002 (the daemon records the tick as FAILURE), SLU-CRON-* for a malformed configured cron.
SensorEvaluation EvaluateDatasetSensor(const std::vector<SensorDataset>& datasets, const SensorSettings& settings,
                                       SensorHistory& history, int64_t cursor);

}  // namespace sluice::orchestrate
