#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/cron_schedule.hpp"
#include "core/diagnostic.hpp"
#include "core/tick_plan.hpp"
#include "core/time_zone.hpp"

namespace sluice {
namespace {

using std::chrono::system_clock;

system_clock::time_point At(const std::string& utc) {
  const auto parsed = ParseUtc(utc);
  EXPECT_TRUE(parsed.has_value()) << utc;
  return parsed.value_or(system_clock::time_point{});
}

std::string Utc(std::optional<system_clock::time_point> t) { return t ? FormatUtc(*t) : "none"; }

std::vector<std::string> PreviewUtc(const std::string& cron, const std::string& after, int n,
                                    const TimeZone& zone = TimeZone::Utc()) {
  std::vector<std::string> out;
  for (const auto t : CronSchedule::Parse(cron).Preview(At(after), n, zone)) out.push_back(FormatUtc(t));
  return out;
}

Diagnostic ParseError(const std::string& text) {
  try {
    CronSchedule::Parse(text);
  } catch (const Error& e) {
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", {}};
}

TEST(CronSchedule, StepsRangesAndListsSelectTheirMinutes) {
  EXPECT_EQ(PreviewUtc("*/20 9-10 * * *", "2026-03-02T08:00:00Z", 7),
            (std::vector<std::string>{"2026-03-02T09:00:00.000Z", "2026-03-02T09:20:00.000Z",
                                      "2026-03-02T09:40:00.000Z", "2026-03-02T10:00:00.000Z",
                                      "2026-03-02T10:20:00.000Z", "2026-03-02T10:40:00.000Z",
                                      "2026-03-03T09:00:00.000Z"}));
  EXPECT_EQ(PreviewUtc("5,10-20/5 0 * * *", "2026-03-02T00:00:00Z", 4),
            (std::vector<std::string>{"2026-03-02T00:05:00.000Z", "2026-03-02T00:10:00.000Z",
                                      "2026-03-02T00:15:00.000Z", "2026-03-02T00:20:00.000Z"}));
  EXPECT_EQ(PreviewUtc("50/5 0 1 1 *", "2026-01-01T00:00:00Z", 3),
            (std::vector<std::string>{"2026-01-01T00:50:00.000Z", "2026-01-01T00:55:00.000Z",
                                      "2027-01-01T00:50:00.000Z"}));
}

TEST(CronSchedule, NamesAreCaseInsensitiveAndSevenIsSunday) {
  // 2026-03-06 is a Friday.
  EXPECT_EQ(PreviewUtc("0 6 * * fri-SUN", "2026-03-05T00:00:00Z", 3),
            (std::vector<std::string>{"2026-03-06T06:00:00.000Z", "2026-03-07T06:00:00.000Z",
                                      "2026-03-08T06:00:00.000Z"}));
  EXPECT_EQ(PreviewUtc("0 6 * * 5-7", "2026-03-05T00:00:00Z", 3),
            PreviewUtc("0 6 * * FRI,SAT,0", "2026-03-05T00:00:00Z", 3));
  EXPECT_EQ(PreviewUtc("0 6 * * 5-0", "2026-03-05T00:00:00Z", 3),
            PreviewUtc("0 6 * * FRI,SAT,7", "2026-03-05T00:00:00Z", 3));
  // `a/n` on day-of-week runs to Saturday: Monday, Wednesday, Friday.
  EXPECT_EQ(PreviewUtc("0 6 * * 1/2", "2026-03-01T00:00:00Z", 4),
            (std::vector<std::string>{"2026-03-02T06:00:00.000Z", "2026-03-04T06:00:00.000Z",
                                      "2026-03-06T06:00:00.000Z", "2026-03-09T06:00:00.000Z"}));
  EXPECT_EQ(PreviewUtc("0 0 1 jan,Jul *", "2026-02-01T00:00:00Z", 2),
            (std::vector<std::string>{"2026-07-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"}));
}

TEST(CronSchedule, AliasesExpandToTheirExpressions) {
  const auto after = At("2026-03-04T10:30:00Z");  // a Wednesday
  const TimeZone utc = TimeZone::Utc();
  EXPECT_EQ(Utc(CronSchedule::Parse("@yearly").NextAfter(after, utc)), "2027-01-01T00:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse("@annually").NextAfter(after, utc)), "2027-01-01T00:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse("@monthly").NextAfter(after, utc)), "2026-04-01T00:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse("@weekly").NextAfter(after, utc)), "2026-03-08T00:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse("@daily").NextAfter(after, utc)), "2026-03-05T00:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse("@MIDNIGHT").NextAfter(after, utc)), "2026-03-05T00:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse(" @hourly ").NextAfter(after, utc)), "2026-03-04T11:00:00.000Z");
  EXPECT_EQ(CronSchedule::Parse("@daily"), CronSchedule::Parse("0 0 * * *"));
  EXPECT_EQ(CronSchedule::Parse("@weekly"), CronSchedule::Parse("0 0 * * 7"));
  EXPECT_NE(CronSchedule::Parse("@daily"), CronSchedule::Parse("@hourly"));
  EXPECT_EQ(CronSchedule::Parse("  @daily ").text(), "@daily");
}

