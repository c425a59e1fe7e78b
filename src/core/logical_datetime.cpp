#include "core/logical_datetime.hpp"

#include <cstdio>
#include <optional>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

using std::chrono::system_clock;

// The characters that differ between the plain and the encoded form.
struct Spelling {
  std::string_view separators;  // between date and time
  char time_separator;          // between hours, minutes, seconds and in an offset
  char plus;                    // a positive offset's sign
};

constexpr Spelling kPlain{"T ", ':', '+'};
constexpr Spelling kEncoded{"T", '.', '_'};

// A datetime in the grammar, split into its parts (views into the parsed text).
struct DatetimeParts {
  Date day;
  bool has_time = false;
  int hour = 0;
  int minute = 0;
  std::optional<int> second;
  std::string_view fraction;  // digits only
  enum class OffsetForm { kNone, kZulu, kColon, kCompact } offset_form = OffsetForm::kNone;
  bool negative = false;
  int offset_hours = 0;
  int offset_minutes = 0;
};

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  bool AtEnd() const { return position_ == text_.size(); }
  bool Peek(char c) const { return position_ < text_.size() && text_[position_] == c; }
  bool Take(char c) {
    if (!Peek(c)) return false;
    ++position_;
    return true;
  }
  // Exactly `count` digits, at most `max` in value.
  std::optional<int> Digits(int count, int max) {
    if (position_ + static_cast<size_t>(count) > text_.size()) return std::nullopt;
    int value = 0;
    for (int i = 0; i < count; ++i) {
      const char c = text_[position_ + static_cast<size_t>(i)];
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + (c - '0');
    }
    if (value > max) return std::nullopt;
    position_ += static_cast<size_t>(count);
    return value;
  }
  std::string_view DigitRun(size_t max_length) {
    const size_t start = position_;
    while (position_ < text_.size() && position_ - start < max_length + 1 && text_[position_] >= '0' &&
           text_[position_] <= '9') {
      ++position_;
    }
    return text_.substr(start, position_ - start);
  }
  std::optional<char> TakeAny(std::string_view set) {
    if (position_ >= text_.size() || set.find(text_[position_]) == std::string_view::npos) return std::nullopt;
    return text_[position_++];
  }
  std::string_view TakeCount(size_t count) {
    if (position_ + count > text_.size()) return {};
    const std::string_view taken = text_.substr(position_, count);
    position_ += count;
    return taken;
  }

 private:
  std::string_view text_;
  size_t position_ = 0;
};

std::optional<DatetimeParts> Split(std::string_view text, const Spelling& spelling) {
  Reader reader(text);
  DatetimeParts parts;
  const std::optional<Date> day = Date::Parse(reader.TakeCount(10));
  if (!day) return std::nullopt;
  parts.day = *day;
  if (reader.AtEnd()) return parts;
  if (!reader.TakeAny(spelling.separators)) return std::nullopt;
  parts.has_time = true;
  const auto hour = reader.Digits(2, 23);
  if (!hour || !reader.Take(spelling.time_separator)) return std::nullopt;
  const auto minute = reader.Digits(2, 59);
  if (!minute) return std::nullopt;
  parts.hour = *hour;
  parts.minute = *minute;
  // After HH:MM a time separator starts the seconds; in the encoded form it is `.` like the fraction's, which can
  // only follow seconds, so position decides.
  if (reader.Take(spelling.time_separator)) {
    parts.second = reader.Digits(2, 59);
    if (!parts.second) return std::nullopt;
    if (reader.Take('.')) {
      parts.fraction = reader.DigitRun(9);
      if (parts.fraction.empty() || parts.fraction.size() > 9) return std::nullopt;
    }
  }
  if (reader.AtEnd()) return parts;
  if (reader.Take('Z')) {
    parts.offset_form = DatetimeParts::OffsetForm::kZulu;
  } else {
    const std::optional<char> sign = reader.TakeAny(spelling.plus == '+' ? "+-" : "_-");
    if (!sign) return std::nullopt;
    parts.negative = *sign == '-';
    const auto offset_hours = reader.Digits(2, 23);
    if (!offset_hours) return std::nullopt;
    parts.offset_hours = *offset_hours;
    parts.offset_form = reader.Take(spelling.time_separator) ? DatetimeParts::OffsetForm::kColon
                                                             : DatetimeParts::OffsetForm::kCompact;
    const auto offset_minutes = reader.Digits(2, 59);
    if (!offset_minutes) return std::nullopt;
    parts.offset_minutes = *offset_minutes;
  }
  if (!reader.AtEnd()) return std::nullopt;
  return parts;
}

std::string Join(const DatetimeParts& parts, const Spelling& spelling) {
  std::string out = parts.day.ToString();
  if (!parts.has_time) return out;
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "T%02d%c%02d", parts.hour, spelling.time_separator, parts.minute);
  out += buffer;
  if (parts.second) {
    std::snprintf(buffer, sizeof buffer, "%c%02d", spelling.time_separator, *parts.second);
    out += buffer;
    if (!parts.fraction.empty()) {
      out += '.';
      out += parts.fraction;
    }
  }
  switch (parts.offset_form) {
    case DatetimeParts::OffsetForm::kNone:
      break;
    case DatetimeParts::OffsetForm::kZulu:
      out += 'Z';
      break;
    case DatetimeParts::OffsetForm::kColon:
    case DatetimeParts::OffsetForm::kCompact:
      out += parts.negative ? '-' : spelling.plus;
      std::snprintf(buffer, sizeof buffer, "%02d", parts.offset_hours);
      out += buffer;
      if (parts.offset_form == DatetimeParts::OffsetForm::kColon) out += spelling.time_separator;
      std::snprintf(buffer, sizeof buffer, "%02d", parts.offset_minutes);
      out += buffer;
      break;
  }
  return out;
}

