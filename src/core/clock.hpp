// Clock: the one source of "now". Injected so schedules, default partitions and tests are deterministic.
// Thread-safety: implementations are safe to call from any thread.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "sluice/date.hpp"

namespace sluice {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
  // Today's date in UTC.
  Date TodayUtc() const;
};

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return std::chrono::system_clock::now(); }
};

class FixedClock final : public Clock {
 public:
  explicit FixedClock(std::chrono::system_clock::time_point now) : now_(now) {}
  std::chrono::system_clock::time_point Now() const override { return now_; }

 private:
  std::chrono::system_clock::time_point now_;
};

// A clock that starts at `start` and then advances with real time: `sluice daemon --now` (tests, replays).
class ShiftedClock final : public Clock {
 public:
  explicit ShiftedClock(std::chrono::system_clock::time_point start);
  std::chrono::system_clock::time_point Now() const override;

 private:
  std::chrono::system_clock::time_point start_;
  std::chrono::steady_clock::time_point began_;
};

// The time to the second in compact ISO-8601 UTC, e.g. 20261202T163012Z: the prefix of run and deployment ids.
std::string CompactUtc(std::chrono::system_clock::time_point time);

// A new run id: the clock's UTC time to the second and 8 random hex digits, e.g. 20261202T163012Z_1a2b3c4d; ids sort
// by creation time.
std::string NewRunId(const Clock& clock);

// ISO-8601 UTC text with milliseconds, e.g. 2026-12-02T16:27:25.123Z.
std::string FormatUtc(std::chrono::system_clock::time_point time);
// The inverse of FormatUtc (the milliseconds optional); nullopt for any other text.
std::optional<std::chrono::system_clock::time_point> ParseUtc(std::string_view text);

}  // namespace sluice
