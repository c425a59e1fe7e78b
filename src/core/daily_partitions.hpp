// DailyPartitions: one partition per UTC calendar day from a start date, keyed `YYYY-MM-DD`.
//
// A key range [first, last] (inclusive, as on the CLI) maps to one half-open DateWindow
// [first, last + 1 day). Keys before the start date or after the last complete day are rejected.
// Thread-safety: immutable value.
#pragma once

#include <string>
#include <vector>

#include "core/clock.hpp"
#include "sluice/date.hpp"

namespace sluice {

// Parses a key written `YYYY-MM-DD` (a real calendar day); throws SLU-PARTITION-001 otherwise.
Date ParsePartitionKey(const std::string& key);

// The window [first, last + 1 day) of an inclusive key range, checked for form (SLU-PARTITION-001) and order
// (SLU-PARTITION-005, last before first) only: what can be checked without a partitions definition.
DateWindow KeyRangeWindow(const std::string& first, const std::string& last);

class DailyPartitions {
 public:
  explicit DailyPartitions(Date start_date) : start_date_(start_date) {}

  Date start_date() const { return start_date_; }

  // The last complete partition relative to `today`: yesterday. Throws SLU-PARTITION-004 when the
  // partitions definition has no complete partition yet.
  Date LastComplete(Date today) const;

  // Parses and checks a key: format (SLU-PARTITION-001), not before the start date (SLU-PARTITION-002),
  // not after the last complete partition (SLU-PARTITION-003).
  Date ValidateKey(const std::string& key, Date today) const;

  // The window covering keys first..last inclusive: KeyRangeWindow, then each end checked as ValidateKey does.
  DateWindow WindowForRange(const std::string& first, const std::string& last, Date today) const;

  // Every key in [start_date, LastComplete(today)].
  std::vector<Date> AllKeys(Date today) const;

  bool operator==(const DailyPartitions&) const = default;

 private:
  Date start_date_;
};

}  // namespace sluice
