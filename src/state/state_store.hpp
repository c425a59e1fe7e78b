// Run history storage, split by concern. One conformance suite (state_conformance_test.cpp) runs against
// every implementation (SQLite in sqlite/, PostgreSQL in postgres/).
//
// Thread-safety: every method may be called from several threads at once; implementations serialize.
// Errors: storage failures throw sluice::Error with code SLU-STATE-NNN:
//   001 the store cannot be opened or migrated      002 a run with that id exists
//   003 any other storage failure                   004 no run with that id
//   005 the run is not in a state that allows the transition (e.g. starting a run twice)
//   006 a stored row cannot be read back (unknown status or event kind, malformed payload)
//   007 a backfill with that id exists              008 no backfill with that id (or no such chunk)
//   009 no schedule or sensor of that name         010 the worker is not registered (reaped as dead)
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "state/run_event.hpp"

namespace sluice {

enum class RunStatus { kQueued, kStarted, kSuccess, kFailure, kCanceled };
std::string RunStatusName(RunStatus status);  // QUEUED, STARTED, SUCCESS, FAILURE, CANCELED
std::optional<RunStatus> ParseRunStatus(const std::string& name);

struct RunRecord {
  std::string run_id;
  std::string selection;                       // the selection as typed, e.g. "+gold.daily_revenue"
  std::optional<std::string> partition_start;  // first key, inclusive (YYYY-MM-DD)
  std::optional<std::string> partition_end;    // last key, inclusive
  RunStatus status = RunStatus::kQueued;
  std::string created_at;                      // ISO-8601 UTC
  std::optional<std::string> started_at;
  std::optional<std::string> finished_at;
  int64_t pid = 0;                             // process that owns the run
  int64_t pid_start_time = 0;                  // that process's start time (/proc/<pid>/stat field 22)
  std::string error;                           // why it failed, when it did
  std::string backfill_id;                     // the backfill this run is a chunk of; empty for a plain run
  std::string job;                             // the orchestrated job it runs (a Starlake pipeline); empty otherwise
  std::map<std::string, std::string> tags;     // e.g. logical_datetime, previous_logical_datetime, the trigger
  std::string host;  // the machine of the owning process (pid is only meaningful there); empty when unowned

  bool operator==(const RunRecord&) const = default;
};

// /proc/<pid>/stat field 22 of a live process, or 0 when it does not exist. A zombie (exited, not yet
// reaped) counts as not existing: it can no longer finish a run.
int64_t ProcessStartTime(int64_t pid);

// Field 22 (starttime) of the text of a /proc/<pid>/stat file, or 0 when the text is not one (or the process
// is a zombie). The second field, the command name in parentheses, may itself hold spaces and parentheses,
// so fields are counted from the last ')'.
int64_t ParseProcessStartTime(std::string_view stat);

// True for SUCCESS, FAILURE and CANCELED.
bool IsTerminal(RunStatus status);

// This machine's name (gethostname), as runs and workers record it.
std::string HostName();

class RunStore {
 public:
  virtual ~RunStore() = default;
  // Inserts a QUEUED run. Throws SLU-STATE-002 when the id exists, SLU-STATE-005 when `run.status` is not
  // QUEUED.
  virtual void CreateRun(const RunRecord& run) = 0;
  // QUEUED → STARTED. Only one caller can start a given run: SLU-STATE-005 when it is not QUEUED,
  // SLU-STATE-004 when it does not exist.
  virtual void MarkStarted(const std::string& run_id, const std::string& at) = 0;
  // → SUCCESS / FAILURE / CANCELED with the finish time and error text, from QUEUED or STARTED.
  // SLU-STATE-005 when the run has already finished or `status` is not terminal; SLU-STATE-004 when it
  // does not exist.
  virtual void FinishRun(const std::string& run_id, RunStatus status, const std::string& at,
                         const std::string& error) = 0;
  virtual std::optional<RunRecord> GetRun(const std::string& run_id) = 0;
  // Newest first (by created_at, then run_id), at most `limit` runs; a negative limit means all.
  virtual std::vector<RunRecord> ListRuns(int limit) = 0;
  // Every run tagged with `backfill_id`, oldest first (by created_at, then run_id).
  virtual std::vector<RunRecord> RunsOfBackfill(const std::string& backfill_id) = 0;
  // The runs of `job`, newest first (by created_at, then run_id); a negative limit means all.
  virtual std::vector<RunRecord> RunsOfJob(const std::string& job, int limit) = 0;
  // QUEUED runs that no process owns yet (pid 0: put on the queue for a daemon), oldest first. Such runs survive the
  // death of the process that queued them; a daemon starts them with StartQueuedRun.
  virtual std::vector<RunRecord> UnclaimedQueuedRuns() = 0;
  // QUEUED with pid 0 → STARTED, owned by (pid, pid_start_time). Returns false when another process claimed it first
  // or it is no longer QUEUED; SLU-STATE-004 when it does not exist.
  virtual bool StartQueuedRun(const std::string& run_id, int64_t pid, int64_t pid_start_time,
                              const std::string& at) = 0;
};

struct StoredEvent {
  int64_t sequence = 0;   // increasing across the whole log
  std::string run_id;
  std::string at;         // ISO-8601 UTC
  RunEvent event;

