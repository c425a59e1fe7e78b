#include "core/logical_datetime.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

#include "core/clock.hpp"
#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/time_zone.hpp"

namespace sluice {
namespace {

using std::chrono::system_clock;

std::string CodeOf(void (*f)(std::string_view), std::string_view text) {
  try {
    f(text);
  } catch (const Error& e) {
    return e.diagnostics().front().code;
  }
  return "no error";
}

void Quote(std::string_view text) { QuoteDatetime(text); }
void Unquote(std::string_view text) { UnquoteDatetime(text); }
void Parse(std::string_view text) { ParseLogicalDatetime(text); }

TEST(LogicalDatetime, QuoteKeepsTheOriginalEncoding) {
  EXPECT_EQ(QuoteDatetime("2026-03-23T14:30:00+00:00"), "2026-03-23T14.30.00_00.00");
  EXPECT_EQ(QuoteDatetime("2026-03-23 14:30:00+00:00"), "2026-03-23T14.30.00_00.00");
  EXPECT_EQ(QuoteDatetime("2026-03-23T14:30:00+0000"), "2026-03-23T14.30.00_0000");
  EXPECT_EQ(QuoteDatetime("2026-03-23"), "2026-03-23");
}

TEST(LogicalDatetime, FractionsAndNegativeOffsetsRoundTrip) {
  EXPECT_EQ(QuoteDatetime("2026-03-23T14:30:00.5-05:00"), "2026-03-23T14.30.00.5-05.00");
  EXPECT_EQ(UnquoteDatetime("2026-03-23T14.30.00.5-05.00"), "2026-03-23T14:30:00.5-05:00");
  EXPECT_EQ(UnquoteDatetime("2026-03-23T14.30.00.123456789Z"), "2026-03-23T14:30:00.123456789Z");
  EXPECT_EQ(UnquoteDatetime("2026-03-23T14.30.00_00.00"), "2026-03-23T14:30:00+00:00");
  EXPECT_EQ(UnquoteDatetime("2026-03-23T14.30"), "2026-03-23T14:30");
  EXPECT_EQ(UnquoteDatetime("2026-03-23"), "2026-03-23");
}

TEST(LogicalDatetime, RoundTripHoldsOverGeneratedDatetimes) {
  std::mt19937 random(20260323);
  const char* offsets[] = {"", "Z", "+00:00", "-05:00", "+05:30", "-0330", "+1400", "-12:00"};
  for (int i = 0; i < 2000; ++i) {
    char text[64];
    std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d", 1970 + static_cast<int>(random() % 130),
                  1 + static_cast<int>(random() % 12), 1 + static_cast<int>(random() % 28),
                  static_cast<int>(random() % 24), static_cast<int>(random() % 60));
    std::string datetime = text;
    const int shape = static_cast<int>(random() % 3);
    if (shape >= 1) {
      std::snprintf(text, sizeof text, ":%02d", static_cast<int>(random() % 60));
      datetime += text;
    }
    if (shape == 2) {
      const int digits = 1 + static_cast<int>(random() % 9);
      datetime += '.';
      for (int d = 0; d < digits; ++d) datetime += static_cast<char>('0' + random() % 10);
    }
    datetime += offsets[random() % 8];
    const std::string key = QuoteDatetime(datetime);
    EXPECT_EQ(key.find_first_of(":+ "), std::string::npos) << key;
    EXPECT_EQ(UnquoteDatetime(key), datetime);
    EXPECT_EQ(QuoteDatetime(UnquoteDatetime(key)), key);
    EXPECT_EQ(ParseLogicalDatetime(key), ParseLogicalDatetime(datetime)) << datetime;
  }
}

TEST(LogicalDatetime, TextOutsideTheGrammarIsRejected) {
  EXPECT_EQ(CodeOf(Quote, ""), "SLU-DATETIME-001");
  EXPECT_EQ(CodeOf(Quote, "2026-03-23T14.30.00_00.00"), "SLU-DATETIME-001");
  EXPECT_EQ(CodeOf(Quote, "2026-02-30"), "SLU-DATETIME-001");
  EXPECT_EQ(CodeOf(Quote, "2026-03-23T24:00"), "SLU-DATETIME-001");
  EXPECT_EQ(CodeOf(Quote, "2026-03-23T14:30:00.1234567890Z"), "SLU-DATETIME-001");
  EXPECT_EQ(CodeOf(Quote, "2026-03-23T14:30:00+05"), "SLU-DATETIME-001");
  EXPECT_EQ(CodeOf(Unquote, "2026-03-23T14:30:00+00:00"), "SLU-DATETIME-002");
  EXPECT_EQ(CodeOf(Unquote, "2026-03-23T14.30.00."), "SLU-DATETIME-002");
  EXPECT_EQ(CodeOf(Parse, "yesterday"), "SLU-DATETIME-001");
}

TEST(LogicalDatetime, ParsesIsoSlTimestampAndEncodedForms) {
  const auto expected = ParseUtc("2026-03-23T19:30:00Z").value();
  EXPECT_EQ(ParseLogicalDatetime("2026-03-23T14:30:00-05:00"), expected);
  EXPECT_EQ(ParseLogicalDatetime("2026-03-23T14:30:00-0500"), expected);
  EXPECT_EQ(ParseLogicalDatetime("2026-03-23 19:30:00"), expected);
  EXPECT_EQ(ParseLogicalDatetime("2026-03-23T19.30.00_00.00"), expected);
  EXPECT_EQ(ParseLogicalDatetime("2026-03-23"), ParseUtc("2026-03-23T00:00:00Z").value());
  EXPECT_EQ(ParseLogicalDatetime("2026-03-23T19:30:00.000000001Z") - expected, std::chrono::nanoseconds(1));
}

TEST(LogicalDatetime, FormatsInSlTimestampFormat) {
  const auto instant = ParseUtc("2026-03-23T14:30:00Z").value();
  EXPECT_EQ(FormatLogicalDatetime(instant, TimeZone::Utc()), "2026-03-23T14:30:00+0000");
  EXPECT_EQ(FormatLogicalDatetime(instant, TimeZone::Named("America/New_York")), "2026-03-23T10:30:00-0400");
  EXPECT_EQ(FormatLogicalDatetime(instant, TimeZone::Named("Asia/Kolkata")), "2026-03-23T20:00:00+0530");
  const auto fractional = instant + std::chrono::milliseconds(250);
  EXPECT_EQ(FormatLogicalDatetime(fractional, TimeZone::Utc()), "2026-03-23T14:30:00.25+0000");
  EXPECT_EQ(ParseLogicalDatetime(FormatLogicalDatetime(fractional, TimeZone::Named("America/New_York"))), fractional);
}

TEST(LogicalDatetime, ScheduledDatesRangeEndsAtTheLastTickAtOrBefore) {
  const CronSchedule every_six_hours = CronSchedule::Parse("0 */6 * * *");
  const TimeZone utc = TimeZone::Utc();
  const auto on_tick = ScheduledDatesRange(every_six_hours, ParseUtc("2026-03-23T12:00:00Z").value(), utc);
  ASSERT_TRUE(on_tick.has_value());
  EXPECT_EQ(FormatLogicalDatetime(on_tick->start, utc), "2026-03-23T06:00:00+0000");
  EXPECT_EQ(FormatLogicalDatetime(on_tick->end, utc), "2026-03-23T12:00:00+0000");
  const auto between = ScheduledDatesRange(every_six_hours, ParseUtc("2026-03-23T00:00:01Z").value(), utc);
  ASSERT_TRUE(between.has_value());
  EXPECT_EQ(FormatLogicalDatetime(between->start, utc), "2026-03-22T18:00:00+0000");
  EXPECT_EQ(FormatLogicalDatetime(between->end, utc), "2026-03-23T00:00:00+0000");
}

TEST(LogicalDatetime, ClosedDailyPartitionIsThePreviousDayInTheScheduleZone) {
  const TimeZone utc = TimeZone::Utc();
  EXPECT_EQ(ClosedDailyPartition(ParseUtc("2026-03-10T00:00:00Z").value(), utc).ToString(), "2026-03-09");
  EXPECT_EQ(ClosedDailyPartition(ParseUtc("2026-03-09T23:59:59Z").value(), utc).ToString(), "2026-03-08");
  const TimeZone new_york = TimeZone::Named("America/New_York");
  // Midnight in New York on 2026-03-10 is 04:00 UTC (EDT since 2026-03-08).
  EXPECT_EQ(ClosedDailyPartition(ParseUtc("2026-03-10T04:00:00Z").value(), new_york).ToString(), "2026-03-09");
  EXPECT_EQ(ClosedDailyPartition(ParseUtc("2026-03-10T03:59:59Z").value(), new_york).ToString(), "2026-03-08");
  // The day of the spring-forward change (23 hours long) closes at the next midnight, 2026-03-09T04:00Z.
  EXPECT_EQ(ClosedDailyPartition(ParseUtc("2026-03-09T04:00:00Z").value(), new_york).ToString(), "2026-03-08");
  // A daily tick in the zone requests the day that just ended there.
  const auto tick = CronSchedule::Parse("@daily").NextAfter(ParseUtc("2026-03-08T12:00:00Z").value(), new_york);
  ASSERT_TRUE(tick.has_value());
  EXPECT_EQ(FormatUtc(*tick), "2026-03-09T04:00:00.000Z");
  EXPECT_EQ(ClosedDailyPartition(*tick, new_york).ToString(), "2026-03-08");
}

}  // namespace
}  // namespace sluice
