// The dataset sensor (reference §6.5–§6.6) over an in-memory history: the pinned ANY/ALL table, undated requests,
// the sl_options merge, the anchor, the consistency windows (cron, data cycle, optional, beyond, no cron), the
// previous partition and the cursor.
#include "orchestrate/dataset_sensor.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/diagnostic.hpp"
#include "core/logical_datetime.hpp"
#include "orchestrate/orchestrate_test_support.hpp"

namespace sluice::orchestrate {
namespace {

using nlohmann::json;
using TimePoint = std::chrono::system_clock::time_point;

TimePoint At(std::string_view text) { return ParseLogicalDatetime(text); }

constexpr const char* kHourly = "0 * * * *";
constexpr const char* kDaily = "0 0 * * *";

// Materializations in store order (sequence = position + 1) and the job's successful runs.
class FakeHistory : public SensorHistory {
 public:
  // Records a materialization of `uri` whose partition is `datetime` encoded ("" for none); returns its sequence.
  int64_t Materialize(const std::string& uri, std::string_view datetime, json metadata = json::object()) {
    const int64_t sequence = static_cast<int64_t>(records_.size()) + 1;
    records_.push_back({sequence, uri, datetime.empty() ? "" : QuoteDatetime(datetime), std::move(metadata)});
    return sequence;
  }
  void Succeeded(std::string_view logical) { successes_.push_back(At(logical)); }

  std::optional<DatasetMaterialization> LatestAfter(const std::string& uri, int64_t after) override {
    for (auto it = records_.rbegin(); it != records_.rend(); ++it) {
      if (it->uri == uri && it->sequence > after) return *it;
    }
    return std::nullopt;
  }
  std::vector<DatasetMaterialization> Recent(const std::string& uri, int limit) override {
    std::vector<DatasetMaterialization> found;
    for (const auto& record : records_) {
      if (record.uri == uri) found.push_back(record);
    }
    if (static_cast<int>(found.size()) > limit) found.erase(found.begin(), found.end() - limit);
    return found;
  }
  std::optional<TimePoint> PreviousSuccess(TimePoint before) override {
    std::optional<TimePoint> previous;
    for (const TimePoint success : successes_) {
      if (success < before && (!previous || success > *previous)) previous = success;
    }
    return previous;
  }

 private:
  std::vector<DatasetMaterialization> records_;
  std::vector<TimePoint> successes_;
};

SensorSettings Strategy(TriggeringStrategy strategy) {
  SensorSettings settings;
  settings.strategy = strategy;
  return settings;
}

TEST(TriggeringStrategyText, AnyOrAllIgnoringCaseElseAny) {
  EXPECT_EQ(ParseTriggeringStrategy("all"), TriggeringStrategy::kAll);
  EXPECT_EQ(ParseTriggeringStrategy("ALL"), TriggeringStrategy::kAll);
  EXPECT_EQ(ParseTriggeringStrategy("Any"), TriggeringStrategy::kAny);
  EXPECT_EQ(ParseTriggeringStrategy("every"), TriggeringStrategy::kAny);
  EXPECT_EQ(ParseTriggeringStrategy(""), TriggeringStrategy::kAny);
}

// §6.5's pinned table, row 1: ANY passes the gate with one of two, but the other is still required.
TEST(DatasetSensorGate, AnyWithOneOfTwoSkipsAfterTheGate) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Materialize("a", "");
  const auto undated = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 0);
  EXPECT_FALSE(undated.request);
  EXPECT_EQ(undated.skip_reason, "Observed materializations for [a], but not for [b]");
  EXPECT_EQ(undated.cursor, 0);

  // Dated, the consistency check finds b missing; b was never materialized, so it is named as such.
  FakeHistory dated;
  dated.Succeeded("2026-03-10T04:00:00Z");
  dated.Materialize("a", "2026-03-10T05:00:00+00:00");
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), dated, 0);
  EXPECT_FALSE(evaluation.request);
  EXPECT_EQ(evaluation.skip_reason, "Observed materializations for [a], but not for [b]");
  EXPECT_EQ(evaluation.cursor, 0);
}

