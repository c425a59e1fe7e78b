// BackfillCoordinator: runs the chunks of a persisted backfill (state/BackfillStore), each as a RunExecutor run with
// its own run id tagged with the backfill's id, at most max_concurrent_runs at once, sharing one warehouse.
//
// Phases: the chunks are taken in index order as phases of one kind (unpartitioned chunks before, the partitioned
// chunks, unpartitioned chunks after: backfill_plan.hpp); a phase starts only when every chunk of the phases before it
// succeeded. Within the partitioned phase chunks run concurrently; RelationWriteLocks keeps two of them from writing
// one relation at once, so chunk 2 can write `silver` while chunk 1 writes `gold`.
//
// Exactly once: before anything runs, each chunk not recorded as a success is reconciled against the warehouse's
// ledger, which is written in the same transaction as the data: a step of the chunk is done when the ledger holds a
// row for its asset and exactly its window written by a run of this backfill (runs are recorded, tagged, before they
// write). A chunk whose steps are all done is a success without running again (its materializations are recorded
// from the ledger); otherwise only the steps not done run, in a new run. A kill at any point therefore never
// rewrites a committed partition and never loses one.
//
// Cancel: between chunks (and every poll_interval while chunks run) the coordinator reads the backfill's status; when
// another process set CANCELING (`sluice backfills cancel`) it launches nothing more and lets running chunks finish.
// When options.executor.cancel becomes true (Ctrl-C), nothing more is launched and the running chunks are canceled
// by their executors (the caller interrupts the warehouse). Either way chunks not run stay pending and the backfill
// ends CANCELED; `resume` picks them up.
// Final status: COMPLETED_SUCCESS when every chunk succeeded; COMPLETED_FAILED when one failed (later phases are then
// left pending); FAILED, rethrowing, when the coordinator itself fails (e.g. the ledger cannot be read).
// Thread-safety: Run may be called once at a time per coordinator.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "definitions/definitions.hpp"
#include "engine/backfill_plan.hpp"
#include "engine/run_executor.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

// The default of --max-concurrent-runs: chunks of one DuckDB file share the process and its cores, and each chunk
// already runs its steps in parallel, so a few at once keep the machine busy without thrashing.
inline constexpr int kDefaultMaxConcurrentRuns = 2;

// A new backfill id: "bf_" and a run id's form, e.g. bf_20261202T163012Z_1f2e3d4c.
std::string NewBackfillId(const Clock& clock);

// Records `plan` as a REQUESTED backfill owned by this process, its chunks pending; returns the record.
BackfillRecord CreateBackfill(BackfillStore& store, const BackfillPlan& plan, const std::string& backfill_id,
                              int max_concurrent_runs, const Clock& clock);

// Progress counted in asset partitions (a partitioned step over a 5-day window is 5).
struct BackfillProgress {
  size_t partitions_total = 0;
  size_t partitions_done = 0;    // materialized, by this call or earlier (reconciled)
  size_t partitions_failed = 0;  // their step failed or was skipped
  size_t chunks_total = 0;
  size_t chunks_done = 0;        // succeeded, by this call or earlier
  size_t chunks_failed = 0;
  size_t chunks_running = 0;
};

struct ChunkOutcome {
  int index = 0;
  std::optional<DateWindow> window;
  std::string run_id;  // empty when the chunk did not run (it was reconciled as done)
  ChunkStatus status = ChunkStatus::kPending;
  bool reconciled = false;        // found done in the ledger, not run again
  std::vector<StepOutcome> steps;  // of the run
  std::string message;            // the run's failure, when it failed without steps (e.g. the ledger was unreadable)
};

struct BackfillOutcome {
  std::string backfill_id;
  BackfillStatus status = BackfillStatus::kRequested;
  std::string message;               // why, when not COMPLETED_SUCCESS
  std::vector<ChunkOutcome> chunks;  // the chunks this call reconciled or ran, in the order they finished
  BackfillProgress progress;         // at the end
  bool cancel_requested = false;     // by `backfills cancel` (not by a signal)
};

struct BackfillOptions {
  int max_concurrent_runs = kDefaultMaxConcurrentRuns;
  // For each chunk's executor; `cancel` stops the whole backfill. statements_dir only with max_concurrent_runs 1 or a
  // single chunk: the warehouse has one statement observer, which concurrent executors would replace.
  ExecutorOptions executor;
  std::chrono::milliseconds poll_interval{250};  // how often the store is read for a cancel request
  // Called, serialized, at the start, after each step of a partitioned chunk, and as chunks start and finish.
  std::function<void(const BackfillProgress&)> on_progress;
  // Called, serialized, as a chunk's run starts, with the run id and its step count.
  std::function<void(const BackfillChunk&, const std::string& run_id, size_t steps)> on_chunk_started;
  // Called, serialized, after each step of any chunk, with the chunk's index.
  std::function<void(int chunk, const StepOutcome&, size_t done, size_t total)> on_step;
  // Called, serialized, as each chunk finishes (reconciled chunks included).
  std::function<void(const ChunkOutcome&, const BackfillProgress&)> on_chunk;
};

class BackfillCoordinator {
 public:
  BackfillCoordinator(const Definitions& definitions, Warehouse& warehouse, StateStore& state, const Clock& clock,
                      BackfillOptions options);

  // Reconciles, then runs every chunk of `backfill_id` not yet successful, as described above. The caller owns the
  // backfill (created it, or won ClaimBackfill). SLU-BACKFILL-003 when there is no such backfill.
  BackfillOutcome Run(const std::string& backfill_id);

 private:
  const Definitions& definitions_;
  Warehouse& warehouse_;
  StateStore& state_;
  const Clock& clock_;
  BackfillOptions options_;
};

}  // namespace sluice
