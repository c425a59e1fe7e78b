#include "core/cron_schedule.hpp"

#include <date/date.h>

#include <span>
#include <cctype>
#include <charconv>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

using std::chrono::system_clock;

// Every valid expression ticks within this many days: Feb 29 can be 8 years apart (2096 -> 2104).
constexpr int kSearchDays = 366 * 9;

struct FieldSpec {
  std::string_view name;  // as the message names it, e.g. "day-of-week"
  int min;
  int max;  // largest value accepted as written (7 for day-of-week)
  std::span<const std::string_view> names;  // names[i] is the value min + i; empty when the field has none
  std::string_view example;
};

constexpr std::string_view kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                            "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr std::string_view kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

const FieldSpec kFields[5] = {
    {"minute", 0, 59, {}, "`*/15` or `0,30`"},
    {"hour", 0, 23, {}, "`9-17` or `*/6`"},
    {"day-of-month", 1, 31, {}, "`1`, `1,15` or `*/2`"},
    {"month", 1, 12, kMonthNames, "`1-6`, `JAN,JUL` or `*/3`"},
    {"day-of-week", 0, 7, kDayNames, "`MON-FRI`, `1-5` or `SAT,SUN` (0 and 7 are Sunday)"},
};

[[noreturn]] void ThrowField(const FieldSpec& spec, std::string_view field, const std::string& what) {
  std::string hint = "a " + std::string(spec.name) + " is " + std::to_string(spec.min) + "-" + std::to_string(spec.max);
  if (!spec.names.empty()) hint += " or " + std::string(spec.names.front()) + "-" + std::string(spec.names.back());
  hint += "; write e.g. " + std::string(spec.example);
  throw Error(Diagnostic{"SLU-CRON-002",
                         std::string(spec.name) + " field `" + std::string(field) + "`: " + what, {}, hint, {}});
}

// One value: a number or (for months and days) a name.
int ParseValue(const FieldSpec& spec, std::string_view field, std::string_view text) {
  if (text.empty()) ThrowField(spec, field, "a value is missing");
  if (std::isdigit(static_cast<unsigned char>(text[0]))) {
    int value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) {
      ThrowField(spec, field, "`" + std::string(text) + "` is not a number");
    }
    if (value < spec.min || value > spec.max) {
      ThrowField(spec, field,
                 std::to_string(value) + " is out of range " + std::to_string(spec.min) + "-" + std::to_string(spec.max));
    }
    return value;
  }
  if (!spec.names.empty() && text.size() == 3) {
    std::string upper(text);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    for (size_t i = 0; i < spec.names.size(); ++i) {
      if (spec.names[i] == upper) return spec.min + static_cast<int>(i);
    }
  }
  ThrowField(spec, field, "`" + std::string(text) + "` is not a " + std::string(spec.name));
}