TEST(CronSchedule, RestrictedDayOfMonthAndDayOfWeekMatchEither) {
  // The 13th or any Friday; 2026-03-06 is a Friday, 2026-03-13 also.
  EXPECT_EQ(PreviewUtc("0 0 13 * FRI", "2026-03-01T00:00:00Z", 4),
            (std::vector<std::string>{"2026-03-06T00:00:00.000Z", "2026-03-13T00:00:00.000Z",
                                      "2026-03-20T00:00:00.000Z", "2026-03-27T00:00:00.000Z"}));
  // Only day-of-month restricted: the 13th alone.
  EXPECT_EQ(PreviewUtc("0 0 13 * *", "2026-03-01T00:00:00Z", 2),
            (std::vector<std::string>{"2026-03-13T00:00:00.000Z", "2026-04-13T00:00:00.000Z"}));
}

TEST(CronSchedule, LeapDayIsFoundYearsAhead) {
  EXPECT_EQ(PreviewUtc("0 0 29 2 *", "2096-03-01T00:00:00Z", 1), (std::vector<std::string>{"2104-02-29T00:00:00.000Z"}));
}

TEST(CronSchedule, NextAfterIsStrictAndPreviousAtOrBeforeIncludesATick) {
  const CronSchedule hourly = CronSchedule::Parse("0 * * * *");
  const TimeZone utc = TimeZone::Utc();
  EXPECT_EQ(Utc(hourly.NextAfter(At("2026-03-04T10:00:00Z"), utc)), "2026-03-04T11:00:00.000Z");
  EXPECT_EQ(Utc(hourly.PreviousAtOrBefore(At("2026-03-04T10:00:00Z"), utc)), "2026-03-04T10:00:00.000Z");
  EXPECT_EQ(Utc(hourly.PreviousAtOrBefore(At("2026-03-04T09:59:59.999Z"), utc)), "2026-03-04T09:00:00.000Z");
  EXPECT_EQ(Utc(CronSchedule::Parse("30 2 1 1 *").PreviousAtOrBefore(At("2026-01-01T02:29:00Z"), utc)),
            "2025-01-01T02:30:00.000Z");
}

TEST(CronSchedule, TicksAreWallClockTimesInTheScheduleZone) {
  const TimeZone paris = TimeZone::Named("Europe/Paris");
  EXPECT_EQ(PreviewUtc("0 9 * * *", "2026-01-10T00:00:00Z", 1, paris),
            (std::vector<std::string>{"2026-01-10T08:00:00.000Z"}));
  EXPECT_EQ(PreviewUtc("0 9 * * *", "2026-07-10T00:00:00Z", 1, paris),
            (std::vector<std::string>{"2026-07-10T07:00:00.000Z"}));
}

