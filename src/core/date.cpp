#include "sluice/date.hpp"

#include <cstdio>

namespace sluice {

namespace {

// Howard Hinnant's days_from_civil / civil_from_days algorithms (public domain descriptions).
int DaysFromCivil(int y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int>(doe) - 719468;
}

bool IsLeap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int DaysInMonth(int y, int m) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && IsLeap(y) ? 29 : kDays[m - 1];
}

}  // namespace

Date Date::FromYmd(int year, int month, int day) {
  return Date(DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)));
}

std::optional<Date> Date::Parse(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  auto digits = [&](size_t begin, size_t count, int& out) {
    out = 0;
    for (size_t i = begin; i < begin + count; ++i) {
      if (text[i] < '0' || text[i] > '9') return false;
      out = out * 10 + (text[i] - '0');
    }
    return true;
  };
  int y = 0, m = 0, d = 0;
  if (!digits(0, 4, y) || !digits(5, 2, m) || !digits(8, 2, d)) return std::nullopt;
  if (m < 1 || m > 12 || d < 1 || d > DaysInMonth(y, m)) return std::nullopt;
  return FromYmd(y, m, d);
}

void Date::ToYmd(int& year, int& month, int& day) const {
  int z = days_ + 719468;
  const int era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int y = static_cast<int>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  year = y + (m <= 2);
  month = static_cast<int>(m);
  day = static_cast<int>(d);
}

std::string Date::ToString() const {
  int y = 0, m = 0, d = 0;
  ToYmd(y, m, d);
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02d", y, m, d);
  return buffer;
}

std::vector<std::string> DateWindow::DayKeys() const {
  std::vector<std::string> keys;
  for (Date d = start; d < end; d = d.AddDays(1)) keys.push_back(d.ToString());
  return keys;
}

}  // namespace sluice
