#include "engine/backfill_coordinator.hpp"

#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"
#include "engine/relation_write_locks.hpp"

namespace sluice {

namespace {

std::optional<DateWindow> WindowOf(const BackfillChunk& chunk) {
  if (!chunk.partition_start || !chunk.partition_end) return std::nullopt;
  std::optional<Date> first = Date::Parse(*chunk.partition_start);
  std::optional<Date> last = Date::Parse(*chunk.partition_end);
  if (!first || !last) return std::nullopt;
  return DateWindow{*first, last->AddDays(1)};
}

// The ledger key of a write: the asset and the window it owned ("" for a whole-table write).
std::string WriteKey(const std::string& asset, const std::optional<DateWindow>& window) {
  return asset + "|" + (window ? window->ToString() : std::string());
}

std::vector<std::string> Days(const DateWindow& window) {
  std::vector<std::string> days;
  for (Date day = window.start; day < window.end; day = day.AddDays(1)) days.push_back(day.ToString());
  return days;
}

// A chunk still to run: the steps of it not found done in the ledger.
struct PendingChunk {
  const BackfillChunk* chunk = nullptr;
  std::optional<DateWindow> window;
  std::vector<AssetKey> todo;
};

}  // namespace

std::string NewBackfillId(const Clock& clock) { return "bf_" + RunExecutor::NewRunId(clock); }

BackfillRecord CreateBackfill(BackfillStore& store, const BackfillPlan& plan, const std::string& backfill_id,
                              int max_concurrent_runs, const Clock& clock) {
  BackfillRecord record;
  record.backfill_id = backfill_id;
  record.created_at = FormatUtc(clock.Now());
  record.selection = plan.selection_text;
  record.partition_from = plan.first.ToString();
  record.partition_to = plan.last.ToString();
  record.pid = ::getpid();
  record.pid_start_time = ProcessStartTime(record.pid);
  record.max_concurrent_runs = max_concurrent_runs;
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    BackfillChunk chunk;
    chunk.index = static_cast<int>(i);
    if (plan.chunks[i].window) {
      chunk.partition_start = plan.chunks[i].window->start.ToString();
      chunk.partition_end = plan.chunks[i].window->end.AddDays(-1).ToString();
    }
    for (const AssetKey& key : plan.chunks[i].assets) chunk.assets.push_back(key.ToString());
    record.chunks.push_back(std::move(chunk));
  }
  store.CreateBackfill(record);
  return record;
}

BackfillCoordinator::BackfillCoordinator(const Definitions& definitions, Warehouse& warehouse, StateStore& state,
                                         const Clock& clock, BackfillOptions options)
    : definitions_(definitions), warehouse_(warehouse), state_(state), clock_(clock), options_(std::move(options)) {}

namespace {

// One execution of a backfill, in named phases: Reconcile (what the ledger shows written), RunPhases (the pending
// chunks, partitioned and unpartitioned ones in separate phases, a few at once), Conclude (the backfill's status).
// Thread-safety: RunChunk runs on several threads; `progress_mutex_` guards outcome_ and serializes the callbacks,
// `stop_` is read and written under the phase's mutex or by the launching thread only.
class BackfillExecution {
 public:
  BackfillExecution(const Definitions& definitions, Warehouse& warehouse, StateStore& state, const Clock& clock,
                    const BackfillOptions& options, BackfillRecord backfill)
      : definitions_(definitions),
        warehouse_(warehouse),
        state_(state),
        clock_(clock),
        options_(options),
        backfill_(std::move(backfill)),
        today_(clock.TodayUtc()),
        outcome_{backfill_.backfill_id} {}

  BackfillOutcome Run() {
    try {
      Reconcile();
      if (options_.on_progress) options_.on_progress(outcome_.progress);
      RunPhases();
    } catch (const Error& error) {
      state_.SetBackfillStatus(backfill_.backfill_id, BackfillStatus::kFailed, FormatUtc(clock_.Now()),
                               error.diagnostics().front().message);
      throw;
    }
    Conclude();
    return outcome_;
  }

 private:
  // The asset a chunk names, or SLU-BACKFILL-004 when the project no longer defines it.
  const Asset& DefinedAsset(const std::string& name) const {
    std::optional<AssetKey> key;
    try {
      key = AssetKey::Parse(name);
    } catch (const Error&) {
      key.reset();  // a malformed name is reported as an undefined asset below
    }
    const Asset* asset = key ? definitions_.Find(*key) : nullptr;
    if (asset == nullptr) {
      throw Error(Diagnostic{"SLU-BACKFILL-004",
                             "asset " + name + " of backfill " + backfill_.backfill_id + " is no longer defined",
                             {},
                             "the project changed since the backfill was planned; start a new backfill with "
                             "`sluice run --from … --to …`",
                             {}});
    }
    return *asset;
  }

