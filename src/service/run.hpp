// `run`: materializes a selection. With --from/--to over partitioned assets it is a backfill (service/backfill.hpp);
// otherwise one run: planned, queued in the state store, the warehouse opened (waiting for another process when it
// must, the wait recorded in the run's events), executed. Progress goes to a RunObserver; nothing here prints.
#pragma once

#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/run_executor.hpp"
#include "service/backfill.hpp"
#include "service/cancellation.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

struct RunCommand {
  std::vector<std::string> select;
  std::optional<std::string> partition;  // one day; or
  std::optional<std::string> from;       // an inclusive range of days
  std::optional<std::string> to;
  int threads = 0;
  bool full_refresh = false;
  bool allow_missing_upstream = false;
  std::optional<double> wait_timeout_seconds;  // unset: wait for the warehouse as long as it takes
  int max_concurrent_runs = 0;  // a backfill's chunks run at once; 0: the default (kDefaultMaxConcurrentRuns)
};

struct RunObserver {
  std::function<void(const std::string& warning)> on_warning;  // e.g. partition flags that select nothing partitioned
  std::function<void(const std::string& run_id, const std::string& message)> on_waiting;  // for the warehouse
  std::function<void(const std::string& run_id, size_t steps)> on_started;                // once the warehouse is open
  std::function<void(const AssetKey&)> on_step_started;
  std::function<void(const StepOutcome&, size_t done, size_t total)> on_step;
  BackfillObserver backfill;  // when the run is a backfill
};

struct RunResult {
  enum class Kind { kNothingSelected, kRun, kCanceledWhileWaiting, kBackfill } kind = Kind::kNothingSelected;
  std::string run_id;
  RunOutcome outcome;                    // kRun
  std::filesystem::path statements_dir;  // kRun: the statements it sent
  std::optional<BackfillResult> backfill;
  std::string cancel_cause;  // "SIGINT", … when canceled
  bool full_refresh = false;
};

// Throws RequestError for flags that contradict each other (SLU-CLI-004) or a selection / key naming nothing.
RunResult Run(const WorkspaceOptions& workspace, const RunCommand& command, Cancellation& cancellation,
              const RunObserver& observer);

// {asset, status, duration_ms, note, diagnostics, window, rows_written, rows_dropped}.
nlohmann::json ToJson(const StepOutcome& step);
// A finished run's summary: {run_id, status, counts, steps, statements_dir}; nothing selected: {run_id: null, status:
// "NOTHING_SELECTED", steps: []}.
nlohmann::json ToJson(const RunResult& result);

}  // namespace sluice::service
