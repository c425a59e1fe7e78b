// Calendar dates (proleptic Gregorian, no time zone) and half-open date windows.
// Thread-safety: immutable values.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

namespace sluice {

class Date {
 public:
  // Days since 1970-01-01.
  constexpr explicit Date(int days_since_epoch = 0) : days_(days_since_epoch) {}
  static Date FromYmd(int year, int month, int day);
  // Parses exactly `YYYY-MM-DD` with a real calendar day; nullopt otherwise.
  static std::optional<Date> Parse(std::string_view text);

  int days_since_epoch() const { return days_; }
  Date AddDays(int days) const { return Date(days_ + days); }
  std::string ToString() const;  // YYYY-MM-DD
  void ToYmd(int& year, int& month, int& day) const;

  auto operator<=>(const Date&) const = default;

 private:
  int days_;
};

// The dates d with start <= d < end. Empty when end <= start.
struct DateWindow {
  Date start;
  Date end;

  bool empty() const { return end <= start; }
  bool contains(Date d) const { return start <= d && d < end; }
  int days() const { return empty() ? 0 : end.days_since_epoch() - start.days_since_epoch(); }
  std::string ToString() const { return "[" + start.ToString() + ", " + end.ToString() + ")"; }
  // Each date of the window as a daily partition key (YYYY-MM-DD), in order.
  std::vector<std::string> DayKeys() const;
  bool operator==(const DateWindow&) const = default;
};

}  // namespace sluice