// Row 2: ALL fails the gate with one of two.
TEST(DatasetSensorGate, AllWithOneOfTwoSkipsAtTheGate) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("a", "2026-03-10T05:00:00+00:00");
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  EXPECT_FALSE(evaluation.request);
  EXPECT_EQ(evaluation.skip_reason, "No materializations observed");
  EXPECT_EQ(evaluation.cursor, 0);
}

// Row 3: every dataset materialized requests a run, whatever the strategy.
TEST(DatasetSensorGate, AnyOrAllWithEveryDatasetRequestsARun) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  for (const auto strategy : {TriggeringStrategy::kAny, TriggeringStrategy::kAll}) {
    FakeHistory history;
    history.Succeeded("2026-03-10T03:00:00Z");
    history.Succeeded("2026-03-10T04:00:00Z");
    history.Succeeded("2026-03-10T05:00:00Z");  // not earlier than the anchor: not the previous one
    history.Materialize("a", "2026-03-10T05:00:00+00:00");
    history.Materialize("b", "2026-03-10T04:30:00+00:00");
    const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(strategy), history, 0);
    ASSERT_TRUE(evaluation.request);
    EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T05:00:00Z"));
    EXPECT_EQ(evaluation.request->previous_logical_datetime, At("2026-03-10T04:00:00Z"));
    EXPECT_EQ(evaluation.request->sl_options, json::object());
    EXPECT_EQ(evaluation.skip_reason, "");
    EXPECT_EQ(evaluation.cursor, 2);
  }
}

TEST(DatasetSensorGate, NoDatasetsNeverPassesEvenAll) {
  FakeHistory history;
  const auto evaluation = EvaluateDatasetSensor({}, Strategy(TriggeringStrategy::kAll), history, 0);
  EXPECT_FALSE(evaluation.request);
  EXPECT_EQ(evaluation.skip_reason, "No materializations observed");
}

TEST(DatasetSensorGate, ARecordAtOrBeforeTheCursorDoesNotPass) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}};
  FakeHistory history;
  const int64_t sequence = history.Materialize("a", "2026-03-10T05:00:00+00:00");
  const auto consumed = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, sequence);
  EXPECT_FALSE(consumed.request);
  EXPECT_EQ(consumed.skip_reason, "No materializations observed");
  EXPECT_EQ(consumed.cursor, sequence);

  const auto fresh = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, sequence - 1);
  ASSERT_TRUE(fresh.request);
  EXPECT_EQ(fresh.cursor, sequence);
}

TEST(DatasetSensorCursor, UnchangedOnASkipAdvancedOnARequest) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  for (int i = 0; i < 5; ++i) history.Materialize("other", "2026-03-01");
  history.Materialize("a", "2026-03-10T05:00:00+00:00");  // 6
  history.Materialize("b", "2026-03-10T02:00:00+00:00");  // 7: outside a's hour
  const auto skipped = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 5);
  EXPECT_FALSE(skipped.request);
  EXPECT_EQ(skipped.cursor, 5);

  history.Materialize("b", "2026-03-10T05:00:00+00:00");  // 8: now consistent; a's 6 is still pending
  const auto requested = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 5);
  ASSERT_TRUE(requested.request);
  EXPECT_EQ(requested.request->logical_datetime, At("2026-03-10T05:00:00Z"));
  EXPECT_EQ(requested.cursor, 8);

  const auto again = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, requested.cursor);
  EXPECT_FALSE(again.request);
  EXPECT_EQ(again.skip_reason, "No materializations observed");
  EXPECT_EQ(again.cursor, 8);
}