  // Counts the partitions of every chunk; records the writes the ledger shows for this backfill's runs (a chunk whose
  // writes all committed is done, only its record was lost); the rest is pending.
  void Reconcile() {
    std::set<std::string> runs_of_backfill;
    for (const RunRecord& run : state_.RunsOfBackfill(backfill_.backfill_id)) runs_of_backfill.insert(run.run_id);
    std::map<std::string, LedgerEntry> written;  // WriteKey → the latest such row of a run of this backfill
    for (const LedgerEntry& entry : warehouse_.ReadLedger()) {
      if (runs_of_backfill.count(entry.run_id)) written[WriteKey(entry.asset, entry.window)] = entry;
    }
    outcome_.progress.chunks_total = backfill_.chunks.size();
    for (const BackfillChunk& chunk : backfill_.chunks) ReconcileChunk(chunk, written);
  }

  void ReconcileChunk(const BackfillChunk& chunk, const std::map<std::string, LedgerEntry>& written) {
    BackfillProgress& progress = outcome_.progress;
    std::optional<DateWindow> window = WindowOf(chunk);
    PendingChunk work{&chunk, window, {}};
    std::vector<MaterializationRecord> materialized;
    std::vector<PartitionStatusRecord> statuses;
    for (const std::string& name : chunk.assets) {
      const Asset& asset = DefinedAsset(name);
      const std::optional<DateWindow> step_window = asset.partitions ? window : std::nullopt;
      const size_t days = step_window ? static_cast<size_t>(step_window->days()) : 0;
      progress.partitions_total += days;
      if (chunk.status == ChunkStatus::kSuccess) {
        progress.partitions_done += days;
        continue;
      }
      auto row = written.find(WriteKey(name, step_window));
      if (row == written.end()) {
        work.todo.push_back(asset.key);
        continue;
      }
      progress.partitions_done += days;
      const LedgerEntry& entry = row->second;
      for (const std::string& day : step_window ? Days(*step_window) : std::vector<std::string>{""}) {
        materialized.push_back({name, day, entry.run_id, entry.row_count, entry.sql_hash, entry.written_at});
        if (!day.empty()) {
          statuses.push_back(
              {name, day, PartitionState::kMaterialized, entry.run_id, backfill_.backfill_id, entry.written_at});
        }
      }
    }
    state_.RecordMaterializations(materialized);
    state_.RecordPartitionStatuses(statuses);
    if (chunk.status == ChunkStatus::kSuccess) {
      ++progress.chunks_done;
    } else if (work.todo.empty()) {
      state_.UpdateChunk(backfill_.backfill_id, chunk.index, ChunkStatus::kSuccess, chunk.run_id);
      ++progress.chunks_done;
      ChunkOutcome done{chunk.index, window, "", ChunkStatus::kSuccess, true, {}, ""};
      outcome_.chunks.push_back(done);
      if (options_.on_chunk) options_.on_chunk(done, progress);
    } else {
      pending_.push_back(std::move(work));
    }
  }

  bool SignalCanceled() const { return options_.executor.cancel != nullptr && options_.executor.cancel->load(); }

  // Reads the backfill's status at most every poll_interval, and always when a chunk is about to be launched
  // (`before_launch`): a cancel request is never missed between two chunks.
  void PollCancelRequest(bool before_launch) {
    if (!before_launch && std::chrono::steady_clock::now() - last_poll_ < options_.poll_interval) return;
    last_poll_ = std::chrono::steady_clock::now();
    std::optional<BackfillRecord> now;
    try {
      now = state_.GetBackfill(backfill_.backfill_id);
    } catch (const Error&) {
      return;  // chunks may be running: an unreadable store is read again at the next poll, not a reason to stop
    }
    if (now && now->status == BackfillStatus::kCanceling) {
      stop_ = true;
      outcome_.cancel_requested = true;
    }
  }

  // Runs one chunk's pending steps as one run; records its partitions' statuses and the chunk's.
  void RunChunk(const PendingChunk& work) {
    ChunkOutcome result = ExecuteChunk(work);
    PausePoint("backfill_chunk_finished");
    RecordChunk(*work.chunk, result);
    std::lock_guard<std::mutex> lock(progress_mutex_);
    BackfillProgress& progress = outcome_.progress;
    if (result.status == ChunkStatus::kSuccess) ++progress.chunks_done;
    if (result.status == ChunkStatus::kFailed) ++progress.chunks_failed;
    --progress.chunks_running;
    outcome_.chunks.push_back(result);
    if (options_.on_chunk) options_.on_chunk(result, progress);
  }

