// RunExecutor: executes a RunPlan in direct mode — each step recomputes its asset and atomically replaces
// it (whole table, or exactly the step's window) — on a pool of threads, in dependency order.
//
// A failed step stops its downstream (recorded as skipped), never its siblings. A step whose upstream outside
// the run was never materialized (for a partitioned upstream: not for every date of the step's window) is
// skipped with that reason, its downstream too, and fails the run, unless allow_missing_upstream. Every step
// outcome is an event in the EventLog, appended in time order; every successful write is a
// MaterializationRecord per partition key (or "" when unpartitioned) and a ledger row in the warehouse, written
// by the warehouse in the same transaction as the data. The run is recorded QUEUED (QueueRun, before the
// warehouse is opened, which may wait) → STARTED → SUCCESS / FAILURE / CANCELED with this process's pid and start
// time.
//
// A SQL model that uses what the server lacks (Warehouse::CheckRunnable: a window function on ClickHouse 18.16, …)
// refuses the whole run before any step starts, with the error located in the model file; the run is recorded
// FAILURE and nothing is written.
//
// Cancel: once options.cancel is true no step starts; the caller interrupts the warehouse, so running writes fail
// and roll back; those steps and the ones not started are recorded CANCELED, finished steps are kept, and the run
// ends CANCELED.
// Thread-safety: Execute may be called once at a time per executor; the stores and warehouse it is given
// must be thread-safe (they are).
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "engine/relation_write_locks.hpp"
#include "engine/run_plan.hpp"
#include "engine/run_sql.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

enum class StepStatus { kSuccess, kUnchanged, kFailed, kSkipped, kCanceled };
std::string StepStatusName(StepStatus status);  // OK | UNCHANGED | FAILED | SKIPPED | CANCELED

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
  const std::atomic<bool>* cancel = nullptr;  // becomes true when the run is to stop
  bool allow_missing_upstream = false;        // run steps whose upstream outside the run was never materialized
  // When set, each write's statements are written to <statements_dir>/<namespace>/<relation>.sql.
  std::optional<std::filesystem::path> statements_dir;
  std::function<void(const AssetKey&)> on_start;  // called from the worker as a step starts
  // When set, each write holds its relation's lock: executors running at once on one warehouse (a backfill's
  // chunks) then never write one relation concurrently.
  RelationWriteLocks* write_locks = nullptr;
};

// Records `run_id` as QUEUED for `plan`, owned by this process; `backfill_id` tags a backfill's chunk run.
void QueueRun(RunStore& runs, const RunPlan& plan, const std::string& run_id, const Clock& clock,
              const std::string& backfill_id = "");

// Ends a queued run that never started (its warehouse could not be opened, or it was canceled while waiting):
// a run_finished event and the run FAILURE, or CANCELED when `canceled`.
void AbandonRun(RunStore& runs, EventLog& events, const std::string& run_id, const Clock& clock, bool canceled,
                const std::string& message);

class RunExecutor {
 public:
  RunExecutor(const Definitions& definitions, Warehouse& warehouse, RunStore& runs, EventLog& events,
              MaterializationStore& materializations, const Clock& clock, ExecutorOptions options);

  // `on_step` is called (serialized) after each step finishes, with its index and the step count. The run is
  // queued first when QueueRun has not been called for it.
  RunOutcome Execute(const RunPlan& plan, const std::string& run_id,
                     const std::function<void(const StepOutcome&, size_t done, size_t total)>& on_step);

  // A new run id: UTC time plus 8 random hex characters, e.g. 20261202T163012Z_1f2e3d4c.
  static std::string NewRunId(const Clock& clock);

 private:
  struct Scheduling;  // which steps wait, are ready, finished or skipped (run_executor.cpp)

  // The phases of Execute. Prepare: the run checked runnable, the ledger and catalog read, the schemas made, the
  // statement observer set (a failure abandons the run). Schedule: the steps run on the thread pool in dependency
  // order, a failure skipping its downstream. Conclude: the run's status recorded.
  void Prepare(const RunPlan& plan, const std::string& run_id);
  void Schedule(const RunPlan& plan, const std::string& run_id, Scheduling& scheduling);
  RunOutcome Conclude(const RunPlan& plan, const std::string& run_id, Scheduling& scheduling);
  bool Canceled() const { return options_.cancel != nullptr && options_.cancel->load(); }
  // Executes one step and records its events (started, then finished, failed, or canceled when the run was).
  StepOutcome RunStep(const StepPlan& step, const std::string& run_id);
  StepOutcome ExecuteStep(const StepPlan& step, const std::string& run_id);
  // The one write path of a SELECT (a SQL model's or a code asset's): a view, exactly the step's window of a
  // partitioned table (or all of it in a full refresh), or the whole table. Sets the ledger's sql_hash.
  WriteResult WriteSelect(const Asset& asset, const Relation& relation, const StepPlan& step, const std::string& sql,
                          bool view, LedgerEntry& ledger);
  // `error`, raised by the write of a SQL model's step, pointed at the model file where it happened.
  Error LocatedInModel(const Asset& asset, const RunSql& sql, const SqlError& error) const;

  // Returns when the warehouse can run every SQL step of `plan` (Warehouse::CheckRunnable); otherwise throws the
  // first refusal located in its model file, before anything of the run is written.
  void CheckRunnable(const RunPlan& plan) const;
  // Why `step` cannot run yet: an upstream outside the run that the warehouse does not hold; nullopt when it can.
  std::optional<std::string> MissingUpstream(const StepPlan& step) const;
  // Appends an event stamped with the time now; serialized, so that the log is in time order.
  void Record(const std::string& run_id, const RunEvent& event);
  // Writes the statements of one write under options_.statements_dir; a failure to write is ignored.
  void SaveStatements(const Relation& relation, const std::vector<std::string>& statements) const;

  const Definitions& definitions_;
  Warehouse& warehouse_;
  RunStore& runs_;
  EventLog& events_;
  MaterializationStore& materializations_;
  const Clock& clock_;
  ExecutorOptions options_;
  std::mutex record_mutex_;
  // Read once at the start of a run.
  std::map<std::string, std::string> seed_hashes_;  // asset → sql_hash of its latest ledger row
  std::map<std::string, std::vector<DateWindow>> written_windows_;  // asset → the windows its ledger rows own
  std::set<std::string> relations_;  // every relation in the warehouse, by RelationKey
};

}  // namespace sluice
