// The state store written once in SQL over a StateConnection (as Dagster's SqlRunStorage is over its engines): runs,
// the event log, materializations, backfills, instigators and ticks, run keys, the asset materialization log, and the
// list of workers. A backend (SqliteStateStore, PostgresStateStore) derives from it and adds only its connection, its
// migrations, and what depends on its locking: the daemon lease and the run queue's registration, claims and reaping.
//
// Every statement here is the same text on every backend: `?` placeholders, standard SQL that SQLite 3.35+ and
// PostgreSQL 15 both run (ON CONFLICT upserts, RETURNING), JSON held as text (SQLite TEXT, PostgreSQL jsonb read as
// its text form). Status names are stored as RunStatusName & co. write them.
// Thread-safety: every method locks mutex_, which also guards the connection for the backend's own methods.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "state/sql/state_connection.hpp"
#include "state/state_store.hpp"

namespace sluice {

class SqlStateStore : public StateStore {
 public:
  ~SqlStateStore() override;

  // Marks STARTED runs, and QUEUED runs owned by a process (pid not 0), of this host (or of none recorded) whose
  // process is gone (no such pid, or a pid reused by a process with another start time) as FAILURE, error "process
  // died", finished_at `now`, except runs of a registered worker (the daemon recovers those: ReapDeadWorkers). Returns
  // how many it marked. Without a readable /proc it marks none.
  int MarkDeadRuns(const std::string& now);
  // The highest applied schema migration number; 0 when none is.
  int SchemaVersion();

  void CreateRun(const RunRecord& run) final;
  void MarkStarted(const std::string& run_id, const std::string& at) final;
  void FinishRun(const std::string& run_id, RunStatus status, const std::string& at, const std::string& error) final;
  std::optional<RunRecord> GetRun(const std::string& run_id) final;
  std::vector<RunRecord> ListRuns(int limit) final;
  std::vector<RunRecord> RunsOfBackfill(const std::string& backfill_id) final;
  std::vector<RunRecord> RunsOfJob(const std::string& job, int limit) final;
  std::vector<RunRecord> UnclaimedQueuedRuns() final;
  bool StartQueuedRun(const std::string& run_id, int64_t pid, int64_t pid_start_time, const std::string& at) final;

  void Append(const std::string& run_id, const std::string& at, const RunEvent& event) final;
  std::vector<StoredEvent> EventsForRun(const std::string& run_id) final;

  void RecordMaterializations(const std::vector<MaterializationRecord>& records) final;
  std::vector<MaterializationRecord> LatestMaterializations() final;
  bool HasMaterializations() final;

  // sql_state_store_backfills.cpp
  void CreateBackfill(const BackfillRecord& backfill) final;
  std::optional<BackfillRecord> GetBackfill(const std::string& backfill_id) final;
  std::vector<BackfillRecord> ListBackfills(int limit) final;
  void SetBackfillStatus(const std::string& backfill_id, BackfillStatus status, const std::string& at,
                         const std::string& error) final;
  BackfillStatus RequestCancel(const std::string& backfill_id) final;
  bool ClaimBackfill(const std::string& backfill_id, int64_t expected_pid, int64_t expected_start_time, int64_t pid,
                     int64_t pid_start_time) final;
  void UpdateChunk(const std::string& backfill_id, int index, ChunkStatus status, const std::string& run_id) final;
  void RecordPartitionStatuses(const std::vector<PartitionStatusRecord>& records) final;
  std::vector<PartitionStatusRecord> PartitionStatuses() final;

  // sql_state_store_ticks.cpp: instigators, ticks and run keys (the daemon lease is the backend's).
  void SetInstigatorStatus(const std::string& name, InstigatorKind kind, InstigatorStatus status,
                           const std::string& at) final;
  std::optional<InstigatorState> GetInstigator(const std::string& name) final;
  std::vector<InstigatorState> ListInstigators() final;
  int64_t RecordTick(const TickRecord& tick, const std::string& cursor) final;
  std::vector<TickRecord> TicksOf(const std::string& instigator, int limit) final;
  int64_t PurgeTicks(TickStatus status, const std::string& evaluated_before) final;
  std::optional<std::string> ClaimRunKey(const std::string& run_key, const std::string& run_id,
                                         const std::string& at) final;

  // sql_state_store_ticks.cpp: the asset materialization log. Appends take LockAssetLog first, so sequences become
  // visible in increasing order and a sensor's cursor never skips a record committed late.
  int64_t RecordAssetMaterialization(const AssetMaterializationRecord& record) final;
  std::optional<AssetMaterializationRecord> LatestAssetMaterialization(const std::string& asset,
                                                                       int64_t after) final;
  std::vector<AssetMaterializationRecord> RecentAssetMaterializations(const std::string& asset, int limit) final;
  int64_t LastAssetSequence() final;
  std::vector<AssetMaterializationRecord> LatestAssetMaterializations() final;

  // sql_state_store_ticks.cpp: the workers of the run queue, as registered.
  void UnregisterWorker(const std::string& worker_id) final;
  std::vector<WorkerRecord> ListWorkers() final;

 protected:
  explicit SqlStateStore(std::unique_ptr<StateConnection> connection);

  // Inside an asset-log append's write transaction, before its INSERT: what makes appends commit in sequence order.
  virtual void LockAssetLog(StateSession& session) = 0;

  StateConnection& db() { return *connection_; }

  // The columns RunFromRow reads, in its order, and the SELECT of them (ending in a space).
  static constexpr std::string_view kRunColumns =
      "run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, pid, "
      "pid_start_time, error, backfill_id, job, tags, host";
  static const std::string kSelectRuns;
  // Throws SLU-STATE-006 for an unknown status or tags that are not an object of strings.
  RunRecord RunFromRow(const SqlRow& row) const;
  std::vector<RunRecord> RunsFromRows(const std::vector<SqlRow>& rows) const;

  // The columns WorkerFromRow reads, and the SELECT of them (ending in a space).
  static const std::string kSelectWorkers;
  static WorkerRecord WorkerFromRow(const SqlRow& row);
  [[noreturn]] void ThrowWorkerNotRegistered(const std::string& worker_id) const;

  // "the <file|database> was probably written by a newer Sluice"
  std::string NewerSluiceHint() const;

  std::mutex mutex_;  // guards the connection and every backend's own state

 private:
  // After an UPDATE guarded by the run's status changed nothing: the run is missing or in the wrong state.
  [[noreturn]] void ThrowTransitionRefused(StateSession& session, const std::string& run_id,
                                           const std::string& wanted) const;
  BackfillRecord BackfillFromRow(const SqlRow& row) const;
  // Reads the chunks of `backfill` into it, by index.
  void ReadChunks(StateSession& session, BackfillRecord& backfill) const;
  [[noreturn]] void ThrowNoBackfill(const std::string& backfill_id) const;
  InstigatorState InstigatorFromRow(const SqlRow& row) const;
  AssetMaterializationRecord AssetMaterializationFromRow(const SqlRow& row) const;
  std::vector<std::string> StringList(const std::string& text, const std::string& what) const;

  std::unique_ptr<StateConnection> connection_;
};

}  // namespace sluice
