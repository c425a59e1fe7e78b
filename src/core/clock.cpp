#include "core/clock.hpp"

#include <cstdio>
#include <random>

namespace sluice {

Date Clock::TodayUtc() const {
  auto days = std::chrono::floor<std::chrono::days>(Now());
  return Date(static_cast<int>(days.time_since_epoch().count()));
}

std::string FormatUtc(std::chrono::system_clock::time_point time) {
  auto millis = std::chrono::floor<std::chrono::milliseconds>(time).time_since_epoch().count();
  long long day_count = millis >= 0 ? millis / 86400000 : (millis - 86399999) / 86400000;
  long long in_day = millis - day_count * 86400000;
  Date date(static_cast<int>(day_count));
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%sT%02lld:%02lld:%02lld.%03lldZ", date.ToString().c_str(),
                in_day / 3600000, (in_day / 60000) % 60, (in_day / 1000) % 60, in_day % 1000);
  return buffer;
}

std::optional<std::chrono::system_clock::time_point> ParseUtc(std::string_view text) {
  if (text.size() < 20 || text[10] != 'T' || text.back() != 'Z') return std::nullopt;
  std::optional<Date> date = Date::Parse(text.substr(0, 10));
  if (!date) return std::nullopt;
  std::string clock(text.substr(11, text.size() - 12));  // HH:MM:SS[.mmm]
  int hours = 0, minutes = 0, seconds = 0, millis = 0, consumed = 0;
  if (std::sscanf(clock.c_str(), "%2d:%2d:%2d%n", &hours, &minutes, &seconds, &consumed) != 3 || consumed != 8) {
    return std::nullopt;
  }
  if (clock.size() > 8) {
    if (clock.size() != 12 || clock[8] != '.' || std::sscanf(clock.c_str() + 9, "%3d", &millis) != 1) return std::nullopt;
  }
  if (hours > 23 || minutes > 59 || seconds > 60) return std::nullopt;
  using namespace std::chrono;
  return system_clock::time_point(days(date->days_since_epoch()) + hours * 1h + minutes * 1min + seconds * 1s +
                                  milliseconds(millis));
}

std::string CompactUtc(std::chrono::system_clock::time_point time) {
  const std::string text = FormatUtc(time);  // 2026-12-02T16:30:12.123Z
  std::string compact;
  for (char c : text.substr(0, 19)) {
    if (c != '-' && c != ':') compact += c;
  }
  return compact + "Z";
}

std::string NewRunId(const Clock& clock) {
  const std::string compact = CompactUtc(clock.Now());
  std::random_device device;
  std::uniform_int_distribution<uint32_t> distribution;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%08x", distribution(device));
  return compact + "_" + suffix;
}

ShiftedClock::ShiftedClock(std::chrono::system_clock::time_point start)
    : start_(start), began_(std::chrono::steady_clock::now()) {}

std::chrono::system_clock::time_point ShiftedClock::Now() const {
  return start_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::steady_clock::now() -
                                                                                   began_);
}

}  // namespace sluice