  ChunkOutcome ExecuteChunk(const PendingChunk& work) {
    const BackfillChunk& chunk = *work.chunk;
    ChunkOutcome result{chunk.index, work.window, RunExecutor::NewRunId(clock_), ChunkStatus::kFailed, false, {}, ""};
    try {
      RunPlan plan = PlanChunkRun(definitions_, backfill_.selection, work.window, work.todo, today_);
      // Recorded (tagged) before anything is written: reconciliation trusts ledger rows of the backfill's runs only.
      QueueRun(state_, plan, result.run_id, clock_, backfill_.backfill_id);
      state_.UpdateChunk(backfill_.backfill_id, chunk.index, ChunkStatus::kRunning, result.run_id);
      if (options_.on_chunk_started) {
        std::lock_guard<std::mutex> lock(progress_mutex_);
        options_.on_chunk_started(chunk, result.run_id, plan.steps.size());
      }
      PausePoint("backfill_chunk_started");
      ExecutorOptions executor_options = options_.executor;
      executor_options.write_locks = &write_locks_;
      RunExecutor executor(definitions_, warehouse_, state_, state_, state_, clock_, executor_options);
      RunOutcome run = executor.Execute(plan, result.run_id, [&](const StepOutcome& step, size_t done, size_t total) {
        StepFinished(chunk, step, done, total);
      });
      result.steps = std::move(run.steps);
      result.status = run.status == RunStatus::kSuccess    ? ChunkStatus::kSuccess
                      : run.status == RunStatus::kCanceled ? ChunkStatus::kCanceled
                                                           : ChunkStatus::kFailed;
    } catch (const Error& error) {
      result.message = error.diagnostics().front().message;
      result.status = SignalCanceled() ? ChunkStatus::kCanceled : ChunkStatus::kFailed;
    } catch (const std::exception& error) {
      result.message = error.what();
    }
    return result;
  }

  void StepFinished(const BackfillChunk& chunk, const StepOutcome& step, size_t done, size_t total) {
    std::lock_guard<std::mutex> lock(progress_mutex_);
    if (options_.on_step) options_.on_step(chunk.index, step, done, total);
    if (!step.window) return;
    const size_t days = static_cast<size_t>(step.window->days());
    BackfillProgress& progress = outcome_.progress;
    if (step.status == StepStatus::kSuccess || step.status == StepStatus::kUnchanged) {
      progress.partitions_done += days;
    } else if (step.status == StepStatus::kFailed || step.status == StepStatus::kSkipped) {
      progress.partitions_failed += days;
    }
    if (options_.on_progress) options_.on_progress(progress);
  }

  void RecordChunk(const BackfillChunk& chunk, ChunkOutcome& result) {
    std::vector<PartitionStatusRecord> statuses;
    const std::string now = FormatUtc(clock_.Now());
    for (const StepOutcome& step : result.steps) {
      if (!step.window) continue;
      std::optional<PartitionState> state;
      if (step.status == StepStatus::kSuccess || step.status == StepStatus::kUnchanged) {
        state = PartitionState::kMaterialized;
      } else if (step.status == StepStatus::kFailed || step.status == StepStatus::kSkipped) {
        state = PartitionState::kFailed;
      }
      if (!state) continue;
      for (const std::string& day : Days(*step.window)) {
        statuses.push_back({step.key.ToString(), day, *state, result.run_id, backfill_.backfill_id, now});
      }
    }
    try {
      state_.RecordPartitionStatuses(statuses);
      // A canceled chunk is pending again: it did not finish, and resume runs it.
      state_.UpdateChunk(backfill_.backfill_id, chunk.index,
                         result.status == ChunkStatus::kCanceled ? ChunkStatus::kPending : result.status,
                         result.run_id);
    } catch (const Error& error) {
      // The ledger keeps what was written; resume reconciles the chunk from it.
      if (result.message.empty()) result.message = error.diagnostics().front().message;
    }
  }

  // The pending chunks phase by phase (a run of consecutive chunks all partitioned, or all not): a phase starts
  // only when the one before it had no failed chunk.
  void RunPhases() {
    auto is_partitioned = [](const BackfillChunk& chunk) { return chunk.partition_start.has_value(); };
    size_t next = 0;  // into pending_
    for (size_t begin = 0; begin < backfill_.chunks.size();) {
      size_t end = begin;
      while (end < backfill_.chunks.size() &&
             is_partitioned(backfill_.chunks[end]) == is_partitioned(backfill_.chunks[begin])) {
        ++end;
      }
      std::deque<const PendingChunk*> queue;
      while (next < pending_.size() && static_cast<size_t>(pending_[next].chunk->index) < end) {
        queue.push_back(&pending_[next++]);
      }
      begin = end;
      if (phase_failed_ || stop_) {
        left_behind_ += phase_failed_ && !stop_ ? queue.size() : 0;
        continue;
      }
      RunPhase(queue);
      for (const ChunkOutcome& chunk : outcome_.chunks) {
        phase_failed_ = phase_failed_ || chunk.status == ChunkStatus::kFailed;
      }
    }
  }

