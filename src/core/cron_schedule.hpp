// CronSchedule: a parsed 5-field cron expression (minute hour day-of-month month day-of-week) and the ticks it
// makes in a time zone.
//
// Accepted syntax (docs/schedules.md):
//   - each field: `*`, a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n` (a to the field's maximum), or a
//     comma-separated list of those;
//   - months JAN-DEC and days SUN-SAT by name, case-insensitive, also in ranges (`MON-FRI`); day-of-week 0 and 7
//     are both Sunday;
//   - the aliases @yearly @annually @monthly @weekly @daily @midnight @hourly.
// Day rule (as Vixie cron and croniter): when both day-of-month and day-of-week are restricted (neither covers all
// its values), a day matches when either matches; otherwise both must match.
//
// Ticks are wall-clock times in a TimeZone, mapped to instants by its rule (time_zone.hpp): a tick skipped by
// spring-forward fires once at the first valid instant after the gap; a tick in a repeated hour fires once, at its
// first occurrence.
//
// Errors thrown by Parse (location empty: the caller adds file:line):
//   SLU-CRON-001 not five fields, or an unknown @alias;
//   SLU-CRON-002 a field's value, range or step is malformed or out of range (the message names the field);
//   SLU-CRON-003 day-of-month can never fall in the months given (e.g. `0 0 30 2 *`).
// Thread-safety: immutable value.
#pragma once

#include <bitset>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time_zone.hpp"

namespace sluice {

class CronSchedule {
 public:
  // Parses `text` (leading, trailing and repeated blanks allowed); throws SLU-CRON-001..003 as above.
  static CronSchedule Parse(std::string_view text);

  // The text as written (trimmed).
  const std::string& text() const { return text_; }

  // The first tick strictly after `after`. nullopt only when the tz database's range is exhausted.
  std::optional<std::chrono::system_clock::time_point> NextAfter(std::chrono::system_clock::time_point after,
                                                                 const TimeZone& zone) const;
  // The last tick at or before `at` (`at` itself when it is a tick). nullopt only before the tz database's range.
  std::optional<std::chrono::system_clock::time_point> PreviousAtOrBefore(std::chrono::system_clock::time_point at,
                                                                          const TimeZone& zone) const;
  // The next `count` ticks strictly after `after`, in order (fewer only where NextAfter gives nullopt).
  std::vector<std::chrono::system_clock::time_point> Preview(std::chrono::system_clock::time_point after, int count,
                                                             const TimeZone& zone) const;

  // Whether both select the same ticks, however written (`@daily` == `0 0 * * *`).
  bool operator==(const CronSchedule& other) const;

 private:
  CronSchedule() = default;
  // Whether the calendar day (month 1-12, day 1-31, weekday 0 = Sunday) can hold a tick.
  bool DayMatches(unsigned month, unsigned day, unsigned weekday) const;
  // The instant of tick candidate `minute_of_day` on local day `local_day` (days since 1970-01-01 local).
  std::chrono::sys_seconds CandidateInstant(int local_day, int minute_of_day, const TimeZone& zone) const;

  std::string text_;
  std::bitset<60> minutes_;
  std::bitset<24> hours_;
  std::bitset<32> days_of_month_;  // bits 1-31
  std::bitset<13> months_;         // bits 1-12
  std::bitset<7> days_of_week_;    // bit 0 = Sunday
  bool day_of_month_restricted_ = false;
  bool day_of_week_restricted_ = false;
};

}  // namespace sluice
