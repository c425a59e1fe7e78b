// RunExecutor: executes a RunPlan in direct mode — each step recomputes its asset and atomically replaces
// it (whole table, or exactly the step's window) — on a pool of threads, in dependency order.
//
// A failed step stops its downstream (recorded as skipped), never its siblings. Every step outcome is an
// event in the EventLog; every successful write is a MaterializationRecord per partition key (or "" when
// unpartitioned) and a ledger row in the warehouse, written by the warehouse in the same transaction as the
// data. The run is recorded QUEUED → STARTED → SUCCESS / FAILURE with this process's pid and start time.
// Thread-safety: Execute may be called once at a time per executor; the stores and warehouse it is given
// must be thread-safe (they are).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "engine/run_plan.hpp"
#include "engine/run_sql.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

enum class StepStatus { kSuccess, kUnchanged, kFailed, kSkipped };
std::string StepStatusName(StepStatus status);  // OK | UNCHANGED | FAILED | SKIPPED

struct StepOutcome {
  AssetKey key;
  StepStatus status = StepStatus::kSuccess;
  bool wrote_rows = true;                // false for views: they hold no rows of their own
  int64_t rows_written = 0;
  int64_t rows_dropped = 0;
  int64_t duration_ms = 0;
  std::optional<DateWindow> window;
  std::string note;                      // e.g. "seed unchanged", "upstream x failed"
  std::vector<Diagnostic> diagnostics;   // for failed steps
};

struct RunOutcome {
  std::string run_id;
  RunStatus status = RunStatus::kSuccess;
  std::vector<StepOutcome> steps;  // in plan order
};

struct ExecutorOptions {
  int threads = 0;  // 0: one per core
  std::string project_root;  // seed paths resolve against it
};

class RunExecutor {
 public:
  RunExecutor(const Definitions& definitions, Warehouse& warehouse, RunStore& runs, EventLog& events,
              MaterializationStore& materializations, const Clock& clock, ExecutorOptions options);

  // `on_step` is called (serialized) after each step finishes, with its index and the step count.
  RunOutcome Execute(const RunPlan& plan, const std::string& run_id,
                     const std::function<void(const StepOutcome&, size_t done, size_t total)>& on_step);

  // A new run id: UTC time plus 8 random hex characters, e.g. 20261202T163012Z_1f2e3d4c.
  static std::string NewRunId(const Clock& clock);

 private:
  StepOutcome ExecuteStep(const StepPlan& step, const std::string& run_id);
  // `error`, raised by the write of a SQL model's step, pointed at the model file where it happened.
  Error LocatedInModel(const Asset& asset, const RunSql& sql, const SqlError& error) const;

  const Definitions& definitions_;
  Warehouse& warehouse_;
  RunStore& runs_;
  EventLog& events_;
  MaterializationStore& materializations_;
  const Clock& clock_;
  ExecutorOptions options_;
  std::map<std::string, std::string> seed_hashes_;  // asset → sql_hash of its latest ledger row
};

}  // namespace sluice
