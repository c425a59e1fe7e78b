#include "state/sqlite/sqlite_state_store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <system_error>
#include <thread>
#include <utility>

#include "core/diagnostic.hpp"
#include "state/sqlite/sqlite_connection.hpp"
#include "state/sqlite/sqlite_migrations.hpp"
#include "state/sqlite/sqlite_statement.hpp"

namespace sluice {

namespace {

struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using OwnedConnection = std::unique_ptr<sqlite3, ConnectionCloser>;

// Switches the connection's database to WAL and returns the journal mode SQLite then reports. When several
// connections open a new file at once, SQLite may refuse this switch with SQLITE_BUSY without consulting the
// busy handler (it does not wait where two connections changing the mode could deadlock), so a busy refusal
// is retried, with short pauses, for up to the busy timeout; then, or on any other error, it throws.
std::string SwitchToWal(sqlite3* db, const std::filesystem::path& file) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kSqliteBusyTimeoutMs);
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    sqlite3_stmt* statement = nullptr;
    int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &statement, nullptr);
    std::string mode;
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(statement);
      if (rc == SQLITE_ROW) {
        const unsigned char* text = sqlite3_column_text(statement, 0);
        if (text != nullptr) mode = reinterpret_cast<const char*>(text);
        rc = SQLITE_OK;
      }
    }
    sqlite3_finalize(statement);
    bool busy = (rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED;
    if (!busy || std::chrono::steady_clock::now() >= deadline) {
      if (rc != SQLITE_OK && rc != SQLITE_DONE) {
        ThrowSqliteError(db, rc, SqliteStage::kOpening, "switch the state database to WAL mode", file);
      }
      return mode;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

}  // namespace

std::unique_ptr<SqliteStateStore> SqliteStateStore::Open(const std::filesystem::path& file) {
  return Open(file, SystemClock());
}

std::unique_ptr<SqliteStateStore> SqliteStateStore::Open(const std::filesystem::path& file,
                                                         const Clock& clock) {
  if (file.has_parent_path()) {
    std::error_code error;
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) {
      throw Error(MakeDiagnostic("SLU-STATE-001",
                                 "could not create the folder " + file.parent_path().string() +
                                     " for the state database: " + error.message(),
                                 SourceLocation{file.string(), 0, 0}, "check that this user can create it"));
    }
  }

  constexpr int kFlags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &raw, kFlags, nullptr);
  OwnedConnection db(raw);
  if (rc != SQLITE_OK) ThrowSqliteError(db.get(), rc, SqliteStage::kOpening, "open the state database", file);
  sqlite3_extended_result_codes(db.get(), 1);
  sqlite3_busy_timeout(db.get(), kSqliteBusyTimeoutMs);

  // WAL lets `sluice status` read while a run writes. The mode is stored in the file, so this is a no-op
  // after the first open.
  std::string mode = SwitchToWal(db.get(), file);
  if (mode != "wal") {
    throw StateError(db.get(), "SLU-STATE-001",
                     "could not switch the state database to WAL mode (SQLite reports \"" + mode + "\")",
                     "keep the state database on a local file system");
  }
  // In WAL mode NORMAL never corrupts the file; a power cut may lose the last commits, not earlier ones.
  SqliteStatement(db.get(), SqliteStage::kOpening, "set synchronous mode", "PRAGMA synchronous = NORMAL")
      .Execute();

  std::string now = FormatUtc(clock.Now());
  MigrateSqliteSchema(db.get(), now);

  std::unique_ptr<SqliteStateStore> store(new SqliteStateStore(std::make_unique<SqliteConnection>(db.release())));
  store->MarkDeadRuns(now);
  return store;
}

SqliteStateStore::SqliteStateStore(std::unique_ptr<SqliteConnection> connection)
    : SqlStateStore(std::move(connection)) {}

// ---- the daemon lease ----

DaemonLease SqliteStateStore::AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                                 const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  return db().Write("acquire the daemon lease", [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    std::vector<SqlRow> holder = session.Query("SELECT pid, pid_start_time, heartbeat_at FROM daemon_lease");
    if (!holder.empty()) {
      DaemonLease lease{false, holder[0].Int(0), holder[0].Int(1), holder[0].Text(2)};
      const bool mine = lease.holder_pid == pid && lease.holder_start_time == start_time;
      const bool holder_alive = ProcessStartTime(lease.holder_pid) == lease.holder_start_time;
      if (!mine && holder_alive && lease.heartbeat_at >= stale_before) return lease;  // rolls back: nothing changed
    }
    session.Execute(
        "INSERT INTO daemon_lease (lease, pid, pid_start_time, heartbeat_at) VALUES (1, ?, ?, ?) "
        "ON CONFLICT (lease) DO UPDATE SET pid = excluded.pid, pid_start_time = excluded.pid_start_time, "
        "heartbeat_at = excluded.heartbeat_at",
        {pid, start_time, now});
    transaction.Commit();
    return DaemonLease{true, pid, start_time, now};
  });
}