  bool operator==(const StoredEvent&) const = default;
};

class EventLog {
 public:
  virtual ~EventLog() = default;
  // Append-only.
  virtual void Append(const std::string& run_id, const std::string& at, const RunEvent& event) = 0;
  // In append order; empty for a run without events (or an unknown run).
  virtual std::vector<StoredEvent> EventsForRun(const std::string& run_id) = 0;
};

// The latest materialization of one asset partition. `partition` is the partition key (YYYY-MM-DD) or
// "" for unpartitioned assets.
struct MaterializationRecord {
  std::string asset;
  std::string partition;
  std::string run_id;
  int64_t rows = 0;  // rows of the write that produced it (for a window, the whole window's rows)
  std::string sql_hash;
  std::string written_at;

  bool operator==(const MaterializationRecord&) const = default;
};

class MaterializationStore {
 public:
  virtual ~MaterializationStore() = default;
  // Upserts by (asset, partition): the later record replaces the earlier. All records in one transaction.
  virtual void RecordMaterializations(const std::vector<MaterializationRecord>& records) = 0;
  // Sorted by asset, then partition.
  virtual std::vector<MaterializationRecord> LatestMaterializations() = 0;
  virtual bool HasMaterializations() = 0;
};

// One materialization of an asset as an orchestrated job records it (a Starlake dataset), in the order recorded: the
// log that dataset sensors read. Unlike MaterializationStore it keeps every record, with its metadata.
struct AssetMaterializationRecord {
  int64_t sequence = 0;   // assigned by the store, increasing: a sensor's cursor is the last sequence it consumed
  std::string asset;      // the dataset URI
  std::string partition;  // the encoded logical datetime (QuoteDatetime), or "" when undated
  std::string run_id;
  std::string at;         // ISO-8601 UTC
  nlohmann::json metadata = nlohmann::json::object();  // sl_uri, sl_cron, sl_freshness, sl_scheduled_date, sl_options…
  bool operator==(const AssetMaterializationRecord&) const = default;
};

class AssetEventStore {
 public:
  virtual ~AssetEventStore() = default;
  // Appends the record (its sequence is ignored; null metadata is stored as {}) and returns the sequence assigned.
  virtual int64_t RecordAssetMaterialization(const AssetMaterializationRecord& record) = 0;
  // The newest record of `asset` with a sequence greater than `after`.
  virtual std::optional<AssetMaterializationRecord> LatestAssetMaterialization(const std::string& asset,
                                                                                int64_t after) = 0;
  // The newest `limit` records of `asset`, oldest first.
  virtual std::vector<AssetMaterializationRecord> RecentAssetMaterializations(const std::string& asset, int limit) = 0;
  // The greatest sequence recorded so far (0 when none).
  virtual int64_t LastAssetSequence() = 0;
  // The newest record of every asset in the log, sorted by asset.
  virtual std::vector<AssetMaterializationRecord> LatestAssetMaterializations() = 0;
};

// ---- backfills ----

// Dagster's BulkActionStatus (its legacy COMPLETED and the transient FAILING are not used). REQUESTED: planned, its
// owner process runs (or ran, until it died) its chunks. CANCELING: `backfills cancel` asked the owner to stop.
// COMPLETED_SUCCESS: every chunk succeeded; COMPLETED_FAILED: every chunk ran or was left because an earlier phase
// failed, and some failed; CANCELED: stopped on request; FAILED: the coordinator itself hit an error.
enum class BackfillStatus { kRequested, kCanceling, kCanceled, kCompletedSuccess, kCompletedFailed, kFailed };
std::string BackfillStatusName(BackfillStatus status);  // REQUESTED, CANCELING, … as in Dagster
std::optional<BackfillStatus> ParseBackfillStatus(const std::string& name);
// True for CANCELED, COMPLETED_SUCCESS, COMPLETED_FAILED and FAILED.
bool IsTerminal(BackfillStatus status);

enum class ChunkStatus { kPending, kRunning, kSuccess, kFailed, kCanceled };
std::string ChunkStatusName(ChunkStatus status);  // pending, running, success, failed, canceled
std::optional<ChunkStatus> ParseChunkStatus(const std::string& name);

// One run of a backfill: the assets it materializes and, for partitioned ones, the inclusive key range it owns.
struct BackfillChunk {
  int index = 0;                               // 0, 1, 2 … in the order the chunks were planned
  std::optional<std::string> partition_start;  // first key (YYYY-MM-DD); nullopt for a run of unpartitioned assets
  std::optional<std::string> partition_end;    // last key, inclusive
  std::vector<std::string> assets;             // asset keys, in the run's dependency order
  ChunkStatus status = ChunkStatus::kPending;
  std::string run_id;                          // the latest run launched for it; empty before the first

