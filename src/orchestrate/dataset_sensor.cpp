#include "orchestrate/dataset_sensor.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/logical_datetime.hpp"
#include "core/time_zone.hpp"

namespace sluice::orchestrate {
namespace {

using std::chrono::system_clock;
using TimePoint = system_clock::time_point;

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    return lower(x) == lower(y);
  });
}

// Datetime text as the grammar writes it or as QuoteDatetime encodes it; nullopt when it is neither.
std::optional<TimePoint> ParseRecordedDatetime(std::string_view text) {
  if (text.empty()) return std::nullopt;
  try {
    return ParseLogicalDatetime(text);
  } catch (const Error&) {
    // Not plain datetime text; it may still be a key the original's lossy encoding wrote.
  }
  try {
    return ParseLogicalDatetime(UnquoteDatetime(text));
  } catch (const Error&) {
    return std::nullopt;  // undated: a malformed record must not fail every tick of the sensor
  }
}

std::optional<TimePoint> MetadataDatetime(const nlohmann::json& value) {
  if (value.is_string()) return ParseRecordedDatetime(value.get<std::string>());
  if (value.is_number()) {
    const double seconds = value.get<double>();
    // Beyond about ±292 years the instant does not fit the clock's nanoseconds: undated rather than overflow.
    if (!std::isfinite(seconds) || std::abs(seconds) > 9.0e9) return std::nullopt;
    return TimePoint(std::chrono::duration_cast<system_clock::duration>(std::chrono::duration<double>(seconds)));
  }
  return std::nullopt;
}

