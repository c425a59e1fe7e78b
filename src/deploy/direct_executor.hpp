// DirectExecutor: runs a DirectPlan (`sluice build` in direct mode), recording it as a run in the state stores.
//
// ClickHouse: the plan's statements run in order, serially. A replay step fills its root from the history of its
// driving relation in one quiet window, so that no row is lost or doubled at the boundary between the replay and
// the root's live materialized view (StreamBuild's overlap window, reference §11.3, does not exist here):
//   1. a managed source's landing view is detached (nothing lands while the window is open; Kafka keeps the
//      messages and landing resumes where it stopped);
//   2. the driving table's insert watermark is read: its highest block number and its row count;
//   3. the boundary is captured (per-partition max offsets, max time or max cursor, by lineage mode);
//   4. the root's materialized view is created: inserts from here on reach the root live;
//   5. the history up to the boundary is inserted into the root (and through the views below it, downstream);
//   6. once every insert that began before the view existed has finished, the watermark is read again.
// An unchanged watermark proves that no insert reached the driving table inside the window: each row came either
// through the replay (it was there before) or through the view (it came after), never both, never neither. A
// changed one means rows arrived meanwhile: the root's subtree is dropped, recreated and replayed again (at most
// kReplayAttempts times, then SLU-DEPLOY-010). A bounded replay (ReplaySpec::bounded, virtual deployments) also
// captures its lower bound in step 3, inserts only the anchor's rows above it in step 5 and, when seeded, first copies
// the active table's rows at or below it. Pause points (core/pause_point.hpp): build_after_teardown,
// build_after_realization (before any replay), build_before_replay_insert (the view exists, the history not yet
// inserted), build_after_replay (before the ledger rows).
// After the replays, each model's ledger row and fingerprint are recorded; then the audits run (a failing
// error-severity audit fails the build; warnings do not).
//
// A prepare step holding a seed loads it through the warehouse's seed write (with its ledger row) when its file
// changed since its last load (engine/seed_hash.hpp), so the replays below read it and a bad file stops the build
// before anything is dropped.
// A failed step's diagnostics without a place are located at its model's (or source's) file.
//
// DuckDB: prepare, then the scope's tables and views are written by the engine's run path (RunExecutor, with
// full refresh: the same write `sluice run --full-refresh` does), then fingerprints and audits.
//
// Cancel: once options.cancel is true no further statement starts; the caller interrupts the warehouse.
// Thread-safety: one Execute at a time.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"
#include "deploy/direct_plan.hpp"
#include "state/state_store.hpp"
#include "warehouse/warehouse.hpp"

namespace sluice {

inline constexpr int kReplayAttempts = 5;

enum class BuildStepStatus { kSuccess, kFailed, kSkipped, kCanceled };
std::string BuildStepStatusName(BuildStepStatus status);  // OK | FAILED | SKIPPED | CANCELED

struct BuildStepOutcome {
  std::string step;
  DeployPhase phase = DeployPhase::kPrepare;
  BuildStepStatus status = BuildStepStatus::kSuccess;
  int64_t duration_ms = 0;
  int64_t rows = -1;              // rows the step wrote (replay: into its root), or -1 when not counted
  int attempts = 0;               // replay steps: windows opened
  std::string boundary;           // replay steps: the captured boundary, as SQL
  std::string note;
  bool audit_failed_error = false;  // an error-severity audit found failing rows
  std::vector<Diagnostic> diagnostics;
};

struct BuildOutcome {
  std::string run_id;
  RunStatus status = RunStatus::kSuccess;
  std::vector<BuildStepOutcome> steps;
};

// What is reported as the build goes: kind is step_started | step_finished | statement | replay_retry.
struct BuildProgress {
  std::string kind;
  std::string step;
  DeployPhase phase = DeployPhase::kPrepare;
  std::string detail;                      // statement: its sha256; replay_retry: why
  const BuildStepOutcome* outcome = nullptr;  // step_finished
};

// What a replay captured: per partition (offsets mode) or one value (time and cursor modes), as SQL literals' text.
struct BoundaryValue {
  std::optional<std::string> partition;
  std::string value;
};

struct CapturedBoundary {
  std::vector<BoundaryValue> values;  // empty: the relation had no rows
  std::string keep;                   // SQL condition on the anchor's rows: what the replay inserts
  std::string seed;                   // bounded replays: the condition on the active table's rows a seed copies
};

struct DirectExecutorOptions {
  std::string project_root;
  const std::atomic<bool>* cancel = nullptr;
  // Every executed statement is appended here (`-- step` header, the statement shown with secrets redacted).
  std::optional<std::filesystem::path> statements_file;
  std::function<void(const BuildProgress&)> on_progress;
  std::string selection_text = "*";
  std::string command = "build";  // the run's selection reads "<command> <selection_text>"
  // Called once per replay step, after its quiet window: the cut-off captured and, for a bounded replay, the lower
  // bound.
  std::function<void(const ReplaySpec&, const CapturedBoundary& cutoff, const CapturedBoundary* lower)> on_boundary;
};

class DirectExecutor {
 public:
  DirectExecutor(const Definitions& definitions, Warehouse& warehouse, RunStore& runs, EventLog& events,
                 MaterializationStore& materializations, const Clock& clock, DirectExecutorOptions options);

  BuildOutcome Execute(const DirectPlan& plan, const std::string& run_id);

 private:
  struct ReplayWindow;
  void ExecuteClickHouse(const DirectPlan& plan, const std::string& run_id, BuildOutcome& outcome);
  void ExecuteDuckDb(const DirectPlan& plan, const std::string& run_id, BuildOutcome& outcome);
  void RunStatements(const PlanStep& step, const std::string& run_id);
  void LoadSeed(const PlanStep& step, const std::string& run_id, BuildStepOutcome& outcome);
  void Run(const PlanStep& step, const PlanStatement& statement, const std::string& run_id);
  void Replay(const DirectPlan& plan, const PlanStep& step, const std::string& run_id, BuildStepOutcome& outcome);
  CapturedBoundary CaptureBoundary(const ReplaySpec& spec);
  CapturedBoundary CaptureLowerBound(const ReplaySpec& spec);
  void Seed(const PlanStep& step, const ReplaySpec& spec, const CapturedBoundary& lower, const std::string& run_id);
  std::pair<std::string, std::string> Watermark(const ReplaySpec& spec);
  void WaitForInsertsOlderThan(std::chrono::steady_clock::time_point since);
  void RebuildSubtree(const DirectPlan& plan, const ReplaySpec& spec, const std::string& run_id);
  void RecordModels(const DirectPlan& plan, const std::string& run_id);
  void RunAudit(const PlanStep& step, BuildStepOutcome& outcome);
  void Record(const std::string& run_id, const RunEvent& event);
  bool Canceled() const { return options_.cancel != nullptr && options_.cancel->load(); }

  const Definitions& definitions_;
  Warehouse& warehouse_;
  RunStore& runs_;
  EventLog& events_;
  MaterializationStore& materializations_;
  const Clock& clock_;
  DirectExecutorOptions options_;
  std::ofstream statements_;  // options_.statements_file, open while Execute runs
};

}  // namespace sluice
