// The SQLite state store (`.sluice/state.db` inside a project): SqlStateStore over one SQLite file in WAL mode, with
// numbered schema migrations (sqlite_migrations.hpp, table `schema_migrations`) applied on open in one transaction
// each. What is its own: the daemon lease as a row, and the run queue's claims under the file's write lock.
//
// Opening marks every QUEUED/STARTED run of this host (or of no recorded host) whose process is gone (no such pid, or
// a pid reused by a process with another start time) as FAILURE with error "process died" (MarkDeadRuns). Runs of
// registered workers (RunQueue) are left out: the active daemon recovers them (ReapDeadWorkers), failing or retrying
// them per its policy. The pid check is local: runs created on another machine (or in another pid namespace) sharing
// the file would look dead.
// Thread-safety: one mutex serializes every call; share one instance across threads. Several processes may share the
// file (10 s busy timeout, write transactions BEGIN IMMEDIATE).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>

#include "core/clock.hpp"
#include "state/sql/sql_state_store.hpp"

namespace sluice {

class SqliteConnection;

class SqliteStateStore final : public SqlStateStore {
 public:
  // Creates the file (and parent folders) when missing. Throws SLU-STATE-001 when it cannot be opened
  // or migrated.
  static std::unique_ptr<SqliteStateStore> Open(const std::filesystem::path& file);
  // As Open(file), with "now" (migration times, MarkDeadRuns on open) taken from `clock`.
  static std::unique_ptr<SqliteStateStore> Open(const std::filesystem::path& file, const Clock& clock);

  // The daemon lease: one row, taken in a write transaction.
  DaemonLease AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                 const std::string& stale_before) override;
  void ReleaseDaemonLease(int64_t pid, int64_t start_time) override;

  // RunQueue (workers on this machine sharing the file): claims count the STARTED runs under the write lock.
  void RegisterWorker(const WorkerRecord& worker) override;
  void HeartbeatWorker(const std::string& worker_id, const std::string& at) override;
  std::optional<RunRecord> ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                          const std::vector<TagLimit>& limits, const std::string& at) override;
  std::vector<RunRecord> ReapDeadWorkers(const std::string& stale_before) override;

 private:
  explicit SqliteStateStore(std::unique_ptr<SqliteConnection> connection);
  // Appends are serialized by the write transaction they run in.
  void LockAssetLog(StateSession&) override {}
};

}  // namespace sluice