  bool operator==(const BackfillChunk&) const = default;
};

struct BackfillRecord {
  std::string backfill_id;
  std::string created_at;       // ISO-8601 UTC
  std::string selection;        // as typed ("*" for everything)
  std::string partition_from;   // the requested range, inclusive
  std::string partition_to;
  BackfillStatus status = BackfillStatus::kRequested;
  int64_t pid = 0;              // the process that runs it (its owner), as for runs
  int64_t pid_start_time = 0;
  int max_concurrent_runs = 1;  // chunks run at once
  std::optional<std::string> finished_at;  // set with a terminal status, cleared by a claim
  std::string error;                       // why it ended as it did, when not COMPLETED_SUCCESS
  std::vector<BackfillChunk> chunks;       // by index

  bool operator==(const BackfillRecord&) const = default;
};

// Whether the backfill's owner process is the live process it was (pid not reused).
bool OwnerAlive(const BackfillRecord& backfill);

// The latest outcome of one asset partition in a backfill (materialized or failed), kept so `status` can show
// failed partitions beside the materialized ones.
enum class PartitionState { kMaterialized, kFailed };
std::string PartitionStateName(PartitionState state);  // materialized | failed
std::optional<PartitionState> ParsePartitionState(const std::string& name);

struct PartitionStatusRecord {
  std::string asset;
  std::string partition;  // YYYY-MM-DD
  PartitionState state = PartitionState::kMaterialized;
  std::string run_id;
  std::string backfill_id;
  std::string at;  // ISO-8601 UTC