TEST(DatasetSensorUndated, EveryDatasetUndatedRequestsARunWithNoDates) {
  const std::vector<SensorDataset> datasets{{"a", std::nullopt, 0}, {"b", kDaily, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("a", "", {{"sl_options", {{"all", {{"k", "v"}}}}}});
  history.Materialize("b", "", {{"sl_cron", "None"}});
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(evaluation.request);
  EXPECT_EQ(evaluation.request->logical_datetime, std::nullopt);
  EXPECT_EQ(evaluation.request->previous_logical_datetime, std::nullopt);
  EXPECT_EQ(evaluation.request->sl_options, json({{"all", {{"k", "v"}}}}));
  EXPECT_EQ(evaluation.cursor, 2);
}

TEST(DatasetSensorUndated, AnUnparseablePartitionIsUndatedNotAnError) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}, {"c", kHourly, 0}};
  FakeHistory history;
  history.Materialize("a", "");
  // The first source present decides: a bad sl_data_interval_end hides a good sl_scheduled_date.
  history.Materialize("b", "", {{"sl_data_interval_end", "yesterday"}, {"sl_scheduled_date", "2026-03-10"}});
  history.Materialize("c", "", {{"sl_scheduled_date", 1e300}});  // out of the clock's range
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 0);
  ASSERT_TRUE(evaluation.request);
  EXPECT_EQ(evaluation.request->logical_datetime, std::nullopt);
}

TEST(DatasetSensorDatetime, FromTheMetadataWhenThePartitionIsEmpty) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("a", "", {{"sl_data_interval_end", "2026-03-10T05:00:00+0000"}});
  // 2026-03-10T04:30:00Z as seconds since the epoch.
  history.Materialize("b", "", {{"sl_scheduled_date", 1773117000}});
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 0);
  ASSERT_TRUE(evaluation.request) << evaluation.skip_reason;
  EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T05:00:00Z"));
  EXPECT_EQ(evaluation.request->previous_logical_datetime, At("2026-03-10T04:00:00Z"));
}

TEST(DatasetSensorOptions, IdenticalValuesMergeAcrossRecords) {
  const std::vector<SensorDataset> datasets{{"a", std::nullopt, 0}, {"b", std::nullopt, 0}};
  FakeHistory history;
  history.Materialize("a", "", {{"sl_options", {{"all", {{"x", "1"}}}}}});
  history.Materialize("b", "", {{"sl_options", R"({"all": {"x": "1"}, "load_orders": {"y": "2"}})"}});
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(evaluation.request);
  EXPECT_EQ(evaluation.request->sl_options, json({{"all", {{"x", "1"}}}, {"load_orders", {{"y", "2"}}}}));
}

TEST(DatasetSensorOptions, ConflictingValuesFailTheTick) {
  const std::vector<SensorDataset> datasets{{"a", std::nullopt, 0}, {"b", std::nullopt, 0}};
  FakeHistory history;
  history.Materialize("a", "", {{"sl_options", {{"all", {{"x", "1"}}}}}});
  history.Materialize("b", "", {{"sl_options", {{"all", {{"x", "2"}}}}}});
  try {
    EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
    FAIL() << "expected SLU-SENSOR-001";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-SENSOR-001");
    EXPECT_EQ(error.diagnostics().front().message,
              "materializations of `a` and `b` set sl_options `all.x` to different values: \"1\" and \"2\"");
  }
}

TEST(DatasetSensorOptions, MalformedOptionsFailTheTick) {
  const std::vector<SensorDataset> datasets{{"a", std::nullopt, 0}};
  for (const json& options : {json("not json"), json({{"all", "x"}}), json::array()}) {
    FakeHistory history;
    history.Materialize("a", "", {{"sl_options", options}});
    EXPECT_EQ(ErrorOf([&] { EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 0); }).code,
              "SLU-SENSOR-002")
        << options.dump();
  }
}

// The anchor is the greatest datetime wherever it sits in the configured order; the others are checked against it.
TEST(DatasetSensorAnchor, IsTheGreatestDatetime) {
  const std::vector<SensorDataset> datasets{{"a", kDaily, 0}, {"b", kHourly, 0}, {"c", kHourly, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("a", "2026-03-10");
  history.Materialize("b", "2026-03-10T05:00:00+00:00");
  history.Materialize("c", "2026-03-10T04:30:00+00:00");
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(evaluation.request) << evaluation.skip_reason;
  EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T05:00:00Z"));

  FakeHistory stale;
  stale.Succeeded("2026-03-10T04:00:00Z");
  stale.Materialize("a", "2026-03-10");
  stale.Materialize("b", "2026-03-10T05:00:00+00:00");
  stale.Materialize("c", "2026-03-10T03:00:00+00:00");
  const auto skipped = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), stale, 0);
  EXPECT_FALSE(skipped.request);
  EXPECT_EQ(skipped.skip_reason,
            "Observed materializations for [a, b, c], but some datasets [c] are not consistent with "
            "2026-03-10T05:00:00+0000");
}

