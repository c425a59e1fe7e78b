// TimeZone: a named IANA time zone (the operating system's tz database, through Howard Hinnant's date-tz), the
// zone a schedule's wall-clock times are read in. UTC unless a schedule names another.
//
// Local wall times map to instants by one rule, used by every schedule (docs/schedules.md):
//   - a wall time that occurs once is that instant;
//   - a wall time skipped by a forward transition (spring forward) maps to the transition instant, the first valid
//     instant after the gap;
//   - a wall time that occurs twice (fall back) maps to its first occurrence.
// The mapping never decreases as the wall time increases.
// Thread-safety: immutable value; the tz database is loaded once, thread-safely, on first use.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "sluice/date.hpp"

namespace date {
class time_zone;
}

namespace sluice {

class TimeZone {
 public:
  // Coordinated Universal Time.
  static TimeZone Utc();
  // The IANA zone `name` (e.g. "Europe/Paris"); throws SLU-CRON-004 naming it when the tz database has no such zone.
  static TimeZone Named(std::string_view name);

  // The IANA name, e.g. "UTC" or "America/New_York".
  const std::string& name() const { return name_; }

  // The wall-clock time at `instant`, as a duration since 1970-01-01T00:00 local.
  std::chrono::system_clock::duration LocalSinceEpoch(std::chrono::system_clock::time_point instant) const;
  // The calendar date at `instant` in this zone.
  Date LocalDate(std::chrono::system_clock::time_point instant) const;
  // The latest wall time (since 1970-01-01T00:00 local) whose instant, by the rule above, is at or before
  // `instant`: the wall time at `instant`, except inside the second pass of a repeated hour, where the wall times up
  // to the end of that hour still map to their first occurrence, which is earlier.
  std::chrono::system_clock::duration LatestLocalAtOrBefore(std::chrono::system_clock::time_point instant) const;
  // The instant of a wall time given as seconds since 1970-01-01T00:00 local, by the rule above.
  std::chrono::sys_seconds Instant(std::chrono::seconds local_since_epoch) const;
  // The offset from UTC in force at `instant` (e.g. -5h for New York in winter).
  std::chrono::seconds OffsetAt(std::chrono::system_clock::time_point instant) const;

  bool operator==(const TimeZone& other) const { return name_ == other.name_; }

 private:
  TimeZone(const date::time_zone* zone, std::string name) : zone_(zone), name_(std::move(name)) {}

  const date::time_zone* zone_;  // owned by the process-wide tz database; never null
  std::string name_;
};

}  // namespace sluice