const nlohmann::json* MetadataField(const DatasetMaterialization& record, const char* key) {
  if (!record.metadata.is_object()) return nullptr;
  const auto it = record.metadata.find(key);
  if (it == record.metadata.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<TimePoint> PartitionDatetime(const DatasetMaterialization& record) {
  if (!record.partition.empty()) return ParseRecordedDatetime(record.partition);
  for (const char* key : {"sl_data_interval_end", "sl_scheduled_date"}) {
    if (const nlohmann::json* value = MetadataField(record, key)) return MetadataDatetime(*value);
  }
  return std::nullopt;
}

std::optional<CronSchedule> ConfiguredCron(const SensorDataset& dataset) {
  if (!dataset.cron || dataset.cron->empty() || EqualsIgnoringCase(*dataset.cron, "none")) return std::nullopt;
  return CronSchedule::Parse(*dataset.cron);
}

// sl_cron when the record names one ("None" or "" name none), else the configured cron.
std::optional<CronSchedule> RecordedCron(const DatasetMaterialization& record, const SensorDataset& dataset) {
  const nlohmann::json* value = MetadataField(record, "sl_cron");
  if (value == nullptr || !value->is_string()) return ConfiguredCron(dataset);
  const auto text = value->get<std::string>();
  if (text.empty() || EqualsIgnoringCase(text, "none")) return std::nullopt;
  try {
    return CronSchedule::Parse(text);
  } catch (const Error&) {
    return std::nullopt;  // the original's is_valid_cron: a cron it cannot read is no cron
  }
}

int64_t RecordedFreshness(const DatasetMaterialization& record, const SensorDataset& dataset) {
  const nlohmann::json* value = MetadataField(record, "sl_freshness");
  if (value == nullptr) return dataset.freshness;
  if (value->is_number_integer()) return value->get<int64_t>();
  if (value->is_number_float()) return static_cast<int64_t>(value->get<double>());
  if (value->is_string()) {
    const auto text = value->get<std::string>();
    int64_t seconds = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (error == std::errc() && end == text.data() + text.size()) return seconds;
  }
  return dataset.freshness;
}

// A configured dataset as this evaluation sees it.
struct ObservedDataset {
  const SensorDataset* configured = nullptr;
  std::optional<DatasetMaterialization> latest;  // its newest record after the cursor, if any
  std::optional<CronSchedule> cron;              // its own cron (cron_o)
  int64_t freshness = 0;
  std::optional<TimePoint> datetime;  // the partition datetime of `latest`
};

std::string UriList(const std::vector<const ObservedDataset*>& datasets) {
  std::string text = "[";
  for (const ObservedDataset* dataset : datasets) {
    if (text.size() > 1) text += ", ";
    text += dataset->configured->uri;
  }
  return text + "]";
}

nlohmann::json OptionsOf(const DatasetMaterialization& record) {
  const nlohmann::json* value = MetadataField(record, "sl_options");
  if (value == nullptr) return nlohmann::json::object();
  nlohmann::json options =
      value->is_string() ? nlohmann::json::parse(value->get<std::string>(), nullptr, false) : *value;
  const bool well_formed = options.is_object() && std::ranges::all_of(options.items(), [](const auto& section) {
                             return section.value().is_object();
                           });
  if (!well_formed) {
    throw Error(Diagnostic{"SLU-SENSOR-002",
                           "the materialization " + std::to_string(record.sequence) + " of `" + record.uri +
                               "` has sl_options that are not a JSON object of sections",
                           {},
                           "sl_options is {\"all\": {key: value}, \"<task>\": {key: value}}"});
  }
  return options;
}

// Step 3: every section and key of every triggering record; the same key set twice must agree.
nlohmann::json MergeOptions(const std::vector<ObservedDataset>& observed) {
  nlohmann::json merged = nlohmann::json::object();
  std::map<std::pair<std::string, std::string>, std::string> set_by;  // (section, key) → the URI that set it
  for (const ObservedDataset& dataset : observed) {
    if (!dataset.latest) continue;
    const nlohmann::json options = OptionsOf(*dataset.latest);
    for (const auto& [section, values] : options.items()) {
      nlohmann::json& target = merged[section];
      if (target.is_null()) target = nlohmann::json::object();
      for (const auto& [key, value] : values.items()) {
        const auto it = target.find(key);
        if (it != target.end() && *it != value) {
          throw Error(Diagnostic{"SLU-SENSOR-001",
                                 "materializations of `" + set_by[{section, key}] + "` and `" + dataset.latest->uri +
                                     "` set sl_options `" + section + "." + key +
                                     "` to different values: " + it->dump() + " and " + value.dump(),
                                 {},
                                 "make the upstream jobs agree on the option, or set it in one of them only"});
        }
        target[key] = value;
        set_by.try_emplace({section, key}, dataset.latest->uri);
      }
    }
  }
  return merged;
}

// The time between the first two ticks after `reference`; nullopt only at the end of the tz database's range.
std::optional<system_clock::duration> Frequency(const CronSchedule& schedule, TimePoint reference) {
  const auto ticks = schedule.Preview(reference, 2, TimeZone::Utc());
  if (ticks.size() < 2) return std::nullopt;
  return ticks[1] - ticks[0];
}

// §6.6 step 1: the greatest partition of a successful run before the anchor, else the start date when it is earlier.
std::optional<TimePoint> PreviousPartition(TimePoint anchor, const SensorSettings& settings, SensorHistory& history) {
  if (auto previous = history.PreviousSuccess(anchor)) return previous;
  if (settings.start_date && *settings.start_date < anchor) return settings.start_date;
  return std::nullopt;
}

struct Consistency {
  bool consistent = false;
  std::optional<TimePoint> previous;
  TimePoint max_date;
  std::vector<const ObservedDataset*> missing;
};

// §6.6 for the datasets `to_check` against `anchor`.
Consistency CheckConsistency(TimePoint anchor, const std::vector<const ObservedDataset*>& to_check,
                             const SensorSettings& settings, SensorHistory& history) {
  Consistency result;
  result.max_date = anchor;
  result.previous = PreviousPartition(anchor, settings, history);
  if (!result.previous) {
    // Nothing bounds the window from below, so no dataset could be checked.
    result.missing = to_check;
    return result;
  }
  const TimePoint previous = *result.previous;

  const std::optional<CronSchedule> data_cycle =
      settings.data_cycle ? std::optional(CronSchedule::Parse(*settings.data_cycle)) : std::nullopt;
  const std::optional<system_clock::duration> cycle = data_cycle ? Frequency(*data_cycle, anchor) : std::nullopt;

  for (const ObservedDataset* dataset : to_check) {
    const std::chrono::seconds freshness(dataset->freshness);
    const std::optional<CronSchedule>& own_cron = dataset->cron;
    bool optional = false;
    bool beyond = false;
    if (cycle) {
      if (own_cron) {
        const auto own_frequency = Frequency(*own_cron, anchor);
        optional = own_frequency && *cycle < *own_frequency;
        beyond = own_frequency && *cycle < *own_frequency + freshness;
      } else {
        optional = beyond = *cycle < freshness;
      }
      optional = optional && settings.optional_dataset_enabled;
      beyond = beyond && settings.beyond_data_cycle_enabled;
    }
    if (optional) continue;

    bool found = false;
    const std::optional<CronSchedule>& cron = own_cron ? own_cron : data_cycle;
    if (cron) {
      const auto range = ScheduledDatesRange(*cron, anchor, TimeZone::Utc());
      if (range) {
        TimePoint min = range->start;
        TimePoint max = range->end;
        if (!own_cron && previous > min) min = previous;
        if (beyond) {
          min -= freshness;
          max += freshness;
        }
        max = std::max(max, anchor);
        const auto inside = [&](const std::optional<TimePoint>& at) { return at && min < *at && *at <= max; };
        std::optional<TimePoint> partition;
        if (inside(dataset->datetime)) {
          partition = dataset->datetime;
        } else {
          const auto records = history.Recent(dataset->configured->uri, kSensorHistoryScanLimit);
          for (auto it = records.rbegin(); it != records.rend() && !partition; ++it) {
            if (const auto at = PartitionDatetime(*it); inside(at)) partition = at;
          }
        }
        if (partition) {
          found = true;
          result.max_date = std::max(result.max_date, *partition);
        }
      }
    } else {
      // Newest first: every partition inside the window raises the max date, until one at or before the anchor.
      const TimePoint low = anchor - freshness;
      const TimePoint high = anchor + freshness;
      const auto records = history.Recent(dataset->configured->uri, kSensorHistoryScanLimit);
      for (auto it = records.rbegin(); it != records.rend(); ++it) {
        const auto at = PartitionDatetime(*it);
        if (!at || *at <= previous || *at < low || *at > high) continue;
        found = true;
        result.max_date = std::max(result.max_date, *at);
        if (*at <= anchor) break;
      }
    }
    if (!found) result.missing.push_back(dataset);
  }
  result.consistent = result.missing.empty();
  return result;
}

int64_t CursorPast(const std::vector<ObservedDataset>& observed, int64_t cursor) {
  for (const ObservedDataset& dataset : observed) {
    if (dataset.latest) cursor = std::max(cursor, dataset.latest->sequence);
  }
  return cursor;
}

}  // namespace

TriggeringStrategy ParseTriggeringStrategy(std::string_view text) {
  return EqualsIgnoringCase(text, "all") ? TriggeringStrategy::kAll : TriggeringStrategy::kAny;
}

SensorEvaluation EvaluateDatasetSensor(const std::vector<SensorDataset>& datasets, const SensorSettings& settings,
                                       SensorHistory& history, int64_t cursor) {
  std::vector<ObservedDataset> observed;
  observed.reserve(datasets.size());
  for (const SensorDataset& dataset : datasets) {
    ObservedDataset entry;
    entry.configured = &dataset;
    entry.latest = history.LatestAfter(dataset.uri, cursor);
    if (entry.latest) {
      entry.cron = RecordedCron(*entry.latest, dataset);
      entry.freshness = RecordedFreshness(*entry.latest, dataset);
      entry.datetime = PartitionDatetime(*entry.latest);
    } else {
      entry.cron = ConfiguredCron(dataset);
      entry.freshness = dataset.freshness;
    }
    observed.push_back(std::move(entry));
  }

  std::vector<const ObservedDataset*> materialized;
  std::vector<const ObservedDataset*> unmaterialized;
  for (const ObservedDataset& dataset : observed) (dataset.latest ? materialized : unmaterialized).push_back(&dataset);

  SensorEvaluation evaluation;
  evaluation.cursor = cursor;
  const bool gate_passes = settings.strategy == TriggeringStrategy::kAll ? !observed.empty() && unmaterialized.empty()
                                                                         : !materialized.empty();
  if (!gate_passes) {
    evaluation.skip_reason = "No materializations observed";
    return evaluation;
  }

  SensorRunRequest request;
  request.sl_options = MergeOptions(observed);

  // The anchor: the greatest datetime; on a tie, the first dataset in configured order.
  const ObservedDataset* anchor = nullptr;
  for (const ObservedDataset* dataset : materialized) {
    if (dataset->datetime && (anchor == nullptr || *dataset->datetime > *anchor->datetime)) anchor = dataset;
  }
  if (anchor == nullptr) {
    if (!unmaterialized.empty()) {
      evaluation.skip_reason =
          "Observed materializations for " + UriList(materialized) + ", but not for " + UriList(unmaterialized);
      return evaluation;
    }
    evaluation.request = std::move(request);
    evaluation.cursor = CursorPast(observed, cursor);
    return evaluation;
  }
  const TimePoint anchor_datetime = *anchor->datetime;

  std::vector<const ObservedDataset*> to_check;
  for (const ObservedDataset& dataset : observed) {
    if (&dataset != anchor) to_check.push_back(&dataset);
  }
  if (to_check.empty()) {
    request.logical_datetime = anchor_datetime;
    request.previous_logical_datetime = PreviousPartition(anchor_datetime, settings, history);
    evaluation.request = std::move(request);
    evaluation.cursor = CursorPast(observed, cursor);
    return evaluation;
  }

  const Consistency consistency = CheckConsistency(anchor_datetime, to_check, settings, history);
  if (!consistency.consistent) {
    // When every missing dataset has never been materialized, they are named as such (the pinned outcome of ANY
    // with one of two materialized); a dataset with records, none in the window, is "not consistent".
    std::vector<const ObservedDataset*> never_seen;
    for (const ObservedDataset* dataset : consistency.missing) {
      if (!dataset->latest && history.Recent(dataset->configured->uri, 1).empty()) never_seen.push_back(dataset);
    }
    evaluation.skip_reason =
        never_seen.size() == consistency.missing.size()
            ? "Observed materializations for " + UriList(materialized) + ", but not for " + UriList(never_seen)
            : "Observed materializations for " + UriList(materialized) + ", but some datasets " +
                  UriList(consistency.missing) + " are not consistent with " +
                  FormatLogicalDatetime(anchor_datetime, TimeZone::Utc());
    return evaluation;
  }
  request.logical_datetime = consistency.max_date;
  request.previous_logical_datetime = consistency.previous;
  evaluation.request = std::move(request);
  evaluation.cursor = CursorPast(observed, cursor);
  return evaluation;
}

}  // namespace sluice::orchestrate