TEST(DatasetSensorAnchor, AloneRequestsARunAtTheAnchor) {
  const std::vector<SensorDataset> datasets{{"a", kDaily, 0}};
  FakeHistory history;
  history.Materialize("a", "2026-03-10");
  const auto first = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(first.request);
  EXPECT_EQ(first.request->logical_datetime, At("2026-03-10"));
  EXPECT_EQ(first.request->previous_logical_datetime, std::nullopt);

  history.Succeeded("2026-03-09");
  const auto second = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(second.request);
  EXPECT_EQ(second.request->previous_logical_datetime, At("2026-03-09"));
}

TEST(DatasetSensorConsistency, DailyAndHourly) {
  const std::vector<SensorDataset> datasets{{"hourly", kHourly, 0}, {"daily", kDaily, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("hourly", "2026-03-10T05:00:00+00:00");
  history.Materialize("daily", "2026-03-10");  // the day that closed at 00:00, inside (03-09, 03-10]
  const auto consistent = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(consistent.request) << consistent.skip_reason;
  EXPECT_EQ(consistent.request->logical_datetime, At("2026-03-10T05:00:00Z"));
  EXPECT_EQ(consistent.request->previous_logical_datetime, At("2026-03-10T04:00:00Z"));

  FakeHistory late;
  late.Succeeded("2026-03-10T04:00:00Z");
  late.Materialize("hourly", "2026-03-10T05:00:00+00:00");
  late.Materialize("daily", "2026-03-09");
  const auto inconsistent = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), late, 0);
  EXPECT_FALSE(inconsistent.request);
  EXPECT_EQ(inconsistent.skip_reason,
            "Observed materializations for [hourly, daily], but some datasets [daily] are not consistent with "
            "2026-03-10T05:00:00+0000");
}

TEST(DatasetSensorConsistency, TheRecordedCronOverridesTheConfiguredOne) {
  // Configured hourly, recorded daily: midnight is inside the day (03-09, 03-10] widened to the 05:00 anchor, but
  // not inside the hour (04:00, 05:00].
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("a", "2026-03-10T05:00:00+00:00");
  history.Materialize("b", "2026-03-10", {{"sl_cron", kDaily}});
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), history, 0);
  ASSERT_TRUE(evaluation.request) << evaluation.skip_reason;
  EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T05:00:00Z"));

  FakeHistory configured;
  configured.Succeeded("2026-03-10T04:00:00Z");
  configured.Materialize("a", "2026-03-10T05:00:00+00:00");
  configured.Materialize("b", "2026-03-10");
  EXPECT_FALSE(EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAll), configured, 0).request);
}

TEST(DatasetSensorConsistency, FindsADatasetInItsHistoryScan) {
  const std::vector<SensorDataset> datasets{{"hourly", kHourly, 0}, {"daily", kDaily, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("daily", "2026-03-10");                  // 1: consumed by an earlier request
  history.Materialize("daily", "2026-03-12");                  // 2: consumed too, and outside the window
  history.Materialize("hourly", "2026-03-10T05:00:00+00:00");  // 3
  const auto evaluation = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, 2);
  ASSERT_TRUE(evaluation.request) << evaluation.skip_reason;
  EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T05:00:00Z"));
  EXPECT_EQ(evaluation.cursor, 3);

  FakeHistory without;
  without.Succeeded("2026-03-10T04:00:00Z");
  without.Materialize("daily", "2026-03-12");
  without.Materialize("daily", "2026-03-09");
  without.Materialize("hourly", "2026-03-10T05:00:00+00:00");
  const auto skipped = EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), without, 2);
  EXPECT_FALSE(skipped.request);
  EXPECT_EQ(skipped.skip_reason,
            "Observed materializations for [hourly], but some datasets [daily] are not consistent with "
            "2026-03-10T05:00:00+0000");
  EXPECT_EQ(skipped.cursor, 2);
}

