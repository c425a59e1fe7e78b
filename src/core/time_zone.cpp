#include "core/time_zone.hpp"

#include <date/tz.h>

#include <stdexcept>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

date::local_seconds ToLocal(std::chrono::seconds since_epoch) { return date::local_seconds(since_epoch); }

}  // namespace

TimeZone TimeZone::Utc() { return Named("UTC"); }

TimeZone TimeZone::Named(std::string_view name) {
  const date::time_zone* zone = nullptr;
  try {
    zone = date::locate_zone(name);
  } catch (const std::runtime_error&) {
    // date-tz reports an unknown zone (and an unreadable database) with std::runtime_error.
  }
  if (zone == nullptr) {
    throw Error(Diagnostic{"SLU-CRON-004", "unknown time zone `" + std::string(name) + "`", {},
                           "name an IANA time zone such as `UTC`, `Europe/Paris` or `America/New_York` "
                           "(the names under /usr/share/zoneinfo)",
                           {}});
  }
  return TimeZone(zone, std::string(name));
}

std::chrono::system_clock::duration TimeZone::LocalSinceEpoch(std::chrono::system_clock::time_point instant) const {
  return zone_->to_local(instant).time_since_epoch();
}

std::chrono::system_clock::duration TimeZone::LatestLocalAtOrBefore(
    std::chrono::system_clock::time_point instant) const {
  const auto local = LocalSinceEpoch(instant);
  const date::sys_info info = zone_->get_info(date::floor<std::chrono::seconds>(instant));
  const date::sys_info before = zone_->get_info(info.begin - std::chrono::seconds(1));
  // The clock went back at info.begin, and `instant` is still in the wall times the earlier offset already covered.
  const auto repeated_end = info.begin.time_since_epoch() + before.offset;  // local, exclusive
  if (before.offset > info.offset && local < repeated_end) return repeated_end - std::chrono::nanoseconds(1);
  return local;
}

Date TimeZone::LocalDate(std::chrono::system_clock::time_point instant) const {
  const auto local = zone_->to_local(instant);
  return Date(static_cast<int>(date::floor<date::days>(local).time_since_epoch().count()));
}

std::chrono::sys_seconds TimeZone::Instant(std::chrono::seconds local_since_epoch) const {
  const date::local_seconds local = ToLocal(local_since_epoch);
  const date::local_info info = zone_->get_info(local);
  switch (info.result) {
    case date::local_info::unique:
    case date::local_info::ambiguous:  // first occurrence: the offset in force before the transition
      return std::chrono::sys_seconds(local.time_since_epoch() - info.first.offset);
    case date::local_info::nonexistent:  // the gap's end: the first valid instant after it
      return info.first.end;
  }
  return std::chrono::sys_seconds(local.time_since_epoch() - info.first.offset);
}

std::chrono::seconds TimeZone::OffsetAt(std::chrono::system_clock::time_point instant) const {
  return zone_->get_info(date::floor<std::chrono::seconds>(instant)).offset;
}

}  // namespace sluice