  bool operator==(const PartitionStatusRecord&) const = default;
};

class BackfillStore {
 public:
  virtual ~BackfillStore() = default;
  // Inserts the backfill and its chunks in one transaction. SLU-STATE-007 when the id exists.
  virtual void CreateBackfill(const BackfillRecord& backfill) = 0;
  // With its chunks; nullopt when there is no such backfill.
  virtual std::optional<BackfillRecord> GetBackfill(const std::string& backfill_id) = 0;
  // Newest first (by created_at, then id), each with its chunks; a negative limit means all.
  virtual std::vector<BackfillRecord> ListBackfills(int limit) = 0;
  // Sets the status, with the finish time and error text when `status` is terminal. A terminal backfill changes
  // only through ClaimBackfill: SLU-STATE-005; SLU-STATE-008 when there is no such backfill.
  virtual void SetBackfillStatus(const std::string& backfill_id, BackfillStatus status, const std::string& at,
                                 const std::string& error) = 0;
  // REQUESTED → CANCELING; any other status is left as it is. Returns the status after the call; SLU-STATE-008 when
  // there is no such backfill.
  virtual BackfillStatus RequestCancel(const std::string& backfill_id) = 0;
  // Makes (pid, pid_start_time) the owner, the status REQUESTED and clears finished_at and error, only when the owner
  // is still (expected_pid, expected_start_time): of two processes claiming the same backfill one wins. Returns
  // whether this call won; SLU-STATE-008 when there is no such backfill.
  virtual bool ClaimBackfill(const std::string& backfill_id, int64_t expected_pid, int64_t expected_start_time,
                             int64_t pid, int64_t pid_start_time) = 0;
  // Sets one chunk's status and run id. SLU-STATE-008 when there is no such chunk.
  virtual void UpdateChunk(const std::string& backfill_id, int index, ChunkStatus status,
                           const std::string& run_id) = 0;
  // Upserts by (asset, partition): the later record replaces the earlier. All records in one transaction.
  virtual void RecordPartitionStatuses(const std::vector<PartitionStatusRecord>& records) = 0;
  // Sorted by asset, then partition.
  virtual std::vector<PartitionStatusRecord> PartitionStatuses() = 0;
};

// What the daemon keeps of its schedules and sensors (the instigators, Dagster's word): whether each runs, its cursor,
// every tick with its outcome, the run keys it has launched, and which daemon is the active one.
enum class InstigatorKind { kSchedule, kSensor };
std::string InstigatorKindName(InstigatorKind kind);  // schedule | sensor
std::optional<InstigatorKind> ParseInstigatorKind(const std::string& name);

enum class InstigatorStatus { kRunning, kStopped };
std::string InstigatorStatusName(InstigatorStatus status);  // RUNNING | STOPPED
std::optional<InstigatorStatus> ParseInstigatorStatus(const std::string& name);

struct InstigatorState {
  std::string name;
  InstigatorKind kind = InstigatorKind::kSchedule;
  InstigatorStatus status = InstigatorStatus::kStopped;
  std::string cursor;      // the instigator's own: a schedule's last tick time, a sensor's last seen events
  std::string updated_at;  // ISO-8601 UTC

  bool operator==(const InstigatorState&) const = default;
};

// SUCCESS: runs were requested; SKIPPED: none, with the reason; FAILURE: the evaluation failed, with the error.
enum class TickStatus { kSuccess, kSkipped, kFailure };
std::string TickStatusName(TickStatus status);  // SUCCESS | SKIPPED | FAILURE
std::optional<TickStatus> ParseTickStatus(const std::string& name);

struct TickRecord {
  int64_t tick_id = 0;  // assigned by the store
  std::string instigator;
  InstigatorKind kind = InstigatorKind::kSchedule;
  std::string tick_time;     // the time the tick stands for (a schedule's cron time), ISO-8601 UTC
  std::string evaluated_at;  // when it was evaluated
  TickStatus status = TickStatus::kSkipped;
  std::vector<std::string> run_keys;  // the run requests' keys
  std::vector<std::string> run_ids;   // the runs launched for them
  std::string skip_reason;
  std::string error;

  bool operator==(const TickRecord&) const = default;
};

// Who holds the daemon lease: one active daemon per store.
struct DaemonLease {
  bool acquired = false;  // whether the caller holds it now
  int64_t holder_pid = 0;
  int64_t holder_start_time = 0;
  std::string heartbeat_at;  // the holder's last heartbeat
};

class TickStore {
 public:
  virtual ~TickStore() = default;
  // Creates the instigator (STOPPED, empty cursor) when it is not known yet and sets its status.
  virtual void SetInstigatorStatus(const std::string& name, InstigatorKind kind, InstigatorStatus status,
                                   const std::string& at) = 0;
  virtual std::optional<InstigatorState> GetInstigator(const std::string& name) = 0;
  // Sorted by name.
  virtual std::vector<InstigatorState> ListInstigators() = 0;
  // Appends the tick and sets its instigator's cursor in one transaction, so a restarted daemon resumes from exactly
  // the last recorded tick. Returns the tick's id; SLU-STATE-009 when the instigator is not known.
  virtual int64_t RecordTick(const TickRecord& tick, const std::string& cursor) = 0;
  // The instigator's ticks, newest first; a negative limit means all.
  virtual std::vector<TickRecord> TicksOf(const std::string& instigator, int limit) = 0;
  // Deletes the ticks with `status` evaluated before `evaluated_before` (ISO-8601 UTC) and returns how many: the
  // daemon's retention of SKIPPED ticks, which a sensor writes at every evaluation.
  virtual int64_t PurgeTicks(TickStatus status, const std::string& evaluated_before) = 0;
  // Reserves `run_key` for `run_id`. Returns nullopt when the key was free (the caller launches the run), else the
  // run id it was reserved for before: a run key launches one run, whatever restarts happen between.
  virtual std::optional<std::string> ClaimRunKey(const std::string& run_key, const std::string& run_id,
                                                 const std::string& at) = 0;
  // Takes the daemon lease for (pid, start_time) when nobody holds it, when the caller already does, or when the holder
  // is gone: its process is not the live one it was (ProcessStartTime; like MarkDeadRuns, a local check) or its
  // heartbeat is older than `stale_before`. Otherwise reports the holder. A heartbeat is an acquire by the holder.
  virtual DaemonLease AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                         const std::string& stale_before) = 0;
  // Gives the lease up when (pid, start_time) holds it.
  virtual void ReleaseDaemonLease(int64_t pid, int64_t start_time) = 0;
};

