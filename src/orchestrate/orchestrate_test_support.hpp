// Test support shared by the orchestrate layer's unit tests.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"

namespace sluice::orchestrate {

// The first diagnostic `read` throws; a test failure when it throws nothing.
template <typename Read>
Diagnostic ErrorOf(Read read) {
  try {
    read();
  } catch (const Error& error) {
    return error.diagnostics().front();
  }
  ADD_FAILURE() << "no error";
  return {};
}

// A clock tests set and advance; safe to read from the threads a run or the daemon starts.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::chrono::system_clock::time_point now) : now_(now) {}
  std::chrono::system_clock::time_point Now() const override {
    std::lock_guard lock(mutex_);
    return now_;
  }
  void Set(std::chrono::system_clock::time_point now) {
    std::lock_guard lock(mutex_);
    now_ = now;
  }
  void Advance(std::chrono::system_clock::duration by) {
    std::lock_guard lock(mutex_);
    now_ += by;
  }

 private:
  mutable std::mutex mutex_;
  std::chrono::system_clock::time_point now_;
};

}  // namespace sluice::orchestrate
