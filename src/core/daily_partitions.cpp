#include "core/daily_partitions.hpp"

#include "core/diagnostic.hpp"

namespace sluice {

Date DailyPartitions::LastComplete(Date today) const {
  Date yesterday = today.AddDays(-1);
  if (yesterday < start_date_) {
    throw Error(Diagnostic{"SLU-PARTITION-004",
                           "no complete daily partition yet: partitions start on " + start_date_.ToString(),
                           {}, "choose a start_date in the past", {}});
  }
  return yesterday;
}

Date ParsePartitionKey(const std::string& key) {
  std::optional<Date> date = Date::Parse(key);
  if (!date) {
    throw Error(Diagnostic{"SLU-PARTITION-001", "partition key '" + key + "' is not a date",
                           {}, "daily partition keys are written YYYY-MM-DD, e.g. 2026-01-31", {}});
  }
  return *date;
}

DateWindow KeyRangeWindow(const std::string& first, const std::string& last) {
  Date from = ParsePartitionKey(first);
  Date to = ParsePartitionKey(last);
  if (to < from) {
    throw Error(Diagnostic{"SLU-PARTITION-005",
                           "partition range ends (" + last + ") before it starts (" + first + ")",
                           {},
                           "--from must not be after --to",
                           {}});
  }
  return DateWindow{from, to.AddDays(1)};
}

Date DailyPartitions::ValidateKey(const std::string& key, Date today) const {
  Date date = ParsePartitionKey(key);
  if (date < start_date_) {
    throw Error(Diagnostic{"SLU-PARTITION-002",
                           "partition key " + key + " is before the partitions' start date " +
                               start_date_.ToString(),
                           {}, "choose a key on or after " + start_date_.ToString(), {}});
  }
  Date last = today.AddDays(-1);
  if (date > last) {
    throw Error(Diagnostic{"SLU-PARTITION-003",
                           "partition key " + key + " is not complete yet (the last complete day is " +
                               last.ToString() + ")",
                           {}, "daily partitions complete at midnight UTC", {}});
  }
  return date;
}

DateWindow DailyPartitions::WindowForRange(const std::string& first, const std::string& last,
                                           Date today) const {
  DateWindow window = KeyRangeWindow(first, last);
  ValidateKey(first, today);
  ValidateKey(last, today);
  return window;
}

std::vector<Date> DailyPartitions::AllKeys(Date today) const {
  std::vector<Date> keys;
  for (Date d = start_date_; d < today; d = d.AddDays(1)) keys.push_back(d);
  return keys;
}

}  // namespace sluice