TEST(CronSchedule, ATickSkippedBySpringForwardFiresOnceAtTheEndOfTheGap) {
  // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00 UTC).
  const TimeZone new_york = TimeZone::Named("America/New_York");
  EXPECT_EQ(PreviewUtc("30 2 * * *", "2026-03-07T00:00:00Z", 3, new_york),
            (std::vector<std::string>{"2026-03-07T07:30:00.000Z", "2026-03-08T07:00:00.000Z",
                                      "2026-03-09T06:30:00.000Z"}));
  // Every quarter hour: 02:00-02:45 do not exist; they and 03:00 fire once, at 03:00 EDT.
  EXPECT_EQ(PreviewUtc("*/15 * * * *", "2026-03-08T06:40:00Z", 4, new_york),
            (std::vector<std::string>{"2026-03-08T06:45:00.000Z", "2026-03-08T07:00:00.000Z",
                                      "2026-03-08T07:15:00.000Z", "2026-03-08T07:30:00.000Z"}));
  EXPECT_EQ(Utc(CronSchedule::Parse("30 2 * * *").PreviousAtOrBefore(At("2026-03-08T07:10:00Z"), new_york)),
            "2026-03-08T07:00:00.000Z");
}

TEST(CronSchedule, ATickInARepeatedHourFiresOnceAtItsFirstOccurrence) {
  // New York, 2026-11-01: 02:00 EDT falls back to 01:00 EST; 01:30 happens at 05:30 and 06:30 UTC.
  const TimeZone new_york = TimeZone::Named("America/New_York");
  EXPECT_EQ(PreviewUtc("30 1 * * *", "2026-10-31T12:00:00Z", 2, new_york),
            (std::vector<std::string>{"2026-11-01T05:30:00.000Z", "2026-11-02T06:30:00.000Z"}));
  // Hourly through the repeated hour: 01:00 once (EDT), then 02:00 EST.
  EXPECT_EQ(PreviewUtc("0 * * * *", "2026-11-01T04:30:00Z", 3, new_york),
            (std::vector<std::string>{"2026-11-01T05:00:00.000Z", "2026-11-01T07:00:00.000Z",
                                      "2026-11-01T08:00:00.000Z"}));
  const CronSchedule at_0145 = CronSchedule::Parse("45 1 * * *");
  // From inside the second 01:xx, the last tick is the first 01:45 (05:45 UTC), though its wall time is later.
  EXPECT_EQ(Utc(at_0145.PreviousAtOrBefore(At("2026-11-01T06:30:00Z"), new_york)), "2026-11-01T05:45:00.000Z");
  EXPECT_EQ(Utc(at_0145.NextAfter(At("2026-11-01T05:45:00Z"), new_york)), "2026-11-02T06:45:00.000Z");
}

// NextAfter and PreviousAtOrBefore agree with the tick list Preview gives, at every minute (and just before each
// tick) of a window around time-zone transitions.
void ExpectSearchesAgree(const std::string& cron, const std::string& zone_name, const std::string& from,
                         const std::string& to) {
  SCOPED_TRACE(cron + " in " + zone_name);
  const CronSchedule schedule = CronSchedule::Parse(cron);
  const TimeZone zone = TimeZone::Named(zone_name);
  const auto start = At(from);
  const auto end = At(to);
  std::vector<system_clock::time_point> ticks;
  for (auto t = schedule.PreviousAtOrBefore(start, zone); t && *t <= end; t = schedule.NextAfter(*t, zone)) {
    ticks.push_back(*t);
  }
  ASSERT_GE(ticks.size(), 2u);
  for (size_t i = 1; i < ticks.size(); ++i) ASSERT_LT(ticks[i - 1], ticks[i]);
  std::vector<system_clock::time_point> probes;
  for (auto t = start; t <= end; t += std::chrono::minutes(1)) probes.push_back(t + std::chrono::seconds(30));
  for (const auto tick : ticks) {
    probes.push_back(tick);
    probes.push_back(tick - std::chrono::nanoseconds(1));
  }
  for (const auto probe : probes) {
    if (probe < ticks.front() || probe >= ticks.back()) continue;
    const auto next = std::upper_bound(ticks.begin(), ticks.end(), probe);
    ASSERT_EQ(Utc(schedule.NextAfter(probe, zone)), Utc(*next)) << "after " << FormatUtc(probe);
    ASSERT_EQ(Utc(schedule.PreviousAtOrBefore(probe, zone)), Utc(*(next - 1))) << "at " << FormatUtc(probe);
  }
}

