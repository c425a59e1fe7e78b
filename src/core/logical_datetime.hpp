// Logical datetimes: the instant a run stands for (a scheduled tick or a partition), their text forms, and the
// partition-key encoding of Starlake's `quote_datetime` / `unquote_datetime`.
//
// Datetime text accepted here (the "datetime grammar"):
//   YYYY-MM-DD                                  a day (a daily partition key)
//   YYYY-MM-DD{T| }HH:MM[:SS[.F]][OFFSET]        F: 1 to 9 fraction digits
//   OFFSET: Z | +HH:MM | -HH:MM | +HHMM | -HHMM  (none: UTC)
//
// Encoding (partition keys and tags hold no `:`, `+` or blank): the date/time separator becomes `T`, each `:`
// becomes `.`, `+` becomes `_`; a day, digits, `-`, `Z` and the fraction's `.` are kept. This is the original's
// mapping, so keys it wrote decode here; decoding reads the key by position rather than by blind replacement,
// which makes it lossless where the original's was not: the fraction's `.` (always the one after the seconds) and
// negative offsets round-trip. For text in the grammar that uses `T`, UnquoteDatetime(QuoteDatetime(x)) == x;
// with a blank separator, the result writes `T` instead. QuoteDatetime(UnquoteDatetime(k)) == k for every key.
//
// Errors: SLU-DATETIME-001 text outside the datetime grammar; SLU-DATETIME-002 a key that is not an encoded
// datetime. (The original returned None for empty input; here empty input is an error, so a caller holding an
// optional value tests for it first.)
// Thread-safety: pure functions.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/cron_schedule.hpp"
#include "sluice/date.hpp"
#include "core/time_zone.hpp"

namespace sluice {

// Encodes a datetime in the grammar for a partition key, e.g. `2026-03-23T14:30:00+00:00` →
// `2026-03-23T14.30.00_00.00`; a day `2026-03-23` is unchanged. Throws SLU-DATETIME-001.
std::string QuoteDatetime(std::string_view text);

// Decodes a key QuoteDatetime wrote (or the original did), e.g. `2026-03-23T14.30.00.5-05.00` →
// `2026-03-23T14:30:00.5-05:00`. Throws SLU-DATETIME-002.
std::string UnquoteDatetime(std::string_view key);

// The instant of a logical datetime written in the grammar (ISO 8601 as Python writes it, or Starlake's
// sl_timestamp_format `%Y-%m-%dT%H:%M:%S%z`) or encoded by QuoteDatetime. A day is its midnight UTC; text without
// an offset is UTC (not the machine's local time, which would make a run depend on where it ran).
// Throws SLU-DATETIME-001 for anything else.
std::chrono::system_clock::time_point ParseLogicalDatetime(std::string_view text);

// The instant in Starlake's sl_timestamp_format `%Y-%m-%dT%H:%M:%S%z` in `zone`, e.g. `2026-03-23T14:30:00+0000`.
// A fractional second is written after the seconds (as many digits as needed, up to 9) rather than dropped, so
// ParseLogicalDatetime gives the instant back.
std::string FormatLogicalDatetime(std::chrono::system_clock::time_point instant, const TimeZone& zone);

// Starlake's data interval of a cron run at `at` (`scheduled_dates_range`): `end` is `at` when `at` is a tick, else
// the last tick before it; `start` is the tick before `end`. Both are ticks of `schedule` in `zone`; nullopt only
// outside the tz database's range.
struct ScheduledInterval {
  std::chrono::system_clock::time_point start;
  std::chrono::system_clock::time_point end;
  bool operator==(const ScheduledInterval&) const = default;
};
std::optional<ScheduledInterval> ScheduledDatesRange(const CronSchedule& schedule,
                                                     std::chrono::system_clock::time_point at, const TimeZone& zone);

// The daily partition that has just closed at schedule tick `tick`: the day before the tick's calendar day in the
// schedule's zone (a tick at 00:00 on Mar 10 requests Mar 9, as does a tick at 23:59 on Mar 10).
Date ClosedDailyPartition(std::chrono::system_clock::time_point tick, const TimeZone& zone);

}  // namespace sluice