// Parses one field into the values it selects (day-of-week 7 folded onto 0 by the caller).
std::bitset<64> ParseField(const FieldSpec& spec, std::string_view field) {
  std::bitset<64> values;
  size_t start = 0;
  while (true) {
    const size_t comma = field.find(',', start);
    const std::string_view item = field.substr(start, comma == std::string_view::npos ? field.npos : comma - start);
    if (item.empty()) ThrowField(spec, field, "an empty list item");
    const size_t slash = item.find('/');
    const std::string_view range = item.substr(0, slash);
    int first = spec.min;
    int last = spec.max;
    if (range == "*") {
      if (spec.max == 7) last = 6;  // `*` on day-of-week is Sunday..Saturday once
    } else {
      const size_t dash = range.find('-');
      first = ParseValue(spec, field, range.substr(0, dash));
      if (dash != std::string_view::npos) {
        last = ParseValue(spec, field, range.substr(dash + 1));
        if (spec.max == 7 && last == 0) last = 7;  // a day-of-week range may end on Sunday: FRI-SUN
        if (last < first) {
          const int top = spec.max == 7 ? 6 : spec.max;
          ThrowField(spec, field,
                     "the range `" + std::string(range) + "` runs backwards; ranges do not wrap around: write `" +
                         std::to_string(first) + "-" + std::to_string(top) + "," + std::to_string(spec.min) + "-" +
                         std::to_string(last) + "`");
        }
      } else if (slash == std::string_view::npos) {
        last = first;
      } else if (spec.max == 7) {
        last = 6;  // `a/n` on day-of-week runs to Saturday, so Sunday is not selected twice
      }
    }
    int step = 1;
    if (slash != std::string_view::npos) {
      const std::string_view step_text = item.substr(slash + 1);
      const auto [end, ec] = std::from_chars(step_text.data(), step_text.data() + step_text.size(), step);
      if (step_text.empty() || ec != std::errc() || end != step_text.data() + step_text.size() || step < 1) {
        ThrowField(spec, field, "the step `/" + std::string(step_text) + "` is not a whole number of at least 1");
      }
    }
    for (int v = first; v <= last; v += step) values.set(static_cast<size_t>(v));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

std::string_view ExpandAlias(std::string_view text) {
  static constexpr std::pair<std::string_view, std::string_view> kAliases[] = {
      {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
      {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
  };
  for (const auto& [alias, expansion] : kAliases) {
    if (text.size() == alias.size()) {
      bool same = true;
      for (size_t i = 0; i < text.size(); ++i) {
        same = same && std::tolower(static_cast<unsigned char>(text[i])) == alias[i];
      }
      if (same) return expansion;
    }
  }
  throw Error(Diagnostic{"SLU-CRON-001", "unknown cron alias `" + std::string(text) + "`", {},
                         "the aliases are @yearly, @annually, @monthly, @weekly, @daily, @midnight and @hourly", {}});
}

template <size_t N>
std::bitset<N> Narrow(const std::bitset<64>& wide) {
  std::bitset<N> narrow;
  for (size_t i = 0; i < N; ++i) narrow[i] = wide[i];
  return narrow;
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

}  // namespace

CronSchedule CronSchedule::Parse(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  CronSchedule schedule;
  schedule.text_ = std::string(text);
  const std::string_view expression = !text.empty() && text[0] == '@' ? ExpandAlias(text) : text;

  std::vector<std::string_view> fields;
  for (size_t i = 0; i < expression.size();) {
    if (IsBlank(expression[i])) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < expression.size() && !IsBlank(expression[end])) ++end;
    fields.push_back(expression.substr(i, end - i));
    i = end;
  }
  if (fields.size() != 5) {
    std::string hint = "write minute hour day-of-month month day-of-week, e.g. `0 6 * * MON-FRI`, or an alias such "
                       "as @daily";
    if (fields.size() == 6) hint += "; seconds and years are not supported";
    throw Error(Diagnostic{"SLU-CRON-001",
                           "cron expression `" + std::string(text) + "` has " + std::to_string(fields.size()) +
                               " fields; expected 5",
                           {}, hint, {}});
  }

  schedule.minutes_ = Narrow<60>(ParseField(kFields[0], fields[0]));
  schedule.hours_ = Narrow<24>(ParseField(kFields[1], fields[1]));
  schedule.days_of_month_ = Narrow<32>(ParseField(kFields[2], fields[2]));
  schedule.months_ = Narrow<13>(ParseField(kFields[3], fields[3]));
  std::bitset<64> days_of_week = ParseField(kFields[4], fields[4]);
  if (days_of_week[7]) days_of_week.set(0);
  schedule.days_of_week_ = Narrow<7>(days_of_week);
  schedule.day_of_month_restricted_ = schedule.days_of_month_.count() != 31;
  schedule.day_of_week_restricted_ = !schedule.days_of_week_.all();

  // With day-of-week unrestricted, day-of-month alone picks the days: it must fall in some month given.
  if (!schedule.day_of_week_restricted_) {
    static constexpr int kLongestMonth[13] = {0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool possible = false;
    for (int month = 1; month <= 12 && !possible; ++month) {
      for (int day = 1; day <= kLongestMonth[month] && schedule.months_[month]; ++day) {
        possible = possible || schedule.days_of_month_[static_cast<size_t>(day)];
      }
    }
    if (!possible) {
      throw Error(Diagnostic{"SLU-CRON-003",
                             "cron expression `" + std::string(text) +
                                 "` never fires: its day-of-month never occurs in its months",
                             {}, "check the day-of-month and month fields (e.g. February has at most 29 days)", {}});
    }
  }
  return schedule;
}

bool CronSchedule::operator==(const CronSchedule& other) const {
  return minutes_ == other.minutes_ && hours_ == other.hours_ && days_of_month_ == other.days_of_month_ &&
         months_ == other.months_ && days_of_week_ == other.days_of_week_;
}

bool CronSchedule::DayMatches(unsigned month, unsigned day, unsigned weekday) const {
  if (!months_[month]) return false;
  const bool by_month_day = days_of_month_[day];
  const bool by_weekday = days_of_week_[weekday];
  if (day_of_month_restricted_ && day_of_week_restricted_) return by_month_day || by_weekday;
  return by_month_day && by_weekday;
}

std::chrono::sys_seconds CronSchedule::CandidateInstant(int local_day, int minute_of_day, const TimeZone& zone) const {
  return zone.Instant(std::chrono::seconds((static_cast<std::int64_t>(local_day) * 1440 + minute_of_day) * 60));
}

std::optional<system_clock::time_point> CronSchedule::NextAfter(system_clock::time_point after,
                                                                const TimeZone& zone) const {
  // Wall times map to instants without ever decreasing, and the wall time at `after` maps to `after` or earlier, so
  // the answer is the first candidate from that wall minute on whose instant is past `after`.
  const auto start = date::floor<std::chrono::minutes>(zone.LocalSinceEpoch(after));
  const int first_day = static_cast<int>(date::floor<date::days>(start).count());
  const int first_minute = static_cast<int>((start - date::days(first_day)).count());
  for (int day = first_day; day < first_day + kSearchDays; ++day) {
    const date::sys_days calendar_day{date::days(day)};
    const date::year_month_day ymd(calendar_day);
    const date::weekday weekday(calendar_day);
    if (!DayMatches(static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), weekday.c_encoding())) {
      continue;
    }
    for (int hour = 0; hour < 24; ++hour) {
      if (!hours_[static_cast<size_t>(hour)]) continue;
      for (int minute = 0; minute < 60; ++minute) {
        if (!minutes_[static_cast<size_t>(minute)]) continue;
        if (day == first_day && hour * 60 + minute < first_minute) continue;
        const auto instant = CandidateInstant(day, hour * 60 + minute, zone);
        if (instant > after) return instant;
      }
    }
  }
  return std::nullopt;
}

std::optional<system_clock::time_point> CronSchedule::PreviousAtOrBefore(system_clock::time_point at,
                                                                         const TimeZone& zone) const {
  // As NextAfter, backwards from the latest wall time that can map at or before `at`.
  const auto limit = date::floor<std::chrono::minutes>(zone.LatestLocalAtOrBefore(at));
  const int last_day = static_cast<int>(date::floor<date::days>(limit).count());
  const int last_minute = static_cast<int>((limit - date::days(last_day)).count());
  for (int day = last_day; day > last_day - kSearchDays; --day) {
    const date::sys_days calendar_day{date::days(day)};
    const date::year_month_day ymd(calendar_day);
    const date::weekday weekday(calendar_day);
    if (!DayMatches(static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()), weekday.c_encoding())) {
      continue;
    }
    for (int hour = 23; hour >= 0; --hour) {
      if (!hours_[static_cast<size_t>(hour)]) continue;
      for (int minute = 59; minute >= 0; --minute) {
        if (!minutes_[static_cast<size_t>(minute)]) continue;
        if (day == last_day && hour * 60 + minute > last_minute) continue;
        const auto instant = CandidateInstant(day, hour * 60 + minute, zone);
        if (instant <= at) return instant;
      }
    }
  }
  return std::nullopt;
}

std::vector<system_clock::time_point> CronSchedule::Preview(system_clock::time_point after, int count,
                                                            const TimeZone& zone) const {
  std::vector<system_clock::time_point> ticks;
  for (int i = 0; i < count; ++i) {
    const auto next = NextAfter(after, zone);
    if (!next) break;
    ticks.push_back(*next);
    after = *next;
  }
  return ticks;
}

}  // namespace sluice