TEST(CronSchedule, SearchesAgreeAcrossTimeZoneTransitions) {
  for (const std::string cron : {"*/7 * * * *", "30 1 * * *", "0 * * * *", "15,45 1-3 * * *", "0 0 * * *"}) {
    ExpectSearchesAgree(cron, "America/New_York", "2026-03-07T00:00:00Z", "2026-03-10T00:00:00Z");
    ExpectSearchesAgree(cron, "America/New_York", "2026-10-31T00:00:00Z", "2026-11-03T00:00:00Z");
    ExpectSearchesAgree(cron, "Europe/London", "2026-10-24T00:00:00Z", "2026-10-27T00:00:00Z");
    // A 30-minute daylight saving shift.
    ExpectSearchesAgree(cron, "Australia/Lord_Howe", "2026-04-03T00:00:00Z", "2026-04-07T00:00:00Z");
    ExpectSearchesAgree(cron, "Australia/Lord_Howe", "2026-10-02T00:00:00Z", "2026-10-06T00:00:00Z");
  }
  // Samoa skipped 2011-12-30 entirely: a daily tick that day fires at the start of the 31st, once.
  ExpectSearchesAgree("0 12 * * *", "Pacific/Apia", "2011-12-27T00:00:00Z", "2012-01-03T00:00:00Z");
  EXPECT_EQ(PreviewUtc("0 12 29-31 12 *", "2011-12-28T00:00:00Z", 2, TimeZone::Named("Pacific/Apia")),
            (std::vector<std::string>{"2011-12-29T22:00:00.000Z", "2011-12-30T10:00:00.000Z"}));
}

TEST(CronSchedule, MalformedFieldsNameTheFieldAndWhatWasExpected) {
  Diagnostic d = ParseError("61 * * * *");
  EXPECT_EQ(d.code, "SLU-CRON-002");
  EXPECT_EQ(d.message, "minute field `61`: 61 is out of range 0-59");
  EXPECT_EQ(d.hint, "a minute is 0-59; write e.g. `*/15` or `0,30`");
  d = ParseError("0 0 * * FRI-MON");
  EXPECT_EQ(d.code, "SLU-CRON-002");
  EXPECT_EQ(d.message,
            "day-of-week field `FRI-MON`: the range `FRI-MON` runs backwards; ranges do not wrap around: write "
            "`5-6,0-1`");
  EXPECT_EQ(ParseError("0 22-2 * * *").message,
            "hour field `22-2`: the range `22-2` runs backwards; ranges do not wrap around: write `22-23,0-2`");
  d = ParseError("0 0 * FOO *");
  EXPECT_EQ(d.message, "month field `FOO`: `FOO` is not a month");
  EXPECT_EQ(d.hint, "a month is 1-12 or JAN-DEC; write e.g. `1-6`, `JAN,JUL` or `*/3`");
  EXPECT_EQ(ParseError("0 0 * * MONDAY").hint,
            "a day-of-week is 0-7 or SUN-SAT; write e.g. `MON-FRI`, `1-5` or `SAT,SUN` (0 and 7 are Sunday)");
  EXPECT_EQ(ParseError("*/0 * * * *").message, "minute field `*/0`: the step `/0` is not a whole number of at least 1");
  EXPECT_EQ(ParseError("1,,2 * * * *").message, "minute field `1,,2`: an empty list item");
  EXPECT_EQ(ParseError("0 24 * * *").code, "SLU-CRON-002");
  EXPECT_EQ(ParseError("0 0 0 * *").code, "SLU-CRON-002");
  EXPECT_EQ(ParseError("0 0 * * 8").code, "SLU-CRON-002");
  EXPECT_EQ(ParseError("1-2-3 * * * *").code, "SLU-CRON-002");
}