TEST(DatasetSensorConsistency, OptionalDatasetsAreSkippedOnlyWhenEnabledWithADataCycle) {
  // With an hourly data cycle, a daily dataset (less frequent) is optional.
  const std::vector<SensorDataset> datasets{{"hourly", kHourly, 0}, {"daily", kDaily, 0}};
  FakeHistory history;
  history.Succeeded("2026-03-10T04:00:00Z");
  history.Materialize("hourly", "2026-03-10T05:00:00+00:00");

  SensorSettings settings;
  settings.data_cycle = kHourly;
  settings.optional_dataset_enabled = true;
  const auto skipped_optional = EvaluateDatasetSensor(datasets, settings, history, 0);
  ASSERT_TRUE(skipped_optional.request) << skipped_optional.skip_reason;
  EXPECT_EQ(skipped_optional.request->logical_datetime, At("2026-03-10T05:00:00Z"));

  settings.optional_dataset_enabled = false;
  EXPECT_FALSE(EvaluateDatasetSensor(datasets, settings, history, 0).request);

  settings.optional_dataset_enabled = true;
  settings.data_cycle.reset();
  EXPECT_FALSE(EvaluateDatasetSensor(datasets, settings, history, 0).request);

  // A data cycle as slow as the dataset makes nothing optional.
  settings.data_cycle = kDaily;
  EXPECT_FALSE(EvaluateDatasetSensor(datasets, settings, history, 0).request);
}

TEST(DatasetSensorConsistency, BeyondTheDataCycleWidensByFreshness) {
  // Anchor 01:00; the daily window is (03-09T00:00, 03-10T00:00], widened by 2 hours each side when beyond.
  const std::vector<SensorDataset> datasets{{"hourly", kHourly, 0}, {"daily", kDaily, 7200}};
  FakeHistory history;
  history.Succeeded("2026-03-10T00:00:00Z");
  history.Materialize("hourly", "2026-03-10T01:00:00+00:00");
  history.Materialize("daily", "2026-03-08T23:00:00+00:00");
  SensorSettings settings;
  settings.data_cycle = kHourly;
  const auto widened = EvaluateDatasetSensor(datasets, settings, history, 0);
  ASSERT_TRUE(widened.request) << widened.skip_reason;
  EXPECT_EQ(widened.request->logical_datetime, At("2026-03-10T01:00:00Z"));
  EXPECT_EQ(widened.request->previous_logical_datetime, At("2026-03-10T00:00:00Z"));

  settings.beyond_data_cycle_enabled = false;
  const auto narrow = EvaluateDatasetSensor(datasets, settings, history, 0);
  EXPECT_FALSE(narrow.request);
  EXPECT_EQ(narrow.skip_reason,
            "Observed materializations for [hourly, daily], but some datasets [daily] are not consistent with "
            "2026-03-10T01:00:00+0000");

  // Without a data cycle there is no "beyond" at all.
  settings.beyond_data_cycle_enabled = true;
  settings.data_cycle.reset();
  EXPECT_FALSE(EvaluateDatasetSensor(datasets, settings, history, 0).request);
}

TEST(DatasetSensorConsistency, APartitionFoundAfterTheAnchorRaisesTheLogicalDatetime) {
  // The daily dataset's 01:30 partition was consumed earlier; beyond widens the window's end to 02:00.
  const std::vector<SensorDataset> datasets{{"hourly", kHourly, 0}, {"daily", kDaily, 7200}};
  FakeHistory history;
  history.Succeeded("2026-03-10T00:00:00Z");
  history.Materialize("daily", "2026-03-10T01:30:00+00:00");   // 1
  history.Materialize("hourly", "2026-03-10T01:00:00+00:00");  // 2
  SensorSettings settings;
  settings.data_cycle = kHourly;
  const auto evaluation = EvaluateDatasetSensor(datasets, settings, history, 1);
  ASSERT_TRUE(evaluation.request) << evaluation.skip_reason;
  EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T01:30:00Z"));
  EXPECT_EQ(evaluation.request->previous_logical_datetime, At("2026-03-10T00:00:00Z"));
  EXPECT_EQ(evaluation.cursor, 2);
}

