#include "state/run_event.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "state/state_test_support.hpp"

namespace sluice {
namespace {

using nlohmann::json;

TEST(RunEvent, SampleCoversEveryKindInVariantOrder) {
  std::vector<RunEvent> events = OneEventOfEveryKind();
  ASSERT_EQ(events.size(), std::variant_size_v<RunEvent>);
  for (size_t i = 0; i < events.size(); ++i) EXPECT_EQ(events[i].index(), i);
}

TEST(RunEvent, KindNamesAreTheStoredContract) {
  std::vector<std::string> names;
  for (const RunEvent& event : OneEventOfEveryKind()) names.push_back(EventKindName(event));
  EXPECT_EQ(names, (std::vector<std::string>{"run_started", "step_started", "materialization", "step_failed",
                                             "step_skipped", "step_finished", "run_finished",
                                             "run_waiting", "statement", "step_note"}));
}

TEST(RunEvent, EveryKindRoundTripsThroughJsonText) {
  for (const RunEvent& event : OneEventOfEveryKind()) {
    std::string text = EventToJson(event).dump();
    RunEvent back = EventFromJson(EventKindName(event), json::parse(text));
    EXPECT_EQ(back, event) << text;
  }
}

TEST(RunEvent, MaterializationPayloadHasStableFieldNames) {
  json payload = EventToJson(MaterializationEvent{"silver.orders", "2026-01-01", "2026-01-02", 10, 2, "h"});
  EXPECT_EQ(payload, json::parse(R"({"asset": "silver.orders", "window_start": "2026-01-01",
                                     "window_end": "2026-01-02", "rows_written": 10, "rows_dropped": 2,
                                     "sql_hash": "h", "view": false})"));
}

TEST(RunEvent, AViewsMaterializationSaysSoAndOldPayloadsReadAsTables) {
  MaterializationEvent view{"gold.top", std::nullopt, std::nullopt, 0, 0, "h", true};
  EXPECT_EQ(EventToJson(view).at("view"), true);
  EXPECT_EQ(EventFromJson("materialization", EventToJson(view)), RunEvent(view));
  json old = EventToJson(view);
  old.erase("view");
  EXPECT_FALSE(std::get<MaterializationEvent>(EventFromJson("materialization", old)).view);
}

TEST(RunEvent, UnpartitionedMaterializationStoresNullWindow) {
  MaterializationEvent event{"gold.totals", std::nullopt, std::nullopt, 3, 0, "h"};
  json payload = EventToJson(event);
  EXPECT_TRUE(payload.at("window_start").is_null());
  EXPECT_TRUE(payload.at("window_end").is_null());
  EXPECT_EQ(EventFromJson("materialization", payload), RunEvent(event));
}

TEST(RunEvent, StepFailedKeepsEveryDiagnosticField) {
  json payload = EventToJson(StepFailedEvent{"a.b", {EventDiagnostic{"C", "m", "f.sql", 3, 4, "h"}}});
  EXPECT_EQ(payload.at("diagnostics"),
            json::parse(R"([{"code": "C", "message": "m", "file": "f.sql", "line": 3,
                                                        "column": 4, "hint": "h"}])"));
}

TEST(RunEvent, MissingFieldsTakeTheirDefaults) {
  EXPECT_EQ(EventFromJson("step_finished", json{{"asset", "a.b"}}), RunEvent(StepFinishedEvent{"a.b", 0}));
  EXPECT_EQ(EventFromJson("materialization", json::object()), RunEvent(MaterializationEvent{}));
  EXPECT_EQ(EventFromJson("step_failed", json{{"asset", "a.b"}, {"diagnostics", nullptr}}),
            RunEvent(StepFailedEvent{"a.b", {}}));
}

TEST(RunEvent, NullFieldsReadAsMissingAtEveryDepth) {
  EXPECT_EQ(EventFromJson("step_failed", json::parse(R"({"asset": null, "diagnostics": [{"code": "C", "file": null,
                                                        "line": null, "hint": "h"}]})")),
            RunEvent(StepFailedEvent{"", {EventDiagnostic{"C", "", "", 0, 0, "h"}}}));
  EXPECT_EQ(EventFromJson("run_started", json::parse(R"({"selection": "s", "assets": null})")),
            RunEvent(RunStartedEvent{"s", {}}));
  EXPECT_THROW(EventFromJson("run_started", json::parse(R"({"assets": ["a", null]})")), std::invalid_argument);
}

TEST(RunEvent, UnknownKindIsRejected) {
  EXPECT_THROW(EventFromJson("step_exploded", json::object()), std::invalid_argument);
  EXPECT_THROW(EventFromJson("", json::object()), std::invalid_argument);
}

TEST(RunEvent, MalformedPayloadIsRejected) {
  EXPECT_THROW(EventFromJson("step_started", json::array()), std::invalid_argument);
  EXPECT_THROW(EventFromJson("step_started", json(nullptr)), std::invalid_argument);
  EXPECT_THROW(EventFromJson("step_finished", json{{"duration_ms", "long"}}), std::invalid_argument);
  EXPECT_THROW(EventFromJson("step_failed", json{{"diagnostics", "none"}}), std::invalid_argument);
  EXPECT_THROW(EventFromJson("step_failed", json{{"diagnostics", json::array({1})}}), std::invalid_argument);
  EXPECT_THROW(EventFromJson("run_started", json{{"assets", "a"}}), std::invalid_argument);
}

// The events of testdata/run_events.golden, line by line: every kind, and the edge values of each field kind. The file
// is the stored form of events, which old rows keep: it is never regenerated; a new kind or field adds lines.
std::vector<RunEvent> GoldenEvents() {
  std::vector<RunEvent> events = OneEventOfEveryKind();
  events.push_back(MaterializationEvent{"gold.totals", std::nullopt, std::nullopt, 3, 0, "h", true});
  events.push_back(MaterializationEvent{"gold.big", "2026-01-01", std::nullopt, int64_t{1} << 40, -1, "", false});
  events.push_back(StepFailedEvent{"a.b", {}});
  events.push_back(StepFailedEvent{"a.b", {EventDiagnostic{}}});
  events.push_back(RunStartedEvent{"", {}});
  events.push_back(StepFinishedEvent{"tab\tand\nnewline \u00e9 \\", -3});
  events.push_back(StatementEvent{"s", "", "SELECT '\u2028' AS \"x\"\n"});
  return events;
}

std::filesystem::path GoldenFile() {
  return std::filesystem::path(SLUICE_SOURCE_DIR) / "src/state/testdata/run_events.golden";
}

TEST(RunEvent, EveryKindEncodesAsTheGoldenFileRecordsAndItsLinesDecode) {
  std::ifstream in(GoldenFile());
  ASSERT_TRUE(in) << GoldenFile();
  std::vector<RunEvent> events = GoldenEvents();
  std::string line;
  size_t index = 0;
  for (; std::getline(in, line); ++index) {
    ASSERT_LT(index, events.size()) << "more golden lines than events";
    const size_t tab = line.find('\t');
    ASSERT_NE(tab, std::string::npos) << line;
    const std::string kind = line.substr(0, tab);
    const std::string payload = line.substr(tab + 1);
    EXPECT_EQ(kind, EventKindName(events[index])) << index;
    EXPECT_EQ(EventToJson(events[index]).dump(), payload) << index;
    EXPECT_EQ(EventFromJson(kind, json::parse(payload)), events[index]) << payload;
  }
  EXPECT_EQ(index, events.size());
}

}  // namespace
}  // namespace sluice