TEST(CronSchedule, WrongFieldCountsAliasesAndImpossibleDaysAreRejected) {
  Diagnostic d = ParseError("0 0 * * * *");
  EXPECT_EQ(d.code, "SLU-CRON-001");
  EXPECT_EQ(d.message, "cron expression `0 0 * * * *` has 6 fields; expected 5");
  EXPECT_NE(d.hint.find("seconds and years are not supported"), std::string::npos);
  EXPECT_EQ(ParseError("").code, "SLU-CRON-001");
  EXPECT_EQ(ParseError("@fortnightly").code, "SLU-CRON-001");
  EXPECT_EQ(ParseError("0 0 30 2 *").code, "SLU-CRON-003");
  EXPECT_EQ(ParseError("0 0 31 4,6,9,11 *").code, "SLU-CRON-003");
  // With a day-of-week as well, either matches, so the expression fires on Mondays.
  EXPECT_EQ(ParseError("0 0 30 2 MON").code, "no error");
}

TEST(TimeZone, UnknownZonesAreRejected) {
  try {
    TimeZone::Named("Mars/Olympus_Mons");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-CRON-004");
    EXPECT_EQ(e.diagnostics().front().message, "unknown time zone `Mars/Olympus_Mons`");
  }
  EXPECT_EQ(TimeZone::Named("Europe/Paris").name(), "Europe/Paris");
  EXPECT_EQ(TimeZone::Utc().name(), "UTC");
}

TEST(TickPlan, NothingDueFiresNothing) {
  const CronSchedule daily = CronSchedule::Parse("@daily");
  const TickPlan plan = PlanDueTicks(daily, TimeZone::Utc(), At("2026-03-04T00:00:00Z"), At("2026-03-04T23:59:59Z"));
  EXPECT_EQ(plan, TickPlan{});
}

TEST(TickPlan, OneDueTickFires) {
  const TickPlan plan = PlanDueTicks(CronSchedule::Parse("@daily"), TimeZone::Utc(), At("2026-03-04T00:00:00Z"),
                                     At("2026-03-05T00:00:00Z"));
  EXPECT_EQ(Utc(plan.fire), "2026-03-05T00:00:00.000Z");
  EXPECT_EQ(plan.skipped_count, 0);
  EXPECT_TRUE(plan.skipped.empty());
}

TEST(TickPlan, MissedTicksFireTheLatestAndSkipTheRest) {
  const TickPlan plan = PlanDueTicks(CronSchedule::Parse("@daily"), TimeZone::Utc(), At("2026-03-01T00:00:00Z"),
                                     At("2026-03-04T12:00:00Z"));
  EXPECT_EQ(Utc(plan.fire), "2026-03-04T00:00:00.000Z");
  EXPECT_EQ(plan.skipped_count, 2);
  ASSERT_EQ(plan.skipped.size(), 2u);
  EXPECT_EQ(FormatUtc(plan.skipped[0]), "2026-03-02T00:00:00.000Z");
  EXPECT_EQ(FormatUtc(plan.skipped[1]), "2026-03-03T00:00:00.000Z");
}

TEST(TickPlan, ThousandsOfMissedTicksAreCountedAndTheLatestListed) {
  // Every minute for 30 days: 43,200 due ticks.
  const TickPlan plan = PlanDueTicks(CronSchedule::Parse("* * * * *"), TimeZone::Utc(), At("2026-03-01T00:00:00Z"),
                                     At("2026-03-31T00:00:00Z"));
  EXPECT_EQ(Utc(plan.fire), "2026-03-31T00:00:00.000Z");
  EXPECT_EQ(plan.skipped_count, 43199);
  ASSERT_EQ(plan.skipped.size(), kMaxListedSkippedTicks);
  EXPECT_EQ(FormatUtc(plan.skipped.front()), "2026-03-30T22:20:00.000Z");
  EXPECT_EQ(FormatUtc(plan.skipped.back()), "2026-03-30T23:59:00.000Z");
  EXPECT_EQ(PlanDueTicks(CronSchedule::Parse("* * * * *"), TimeZone::Utc(), At("2026-03-01T00:00:00Z"),
                         At("2026-03-01T00:10:00Z"), 3)
                .skipped.size(),
            3u);
}

}  // namespace
}  // namespace sluice