TEST(DatasetSensorConsistency, WithoutACronTheWindowIsFreshnessAroundTheAnchor) {
  // No cron, freshness 30 minutes: the window is [04:30, 05:30] around the 05:00 anchor.
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", std::nullopt, 1800}};
  const auto evaluate = [&](const std::vector<std::string>& b_partitions, int64_t cursor, const char* previous) {
    FakeHistory history;
    history.Succeeded(previous);
    for (const auto& partition : b_partitions) history.Materialize("b", partition);
    history.Materialize("a", "2026-03-10T05:00:00+00:00");
    return EvaluateDatasetSensor(datasets, Strategy(TriggeringStrategy::kAny), history, cursor);
  };
  const auto inside = evaluate({"2026-03-10T04:40:00+00:00"}, 0, "2026-03-10T04:00:00Z");
  ASSERT_TRUE(inside.request) << inside.skip_reason;
  EXPECT_EQ(inside.request->logical_datetime, At("2026-03-10T05:00:00Z"));

  const auto early = evaluate({"2026-03-10T04:20:00+00:00"}, 0, "2026-03-10T04:00:00Z");
  EXPECT_FALSE(early.request);
  EXPECT_EQ(early.skip_reason,
            "Observed materializations for [a, b], but some datasets [b] are not consistent with "
            "2026-03-10T05:00:00+0000");

  // A partition not later than the previous run's is ignored.
  EXPECT_FALSE(evaluate({"2026-03-10T04:40:00+00:00"}, 0, "2026-03-10T04:45:00Z").request);

  // Newest first: 05:20 (after the anchor) raises the logical datetime; 04:40 ends the scan.
  const auto later = evaluate({"2026-03-10T04:40:00+00:00", "2026-03-10T05:20:00+00:00"}, 2, "2026-03-10T04:00:00Z");
  ASSERT_TRUE(later.request) << later.skip_reason;
  EXPECT_EQ(later.request->logical_datetime, At("2026-03-10T05:20:00Z"));
  EXPECT_EQ(later.cursor, 3);
}

TEST(DatasetSensorPrevious, FromTheStartDateWhenNoRunSucceeded) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Materialize("a", "2026-03-10T05:00:00+00:00");
  history.Materialize("b", "2026-03-10T05:00:00+00:00");
  SensorSettings settings;
  settings.start_date = At("2026-03-01");
  const auto evaluation = EvaluateDatasetSensor(datasets, settings, history, 0);
  ASSERT_TRUE(evaluation.request) << evaluation.skip_reason;
  EXPECT_EQ(evaluation.request->logical_datetime, At("2026-03-10T05:00:00Z"));
  EXPECT_EQ(evaluation.request->previous_logical_datetime, At("2026-03-01"));
}

TEST(DatasetSensorPrevious, NoneAndNoEarlierStartDateSkips) {
  const std::vector<SensorDataset> datasets{{"a", kHourly, 0}, {"b", kHourly, 0}};
  FakeHistory history;
  history.Materialize("a", "2026-03-10T05:00:00+00:00");
  history.Materialize("b", "2026-03-10T05:00:00+00:00");
  const std::string reason =
      "Observed materializations for [a, b], but some datasets [b] are not consistent with 2026-03-10T05:00:00+0000";

  const auto without = EvaluateDatasetSensor(datasets, SensorSettings{}, history, 0);
  EXPECT_FALSE(without.request);
  EXPECT_EQ(without.skip_reason, reason);
  EXPECT_EQ(without.cursor, 0);

  SensorSettings settings;
  settings.start_date = At("2026-03-10T05:00:00Z");  // not earlier than the anchor
  const auto at_anchor = EvaluateDatasetSensor(datasets, settings, history, 0);
  EXPECT_FALSE(at_anchor.request);
  EXPECT_EQ(at_anchor.skip_reason, reason);
}

}  // namespace
}  // namespace sluice::orchestrate