void SqliteStateStore::ReleaseDaemonLease(int64_t pid, int64_t start_time) {
  std::lock_guard lock(mutex_);
  db().Write("release the daemon lease", [&](StateSession& session) {
    session.Execute("DELETE FROM daemon_lease WHERE pid = ? AND pid_start_time = ?", {pid, start_time});
  });
}

// ---- the run queue ----

void SqliteStateStore::RegisterWorker(const WorkerRecord& worker) {
  std::lock_guard lock(mutex_);
  db().Write("register worker " + worker.worker_id, [&](StateSession& session) {
    session.Execute(
        "INSERT INTO workers (worker_id, host, pid, pid_start_time, started_at, heartbeat_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at",
        {worker.worker_id, worker.host, worker.pid, worker.pid_start_time, worker.started_at, worker.heartbeat_at});
  });
}

void SqliteStateStore::HeartbeatWorker(const std::string& worker_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  db().Write("heartbeat worker " + worker_id, [&](StateSession& session) {
    if (session.Execute("UPDATE workers SET heartbeat_at = ? WHERE worker_id = ?", {at, worker_id}) == 0) {
      ThrowWorkerNotRegistered(worker_id);
    }
  });
}

std::optional<RunRecord> SqliteStateStore::ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                                          const std::vector<TagLimit>& limits,
                                                          const std::string& at) {
  std::lock_guard lock(mutex_);
  return db().Write("claim a queued run for worker " + worker.worker_id,
                    [&](StateSession& session) -> std::optional<RunRecord> {
    // BEGIN IMMEDIATE: the write lock is taken first, so the counts read below hold until the claim commits.
    StateTransaction transaction(session, TransactionKind::kWrite);
    if (session.Query("SELECT 1 FROM workers WHERE worker_id = ?", {worker.worker_id}).empty()) {
      ThrowWorkerNotRegistered(worker.worker_id);
    }
    const std::vector<RunRecord> started = RunsFromRows(session.Query(kSelectRuns + "WHERE status = 'STARTED'"));
    const auto mine = std::count_if(started.begin(), started.end(), [&](const RunRecord& run) {
      return run.pid == worker.pid && run.pid_start_time == worker.pid_start_time && run.host == worker.host;
    });
    if (mine >= max_running) return std::nullopt;
    std::optional<RunRecord> chosen;
    for (const SqlRow& row : session.Query(kSelectRuns + "WHERE status = 'QUEUED' AND pid = 0 AND job <> '' "
                                                         "ORDER BY created_at, run_id")) {
      RunRecord candidate = RunFromRow(row);
      if (WithinTagLimits(limits, candidate, started)) {
        chosen = std::move(candidate);
        break;
      }
    }
    if (!chosen) return std::nullopt;
    session.Execute("UPDATE runs SET status = 'STARTED', started_at = ?, pid = ?, pid_start_time = ?, host = ? "
                    "WHERE run_id = ?",
                    {at, worker.pid, worker.pid_start_time, worker.host, chosen->run_id});
    transaction.Commit();
    chosen->status = RunStatus::kStarted;
    chosen->started_at = at;
    chosen->pid = worker.pid;
    chosen->pid_start_time = worker.pid_start_time;
    chosen->host = worker.host;
    return chosen;
  });
}

std::vector<RunRecord> SqliteStateStore::ReapDeadWorkers(const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  return db().Write("reap dead workers", [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    const std::string here = HostName();
    // Without a readable /proc every process would look dead, even this one: judge by heartbeats only.
    const bool proc_readable = ProcessStartTime(getpid()) != 0;
    std::vector<RunRecord> orphaned;
    for (const SqlRow& row : session.Query(kSelectWorkers)) {
      const WorkerRecord worker = WorkerFromRow(row);
      const bool gone = proc_readable && worker.host == here && ProcessStartTime(worker.pid) != worker.pid_start_time;
      if (!gone && worker.heartbeat_at >= stale_before) continue;
      std::vector<RunRecord> runs = RunsFromRows(
          session.Query(kSelectRuns + "WHERE status = 'STARTED' AND pid = ? AND pid_start_time = ? AND host = ? "
                                      "ORDER BY created_at, run_id",
                        {worker.pid, worker.pid_start_time, worker.host}));
      orphaned.insert(orphaned.end(), runs.begin(), runs.end());
      session.Execute("DELETE FROM workers WHERE worker_id = ?", {worker.worker_id});
    }
    transaction.Commit();
    return orphaned;
  });
}

}  // namespace sluice
