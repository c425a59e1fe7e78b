// TickPlan: what a schedule does about the ticks that fell due since it was last evaluated (for example while the
// daemon was down). Not all of them fire: the latest due tick fires, every earlier one is recorded as skipped.
// Thread-safety: plain values and a pure function.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/cron_schedule.hpp"
#include "core/time_zone.hpp"

namespace sluice {

// How many skipped ticks a TickPlan lists by default; the rest are only counted.
inline constexpr std::size_t kMaxListedSkippedTicks = 100;

struct TickPlan {
  // The latest tick in (last_evaluated, now]; nullopt when none fell due.
  std::optional<std::chrono::system_clock::time_point> fire;
  // How many earlier due ticks are skipped (all due ticks but `fire`).
  std::int64_t skipped_count = 0;
  // The latest min(skipped_count, max_listed) skipped ticks, oldest first; the older ones are only counted.
  std::vector<std::chrono::system_clock::time_point> skipped;

  bool operator==(const TickPlan&) const = default;
};

// Plans the ticks of `schedule` in `zone` due in the half-open interval (last_evaluated, now]. The caller records
// `now` as the new last-evaluated time. A first evaluation passes the time the schedule started (or `now`, to fire
// nothing that predates it). Cost: linear in the number of due ticks (a once-a-minute schedule missed for a year
// walks ~525,000 ticks).
TickPlan PlanDueTicks(const CronSchedule& schedule, const TimeZone& zone,
                      std::chrono::system_clock::time_point last_evaluated, std::chrono::system_clock::time_point now,
                      std::size_t max_listed = kMaxListedSkippedTicks);

}  // namespace sluice
