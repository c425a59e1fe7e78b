// The PostgreSQL state store (SLUICE_STATE_URL=postgresql://…, or a project's [state] url): SqlStateStore over one
// database shared by every process and machine that reaches it, with numbered schema migrations (table
// `schema_migrations`) applied on open under an advisory lock. What is its own: the daemon lease as an advisory lock,
// the asset log's append lock, and the run queue's claims (FOR UPDATE SKIP LOCKED) and session-bound workers.
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
#include <string>

#include "core/clock.hpp"
#include "core/postgres/pg_connection.hpp"
#include "state/sql/sql_state_store.hpp"

namespace sluice {

class PostgresStoreConnection;

class PostgresStateStore final : public SqlStateStore {
 public:
  // Connects to `url` (postgresql://user:password@host:port/database, or a libpq keyword=value string), creates or
  // migrates the schema and marks this host's dead runs. Throws SLU-STATE-001 when it cannot connect or migrate, also
  // when the database was migrated by a newer Sluice.
  static std::unique_ptr<PostgresStateStore> Open(const std::string& url);
  // As Open(url), with "now" (migration times, MarkDeadRuns on open) taken from `clock`.
  static std::unique_ptr<PostgresStateStore> Open(const std::string& url, const Clock& clock);
  ~PostgresStateStore() override;

  // The server process of the store's (non-lease) connection: what pg_stat_activity shows for it.
  int BackendPid();

  DaemonLease AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                 const std::string& stale_before) override;
  void ReleaseDaemonLease(int64_t pid, int64_t start_time) override;

  // RunQueue: postgres_run_queue.cpp. Claims use FOR UPDATE SKIP LOCKED; a worker is dead when its process is gone (on
  // this host), its heartbeat is stale, or the session that registered it (or last heartbeat) has ended.
  void RegisterWorker(const WorkerRecord& worker) override;
  void HeartbeatWorker(const std::string& worker_id, const std::string& at) override;
  std::optional<RunRecord> ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                          const std::vector<TagLimit>& limits, const std::string& at) override;
  std::vector<RunRecord> ReapDeadWorkers(const std::string& stale_before) override;

 private:
  explicit PostgresStateStore(std::unique_ptr<PostgresStoreConnection> connection);

  // A transaction-level advisory lock (kAssetLogLockKey) held until the append commits.
  void LockAssetLog(StateSession& session) override;

  // Whether the lease connection still holds the advisory lock; reopens a lost lease connection (and forgets the
  // lock it held). Caller holds mutex_.
  bool LeaseLockHeld();

  PostgresStoreConnection& postgres_;                 // the connection SqlStateStore owns
  std::unique_ptr<pg::Connection> lease_connection_;  // opened by the first AcquireDaemonLease; guarded by mutex_
  bool lease_locked_ = false;                         // lease_connection_ holds kDaemonLeaseLockKey
};

}  // namespace sluice