  // Launches the queue's chunks, at most max_concurrent_runs at once, until it is empty or a cancel stops launching;
  // returns when every launched chunk has finished.
  void RunPhase(std::deque<const PendingChunk*>& queue) {
    const size_t slots = static_cast<size_t>(std::max(1, options_.max_concurrent_runs));
    std::mutex mutex;
    std::condition_variable changed;
    size_t running = 0;
    std::vector<std::thread> threads;
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      const bool slot_free = running < slots && !queue.empty();
      lock.unlock();
      if (!stop_) {
        if (SignalCanceled()) stop_ = true;
        PollCancelRequest(slot_free);
      }
      lock.lock();
      while (!stop_ && running < slots && !queue.empty()) {
        const PendingChunk* work = queue.front();
        queue.pop_front();
        ++running;
        {
          std::lock_guard<std::mutex> progress_lock(progress_mutex_);
          ++outcome_.progress.chunks_running;
          if (options_.on_progress) options_.on_progress(outcome_.progress);
        }
        threads.emplace_back([&, work] {
          RunChunk(*work);
          std::lock_guard<std::mutex> done(mutex);
          --running;
          changed.notify_all();
        });
      }
      if (running == 0 && (queue.empty() || stop_)) break;
      changed.wait_for(lock, options_.poll_interval);
    }
    lock.unlock();
    for (std::thread& thread : threads) thread.join();
  }

  // The backfill's status from its chunks' latest statuses, recorded in the store.
  void Conclude() {
    size_t succeeded = 0, failed = 0;
    std::map<int, ChunkStatus> latest;
    for (const BackfillChunk& chunk : backfill_.chunks) latest[chunk.index] = chunk.status;
    for (const ChunkOutcome& chunk : outcome_.chunks) latest[chunk.index] = chunk.status;
    for (const auto& [index, status] : latest) {
      succeeded += status == ChunkStatus::kSuccess;
      failed += status == ChunkStatus::kFailed;
    }
    const size_t not_run = backfill_.chunks.size() - succeeded - failed;
    if (stop_ || SignalCanceled()) {
      outcome_.status = BackfillStatus::kCanceled;
      outcome_.message = std::string("canceled") + (outcome_.cancel_requested ? " on request" : "") + ": " +
                         std::to_string(succeeded) + " of " + std::to_string(backfill_.chunks.size()) +
                         " chunk(s) done, " + std::to_string(not_run) + " not finished";
    } else if (failed == 0 && not_run == 0) {
      outcome_.status = BackfillStatus::kCompletedSuccess;
    } else {
      outcome_.status = BackfillStatus::kCompletedFailed;
      outcome_.message = std::to_string(failed) + " chunk(s) failed";
      if (left_behind_ > 0) {
        outcome_.message += "; " + std::to_string(left_behind_) + " chunk(s) not run because an earlier phase failed";
      }
    }
    state_.SetBackfillStatus(backfill_.backfill_id, outcome_.status, FormatUtc(clock_.Now()), outcome_.message);
  }

  const Definitions& definitions_;
  Warehouse& warehouse_;
  StateStore& state_;
  const Clock& clock_;
  const BackfillOptions& options_;
  const BackfillRecord backfill_;
  const Date today_;
  BackfillOutcome outcome_;
  std::mutex progress_mutex_;
  std::vector<PendingChunk> pending_;
  RelationWriteLocks write_locks_;
  bool stop_ = false;          // no chunk is launched any more
  bool phase_failed_ = false;  // a chunk failed: later phases do not start
  size_t left_behind_ = 0;     // pending chunks not launched because an earlier phase failed
  std::chrono::steady_clock::time_point last_poll_ = std::chrono::steady_clock::now() - std::chrono::hours(1);
};

}  // namespace

BackfillOutcome BackfillCoordinator::Run(const std::string& backfill_id) {
  std::optional<BackfillRecord> loaded = state_.GetBackfill(backfill_id);
  if (!loaded) {
    throw Error(Diagnostic{
        "SLU-BACKFILL-003", "there is no backfill " + backfill_id, {}, "list backfills with `sluice backfills`", {}});
  }
  return BackfillExecution(definitions_, warehouse_, state_, clock_, options_, std::move(*loaded)).Run();
}

}  // namespace sluice