[[noreturn]] void ThrowNotDatetime(std::string_view text) {
  throw Error(Diagnostic{"SLU-DATETIME-001", "`" + std::string(text) + "` is not a datetime", {},
                         "write YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS[.fraction]] with an optional offset (Z, +HH:MM, "
                         "-HHMM), e.g. 2026-03-23T14:30:00+00:00",
                         {}});
}

system_clock::time_point InstantOf(const DatetimeParts& parts) {
  using std::chrono::nanoseconds;
  nanoseconds fraction{0};
  if (!parts.fraction.empty()) {
    std::int64_t digits = 0;
    for (const char c : parts.fraction) digits = digits * 10 + (c - '0');
    for (size_t i = parts.fraction.size(); i < 9; ++i) digits *= 10;
    fraction = nanoseconds(digits);
  }
  auto offset = std::chrono::hours(parts.offset_hours) + std::chrono::minutes(parts.offset_minutes);
  if (parts.negative) offset = -offset;
  const auto since_epoch = std::chrono::days(parts.day.days_since_epoch()) + std::chrono::hours(parts.hour) +
                           std::chrono::minutes(parts.minute) + std::chrono::seconds(parts.second.value_or(0)) +
                           fraction - offset;
  return system_clock::time_point(std::chrono::duration_cast<system_clock::duration>(since_epoch));
}

}  // namespace

std::string QuoteDatetime(std::string_view text) {
  const std::optional<DatetimeParts> parts = Split(text, kPlain);
  if (!parts) ThrowNotDatetime(text);
  return Join(*parts, kEncoded);
}

std::string UnquoteDatetime(std::string_view key) {
  const std::optional<DatetimeParts> parts = Split(key, kEncoded);
  if (!parts) {
    throw Error(Diagnostic{"SLU-DATETIME-002", "`" + std::string(key) + "` is not an encoded datetime", {},
                           "an encoded datetime reads YYYY-MM-DD or YYYY-MM-DDTHH.MM.SS with an optional offset "
                           "(Z, _HH.MM, -HH.MM), e.g. 2026-03-23T14.30.00_00.00",
                           {}});
  }
  return Join(*parts, kPlain);
}

system_clock::time_point ParseLogicalDatetime(std::string_view text) {
  std::optional<DatetimeParts> parts = Split(text, kPlain);
  if (!parts) parts = Split(text, kEncoded);
  if (!parts) ThrowNotDatetime(text);
  return InstantOf(*parts);
}

std::string FormatLogicalDatetime(system_clock::time_point instant, const TimeZone& zone) {
  const auto local = std::chrono::duration_cast<std::chrono::nanoseconds>(zone.LocalSinceEpoch(instant));
  const auto day = std::chrono::floor<std::chrono::days>(local);
  const auto in_day = local - day;
  const auto hours = std::chrono::floor<std::chrono::hours>(in_day);
  const auto minutes = std::chrono::floor<std::chrono::minutes>(in_day - hours);
  const auto seconds = std::chrono::floor<std::chrono::seconds>(in_day - hours - minutes);
  const auto nanos = (in_day - hours - minutes - seconds).count();
  std::string out = Date(static_cast<int>(day.count())).ToString();
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "T%02d:%02d:%02d", static_cast<int>(hours.count()),
                static_cast<int>(minutes.count()), static_cast<int>(seconds.count()));
  out += buffer;
  if (nanos != 0) {
    std::snprintf(buffer, sizeof buffer, ".%09lld", static_cast<long long>(nanos));
    std::string fraction(buffer);
    while (fraction.back() == '0') fraction.pop_back();
    out += fraction;
  }
  const auto offset = std::chrono::duration_cast<std::chrono::minutes>(zone.OffsetAt(instant)).count();
  const long long magnitude = offset < 0 ? -offset : offset;
  std::snprintf(buffer, sizeof buffer, "%c%02lld%02lld", offset < 0 ? '-' : '+', magnitude / 60, magnitude % 60);
  out += buffer;
  return out;
}

std::optional<ScheduledInterval> ScheduledDatesRange(const CronSchedule& schedule, system_clock::time_point at,
                                                     const TimeZone& zone) {
  const auto end = schedule.PreviousAtOrBefore(at, zone);
  if (!end) return std::nullopt;
  const auto start = schedule.PreviousAtOrBefore(*end - system_clock::duration(1), zone);
  if (!start) return std::nullopt;
  return ScheduledInterval{*start, *end};
}

Date ClosedDailyPartition(system_clock::time_point tick, const TimeZone& zone) {
  return zone.LocalDate(tick).AddDays(-1);
}

}  // namespace sluice