// ---- distributed runs ----

// A process executing queued runs: a daemon running them on its own threads, or a `sluice worker`, on any machine that
// reaches the store. `worker_id` is unique per process: "<host>:<pid>:<pid_start_time>".
struct WorkerRecord {
  std::string worker_id;
  std::string host;
  int64_t pid = 0;
  int64_t pid_start_time = 0;
  std::string started_at;    // ISO-8601 UTC
  std::string heartbeat_at;  // its last heartbeat

  bool operator==(const WorkerRecord&) const = default;
};
WorkerRecord ThisProcessAsWorker(const std::string& at);

// A run limit by tag: at most `limit` STARTED runs whose tag `key` is set (to `value`, when given) at once, counted
// over every worker of the store.
struct TagLimit {
  std::string key;
  std::optional<std::string> value;
  int limit = 1;
  bool operator==(const TagLimit&) const = default;
};
// Whether `candidate` may start beside `started` (the STARTED runs counted) under every limit.
bool WithinTagLimits(const std::vector<TagLimit>& limits, const RunRecord& candidate,
                     const std::vector<RunRecord>& started);

// The queue of runs that workers claim. Queued runs are RunStore's QUEUED runs with a job and no owner (pid 0).
class RunQueue {
 public:
  virtual ~RunQueue() = default;
  // Inserts the worker, or refreshes its heartbeat when it is registered. On PostgreSQL the worker's liveness is also
  // tied to the store's session: when the process dies its session ends and ReapDeadWorkers sees it at once.
  virtual void RegisterWorker(const WorkerRecord& worker) = 0;
  // Sets the worker's heartbeat_at; SLU-STATE-010 when it is not registered (it was reaped as dead: it must stop).
  virtual void HeartbeatWorker(const std::string& worker_id, const std::string& at) = 0;
  // Removes the worker (a clean exit); nothing happens when it is not registered.
  virtual void UnregisterWorker(const std::string& worker_id) = 0;
  // Sorted by worker_id.
  virtual std::vector<WorkerRecord> ListWorkers() = 0;
  // Claims the oldest QUEUED run with a job and no owner that the limits allow, counting the STARTED runs of every
  // worker: `max_running` STARTED runs owned by this worker at most, and every TagLimit over all STARTED runs. The run
  // becomes STARTED, owned by the worker (pid, pid_start_time, host), started_at `at`. Atomic across processes and
  // machines: of many workers claiming at once, each run goes to one and no limit is exceeded. nullopt when nothing
  // can be claimed; SLU-STATE-010 when the worker is not registered.
  virtual std::optional<RunRecord> ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                                  const std::vector<TagLimit>& limits, const std::string& at) = 0;
  // Finds the registered workers that died: their process is gone (checked on this host only), their session ended
  // (PostgreSQL), or their heartbeat is older than `stale_before`. Removes them and returns their STARTED runs, which
  // it leaves STARTED: the caller (the active daemon) marks each FAILURE or retries it per its policy.
  virtual std::vector<RunRecord> ReapDeadWorkers(const std::string& stale_before) = 0;
};

// Every store a run records into, as one object: what each backend implements.
class StateStore : public RunStore,
                   public EventLog,
                   public MaterializationStore,
                   public BackfillStore,
                   public TickStore,
                   public AssetEventStore,
                   public RunQueue {};

}  // namespace sluice
