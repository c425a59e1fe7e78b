#include "core/tick_plan.hpp"

#include <deque>

namespace sluice {

TickPlan PlanDueTicks(const CronSchedule& schedule, const TimeZone& zone,
                      std::chrono::system_clock::time_point last_evaluated, std::chrono::system_clock::time_point now,
                      std::size_t max_listed) {
  TickPlan plan;
  if (now <= last_evaluated) return plan;
  plan.fire = schedule.PreviousAtOrBefore(now, zone);
  if (!plan.fire || *plan.fire <= last_evaluated) {
    plan.fire.reset();
    return plan;
  }
  // Walk the earlier due ticks, keeping only the latest max_listed of them.
  std::deque<std::chrono::system_clock::time_point> latest;
  for (auto tick = schedule.NextAfter(last_evaluated, zone); tick && *tick < *plan.fire;
       tick = schedule.NextAfter(*tick, zone)) {
    ++plan.skipped_count;
    latest.push_back(*tick);
    if (latest.size() > max_listed) latest.pop_front();
  }
  plan.skipped.assign(latest.begin(), latest.end());
  return plan;
}

}  // namespace sluice
