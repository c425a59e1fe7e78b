// Multi-run backfills: start one from a plan, resume one whose process stopped, cancel, list and show them.
//
// The lifecycle takes the definitions, the state store and a way to open the warehouse (BackfillContext), not a
// project: a C++ SDK program gives the same with Definitions built in code. Progress goes to a BackfillObserver
// (every callback optional, called from the coordinator's threads, one at a time per kind); nothing here prints.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/backfill_coordinator.hpp"
#include "engine/backfill_plan.hpp"
#include "service/cancellation.hpp"
#include "service/workspace.hpp"

namespace sluice::service {

struct BackfillContext {
  const Definitions& definitions;
  StateStore& state;
  std::filesystem::path project_root;  // seed paths resolve against it
  // Opens the warehouse read-write, waiting for another writer as `wait` says.
  std::function<std::unique_ptr<Warehouse>(const WaitPolicy& wait)> open_warehouse;
};

// The context of a loaded project: its definitions and root, its warehouse opened as `run` opens it.
BackfillContext ContextFor(const Project& project, StateStore& state);

// How a backfill's chunks run.
struct BackfillSettings {
  int threads = 0;
  int max_concurrent_runs = 0;  // 0: the backfill's recorded value (a new one: kDefaultMaxConcurrentRuns)
  bool allow_missing_upstream = false;
  std::optional<double> wait_timeout_seconds;  // unset: wait for the warehouse as long as it takes
};

struct BackfillObserver {
  // The backfill is about to run, `concurrency` chunks at once: before the warehouse opens, once the Cancellation is
  // armed (so threads the observer starts inherit its signal mask).
  std::function<void(const BackfillRecord& backfill, int concurrency)> on_started;
  std::function<void(const std::string& message)> on_waiting;  // waiting for another process holding the warehouse
  std::function<void(const BackfillProgress&)> on_progress;
  std::function<void(const BackfillChunk&, const std::string& run_id, size_t steps)> on_chunk_started;
  std::function<void(const StepOutcome&, size_t done, size_t total)> on_step;
  std::function<void(const ChunkOutcome&, const BackfillProgress&)> on_chunk;
};

struct BackfillResult {
  std::string backfill_id;
  size_t chunk_count = 0;
  // Set when it ran; unset when a cancel came while waiting for the warehouse (nothing was written) or when a
  // resumed backfill had nothing left to do (then `already_complete`).
  std::optional<BackfillOutcome> outcome;
  bool canceled_while_waiting = false;
  std::optional<BackfillRecord> already_complete;
  std::string cancel_cause;  // "SIGINT", … when canceled

  // Canceled by the face's Cancellation (not by `backfills cancel`, which is a request that ends normally).
  bool canceled() const;
  bool succeeded() const;
};

// Records `plan` as a new backfill owned by this process and runs it.
BackfillResult StartBackfill(const BackfillContext& context, const BackfillPlan& plan, const BackfillSettings& settings,
                             Cancellation& cancellation, const BackfillObserver& observer);

// Claims the backfill (its process must be gone) and runs the chunks not yet successful. Throws RequestError
// SLU-BACKFILL-003 for an unknown id, Error SLU-BACKFILL-005 while another live process runs it.
BackfillResult ResumeBackfill(const WorkspaceOptions& workspace, const std::string& backfill_id,
                              const BackfillSettings& settings, Cancellation& cancellation,
                              const BackfillObserver& observer);

std::vector<BackfillRecord> ListBackfills(const WorkspaceOptions& workspace, int limit);

struct BackfillDetail {
  BackfillRecord backfill;
  std::vector<RunRecord> runs;
};
// Throws RequestError SLU-BACKFILL-003 for an unknown id.
BackfillDetail ShowBackfill(const WorkspaceOptions& workspace, const std::string& backfill_id);

struct BackfillCancelResult {
  enum class Kind { kAlreadyFinished, kCanceledDeadOwner, kRequested } kind;
  BackfillRecord backfill;  // as it was before the cancel
  BackfillStatus status;    // after it
};
// Cancels: a backfill whose process died is marked CANCELED now; a running one is asked to launch no more chunks.
BackfillCancelResult CancelBackfill(const WorkspaceOptions& workspace, const std::string& backfill_id);

// The status as shown: a backfill still REQUESTED or CANCELING whose process is gone says so.
std::string ShownStatus(const BackfillRecord& backfill);

// A backfill as the API shows it (with its chunks when asked); a detail adds its runs; a result is the summary of
// one execution.
nlohmann::json ToJson(const BackfillRecord& backfill, bool with_chunks);
nlohmann::json ToJson(const BackfillDetail& detail);
nlohmann::json ToJson(const BackfillResult& result);

}  // namespace sluice::service
