// The PostgreSQL state store (SLUICE_STATE_URL=postgresql://…, or a project's [state] url): the SQLite store's
// tables in one database, shared by every process and machine that reaches it, with numbered schema migrations
// (table `schema_migrations`) applied on open under an advisory lock.
//
// Opening marks every QUEUED/STARTED run of this host (or of no recorded host) whose process is gone as FAILURE with
// error "process died", as SQLite does; runs owned on other machines, and runs of registered workers (the daemon fails
// or retries them), are left to the daemon (ReapDeadWorkers).
//
// The daemon lease is a session-level advisory lock (pg_try_advisory_lock, key kDaemonLeaseLockKey in
// postgres_migrations.hpp) held on a dedicated connection of the store, so a holder that dies (kill -9, machine lost)
// loses it as soon as its session ends; the `daemon_lease` row says who holds it (pid, host, heartbeat). A holder
// whose heartbeat is older than the staleness bound but whose session lives on (a hung process) has that session
// terminated by the taker (pg_terminate_backend, which needs the same role or pg_signal_backend).
//
// Thread-safety: one mutex serializes every call over one connection (and the lease's own); share one instance.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "core/clock.hpp"
#include "state/postgres/postgres_store_connection.hpp"
#include "state/state_store.hpp"

namespace sluice {

class PostgresStateStore final : public StateStore {
 public:
  // Connects to `url` (postgresql://user:password@host:port/database, or a libpq keyword=value string), creates or
  // migrates the schema and marks this host's dead runs. Throws SLU-STATE-001 when it cannot connect or migrate, also
  // when the database was migrated by a newer Sluice.
  static std::unique_ptr<PostgresStateStore> Open(const std::string& url);
  // As Open(url), with "now" (migration times, MarkDeadRuns on open) taken from `clock`.
  static std::unique_ptr<PostgresStateStore> Open(const std::string& url, const Clock& clock);
  ~PostgresStateStore() override;

  // Marks STARTED runs, and QUEUED runs owned by a process (pid not 0), of this host (or of none recorded) whose
  // process is gone as FAILURE, error "process died", finished_at `now`, except runs of a registered worker. Returns
  // how many it marked.
  int MarkDeadRuns(const std::string& now);
  // The highest applied migration number.
  int SchemaVersion();
  // The server process of the store's (non-lease) connection: what pg_stat_activity shows for it.
  int BackendPid();

  void CreateRun(const RunRecord& run) override;
  void MarkStarted(const std::string& run_id, const std::string& at) override;
  void FinishRun(const std::string& run_id, RunStatus status, const std::string& at, const std::string& error) override;
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

  // TickStore: postgres_tick_store.cpp.
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

  // RunQueue: postgres_run_queue.cpp. Claims use FOR UPDATE SKIP LOCKED; a worker is dead when its process is gone (on
  // this host), its heartbeat is stale, or the session that registered it (or last heartbeat) has ended.
  void RegisterWorker(const WorkerRecord& worker) override;
  void HeartbeatWorker(const std::string& worker_id, const std::string& at) override;
  void UnregisterWorker(const std::string& worker_id) override;
  std::vector<WorkerRecord> ListWorkers() override;
  std::optional<RunRecord> ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                          const std::vector<TagLimit>& limits, const std::string& at) override;
  std::vector<RunRecord> ReapDeadWorkers(const std::string& stale_before) override;

  // AssetEventStore: postgres_tick_store.cpp. Appends are serialized by a transaction-level advisory lock, so
  // sequences become visible in increasing order and a sensor's cursor never skips a record committed late.
  int64_t RecordAssetMaterialization(const AssetMaterializationRecord& record) override;
  std::optional<AssetMaterializationRecord> LatestAssetMaterialization(const std::string& asset,
                                                                       int64_t after) override;
  std::vector<AssetMaterializationRecord> RecentAssetMaterializations(const std::string& asset, int limit) override;
  int64_t LastAssetSequence() override;
  std::vector<AssetMaterializationRecord> LatestAssetMaterializations() override;

 private:
  explicit PostgresStateStore(std::unique_ptr<PostgresStoreConnection> connection);

  // Whether the lease connection still holds the advisory lock; reopens a lost lease connection (and forgets the
  // lock it held). Caller holds mutex_.
  bool LeaseLockHeld();

  std::mutex mutex_;  // guards everything below
  std::unique_ptr<PostgresStoreConnection> db_;
  std::unique_ptr<pg::Connection> lease_connection_;  // opened by the first AcquireDaemonLease
  bool lease_locked_ = false;                         // lease_connection_ holds kDaemonLeaseLockKey
};

}  // namespace sluice
