// Test-only helpers shared by the state layer's tests.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <string>
#include <system_error>

#include "core/diagnostic.hpp"
#include "state/run_event.hpp"

namespace sluice {

// A new, empty folder under the system temporary folder, removed with everything in it on destruction.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "sluice_state_test_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr)
      throw std::system_error(errno, std::generic_category(), "mkdtemp");
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;  // best effort: a leftover temporary folder must not fail a test
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The code of the sluice::Error `action` throws, or "no error".
inline std::string StateErrorCode(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.diagnostics().front().code;
  }
  return "no error";
}

// One fully populated event of every RunEvent kind, in variant order.
inline std::vector<RunEvent> OneEventOfEveryKind() {
  std::vector<RunEvent> events = {
      RunStartedEvent{"+gold.daily_revenue", {"bronze.orders", "silver.orders", "gold.daily_revenue"}},
      StepStartedEvent{"silver.orders"},
      MaterializationEvent{"silver.orders", "2026-01-01", "2026-01-03", 1200, 7, "ab12cd"},
      StepFailedEvent{
          "gold.daily_revenue",
          {EventDiagnostic{"SLU-ENGINE-004", "division by zero", "models/gold/revenue.sql", 12, 5,
                           "guard the divisor"},
           EventDiagnostic{"SLU-WAREHOUSE-001", "query failed: \"quoted\" 'text' ü", "", 0, 0, ""}}},
      StepSkippedEvent{"gold.weekly", "upstream gold.daily_revenue failed"},
      StepFinishedEvent{"silver.orders", 1534},
      RunFinishedEvent{"FAILURE", "1 step failed"},
      RunWaitingEvent{"waiting for the writer lock on /p/warehouse.duckdb (held by pid 123)"},
      StatementEvent{"replay_tbl__orders", "ab12", "INSERT INTO db.t SELECT 1"},
      StepNoteEvent{"replay_tbl__orders", "rows arrived"},
  };
  return events;
}

}  // namespace sluice
