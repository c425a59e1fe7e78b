// The SQLite state store (`.sluice/state.db` inside a project), WAL mode, numbered schema migrations
// (table `schema_migrations`), applied on open in one transaction each.
//
// Opening marks every QUEUED/STARTED run of this host (or of no recorded host) whose process is gone (no such pid, or
// a pid reused by a process with another start time) as FAILURE with error "process died"; MarkDeadRuns() does the
// same on demand. Runs of registered workers (RunQueue) are left out: the active daemon recovers them
// (ReapDeadWorkers), failing or retrying them per its policy.
// Thread-safety: one mutex serializes every call; share one instance across threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string_view>

#include "core/clock.hpp"
#include "state/state_store.hpp"

struct sqlite3;

namespace sluice {

class SqliteStateStore final : public StateStore {
 public:
  // Creates the file (and parent folders) when missing. Throws SLU-STATE-001 when it cannot be opened
  // or migrated.
  static std::unique_ptr<SqliteStateStore> Open(const std::filesystem::path& file);
  // As Open(file), with "now" (migration times, MarkDeadRuns on open) taken from `clock`.
  static std::unique_ptr<SqliteStateStore> Open(const std::filesystem::path& file, const Clock& clock);
  ~SqliteStateStore() override;

  // Marks STARTED runs, and QUEUED runs owned by a process (pid not 0), whose process is gone as FAILURE, error "process died", finished_at `now`.
  // Returns how many runs were marked FAILURE ("process died"). The pid check is local: runs created on
  // another machine (or in another pid namespace) sharing the file would look dead.
  int MarkDeadRuns(const std::string& now);
  // The highest applied migration number.
  int SchemaVersion();

  void CreateRun(const RunRecord& run) override;
  void MarkStarted(const std::string& run_id, const std::string& at) override;
  void FinishRun(const std::string& run_id, RunStatus status, const std::string& at,
                 const std::string& error) override;
  std::optional<RunRecord> GetRun(const std::string& run_id) override;
  std::vector<RunRecord> ListRuns(int limit) override;
  std::vector<RunRecord> RunsOfBackfill(const std::string& backfill_id) override;
  std::vector<RunRecord> RunsOfJob(const std::string& job, int limit) override;
  std::vector<RunRecord> UnclaimedQueuedRuns() override;
  bool StartQueuedRun(const std::string& run_id, int64_t pid, int64_t pid_start_time, const std::string& at) override;

  void Append(const std::string& run_id, const std::string& at, const RunEvent& event) override;
  std::vector<StoredEvent> EventsForRun(const std::string& run_id) override;

  void RecordMaterializations(const std::vector<MaterializationRecord>& records) override;
  std::vector<MaterializationRecord> LatestMaterializations() override;
  bool HasMaterializations() override;

  void CreateBackfill(const BackfillRecord& backfill) override;
  std::optional<BackfillRecord> GetBackfill(const std::string& backfill_id) override;
  std::vector<BackfillRecord> ListBackfills(int limit) override;
  void SetBackfillStatus(const std::string& backfill_id, BackfillStatus status, const std::string& at,
                         const std::string& error) override;
  BackfillStatus RequestCancel(const std::string& backfill_id) override;
  bool ClaimBackfill(const std::string& backfill_id, int64_t expected_pid, int64_t expected_start_time, int64_t pid,
                     int64_t pid_start_time) override;
  void UpdateChunk(const std::string& backfill_id, int index, ChunkStatus status, const std::string& run_id) override;
  void RecordPartitionStatuses(const std::vector<PartitionStatusRecord>& records) override;
  std::vector<PartitionStatusRecord> PartitionStatuses() override;

  // TickStore: sqlite_tick_store.cpp.
  void SetInstigatorStatus(const std::string& name, InstigatorKind kind, InstigatorStatus status,
                           const std::string& at) override;
  std::optional<InstigatorState> GetInstigator(const std::string& name) override;
  std::vector<InstigatorState> ListInstigators() override;
  int64_t RecordTick(const TickRecord& tick, const std::string& cursor) override;
  std::vector<TickRecord> TicksOf(const std::string& instigator, int limit) override;
  int64_t PurgeTicks(TickStatus status, const std::string& evaluated_before) override;
  std::optional<std::string> ClaimRunKey(const std::string& run_key, const std::string& run_id,
                                         const std::string& at) override;
  DaemonLease AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                 const std::string& stale_before) override;
  void ReleaseDaemonLease(int64_t pid, int64_t start_time) override;

  // RunQueue (workers on this machine sharing the file).
  void RegisterWorker(const WorkerRecord& worker) override;
  void HeartbeatWorker(const std::string& worker_id, const std::string& at) override;
  void UnregisterWorker(const std::string& worker_id) override;
  std::vector<WorkerRecord> ListWorkers() override;
  std::optional<RunRecord> ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                          const std::vector<TagLimit>& limits, const std::string& at) override;
  std::vector<RunRecord> ReapDeadWorkers(const std::string& stale_before) override;

  // AssetEventStore: sqlite_tick_store.cpp.
  int64_t RecordAssetMaterialization(const AssetMaterializationRecord& record) override;
  std::optional<AssetMaterializationRecord> LatestAssetMaterialization(const std::string& asset,
                                                                        int64_t after) override;
  std::vector<AssetMaterializationRecord> RecentAssetMaterializations(const std::string& asset, int limit) override;
  int64_t LastAssetSequence() override;
  std::vector<AssetMaterializationRecord> LatestAssetMaterializations() override;

 private:
  explicit SqliteStateStore(sqlite3* db);
  std::mutex mutex_;  // guards db_
  sqlite3* db_;
};

}  // namespace sluice
