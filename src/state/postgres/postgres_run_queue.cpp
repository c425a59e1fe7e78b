// PostgresStateStore's RunQueue: workers on any machine that reaches the database claim queued job runs.
//
// A claim is one transaction: `SELECT … FOR UPDATE SKIP LOCKED` on the oldest QUEUED unowned job runs, so concurrent
// claimers never wait for each other's rows and each run goes to one of them. Limits are counts of STARTED runs read in
// that transaction, so two claims that could both pass a check are serialized by transaction-level advisory locks held
// until commit: one per worker (its max_running), and kRunClaimLockKey for every claim that checks tag limits.
// A worker's liveness is also its session: RegisterWorker and HeartbeatWorker record the calling connection's
// pg_backend_pid() and backend_start, and ReapDeadWorkers treats a worker whose session is gone from pg_stat_activity
// as dead at once (its process was killed, or its machine lost its connection). pg_stat_activity hides backend_start
// of another role's sessions (without pg_read_all_stats): such a session is then matched by its pid alone.
#include <unistd.h>

#include "state/postgres/postgres_migrations.hpp"
#include "state/postgres/postgres_state_store.hpp"

namespace sluice {

namespace {

// The class of the two-key advisory locks that serialize one worker's claims (the second key is hashtext(worker_id)).
constexpr int kWorkerClaimLockClass = 0x736c7563;
// Queued runs read per round while looking for one the tag limits allow.
constexpr int kCandidatePage = 100;

// The calling session, as pg_stat_activity shows it.
constexpr const char* kThisSession =
    "pg_backend_pid(), (SELECT backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid())";

}  // namespace

void PostgresStateStore::RegisterWorker(const WorkerRecord& worker) {
  std::lock_guard lock(mutex_);
  db().Write("register worker " + worker.worker_id, [&](StateSession& session) {
    session.Execute(
        "INSERT INTO workers (worker_id, host, pid, pid_start_time, started_at, heartbeat_at, backend_pid, "
        "backend_start) VALUES (?, ?, ?, ?, ?, ?, " +
            std::string(kThisSession) +
            ") ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, "
            "backend_pid = excluded.backend_pid, backend_start = excluded.backend_start",
        {worker.worker_id, worker.host, worker.pid, worker.pid_start_time, worker.started_at, worker.heartbeat_at});
  });
}

void PostgresStateStore::HeartbeatWorker(const std::string& worker_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  db().Write("heartbeat worker " + worker_id, [&](StateSession& session) {
    // The session too: after a reconnect the worker lives on in its new session.
    if (session.Execute("UPDATE workers SET heartbeat_at = ?, (backend_pid, backend_start) = (SELECT " +
                            std::string(kThisSession) + ") WHERE worker_id = ?",
                        {at, worker_id}) == 0) {
      ThrowWorkerNotRegistered(worker_id);
    }
  });
}

std::optional<RunRecord> PostgresStateStore::ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                                            const std::vector<TagLimit>& limits,
                                                            const std::string& at) {
  std::lock_guard lock(mutex_);
  const std::string action = "claim a queued run for worker " + worker.worker_id;
  return db().Write(action, [&](StateSession& session) -> std::optional<RunRecord> {
    StateTransaction transaction(session, TransactionKind::kWrite);
    // Always in this order (the shared lock first), so two claimers never wait for each other in a cycle.
    if (!limits.empty()) session.Query("SELECT pg_advisory_xact_lock(?)", {kRunClaimLockKey});
    session.Query("SELECT pg_advisory_xact_lock(?, hashtext(?))", {kWorkerClaimLockClass, worker.worker_id});
    // KEY SHARE holds the row until commit: a concurrent reap deletes the worker after this claim, and so finds its
    // run.
    if (session.Query("SELECT 1 FROM workers WHERE worker_id = ? FOR KEY SHARE", {worker.worker_id}).empty()) {
      ThrowWorkerNotRegistered(worker.worker_id);
    }
    const int64_t mine = session
                             .Query("SELECT count(*) FROM runs WHERE status = 'STARTED' AND pid = ? "
                                    "AND pid_start_time = ? AND host = ?",
                                    {worker.pid, worker.pid_start_time, worker.host})
                             .at(0)
                             .Int(0);
    if (mine >= max_running) return std::nullopt;

    const std::string claim =
        "UPDATE runs SET status = 'STARTED', started_at = ?, pid = ?, pid_start_time = ?, host = ? WHERE run_id = ";
    const std::string returning = " RETURNING " + std::string(kRunColumns);
    std::optional<RunRecord> claimed;
    if (limits.empty()) {
      std::vector<SqlRow> rows = session.Query(
          claim +
              "(SELECT run_id FROM runs WHERE status = 'QUEUED' AND pid = 0 AND job <> '' ORDER BY created_at, run_id "
              "LIMIT 1 FOR UPDATE SKIP LOCKED)" +
              returning,
          {at, worker.pid, worker.pid_start_time, worker.host});
      if (!rows.empty()) claimed = RunFromRow(rows[0]);
    } else {
      const std::vector<RunRecord> started = RunsFromRows(session.Query(kSelectRuns + "WHERE status = 'STARTED'"));
      SqlValue after_created = nullptr, after_id = nullptr;  // the last candidate read, for the next page
      while (!claimed) {
        std::vector<SqlRow> page = session.Query(
            kSelectRuns +
                "WHERE status = 'QUEUED' AND pid = 0 AND job <> '' AND (?::text IS NULL OR (created_at, run_id) > "
                "(?, ?)) ORDER BY created_at, run_id LIMIT " +
                std::to_string(kCandidatePage) + " FOR UPDATE SKIP LOCKED",
            {after_created, after_created, after_id});
        for (const SqlRow& row : page) {
          RunRecord candidate = RunFromRow(row);
          if (!WithinTagLimits(limits, candidate, started)) continue;
          claimed = RunFromRow(session
                                   .Query(claim + "?" + returning,
                                          {at, worker.pid, worker.pid_start_time, worker.host, candidate.run_id})
                                   .at(0));
          break;
        }
        if (claimed || page.size() < static_cast<size_t>(kCandidatePage)) break;
        after_created = page.back().Text(5);
        after_id = page.back().Text(0);
      }
    }
    transaction.Commit();
    return claimed;
  });
}

std::vector<RunRecord> PostgresStateStore::ReapDeadWorkers(const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  return db().Write("reap dead workers", [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    const std::vector<SqlRow> workers = session.Query(
        "SELECT worker_id, host, pid, pid_start_time, started_at, heartbeat_at, EXISTS (SELECT 1 FROM "
        "pg_stat_activity a WHERE a.pid = w.backend_pid AND (a.backend_start = w.backend_start OR a.backend_start IS "
        "NULL)) FROM workers w");
    const std::string here = HostName();
    // Without a readable /proc every process would look dead, even this one: judge by sessions and heartbeats only.
    const bool proc_readable = ProcessStartTime(getpid()) != 0;
    std::vector<RunRecord> orphaned;
    for (const SqlRow& row : workers) {
      const WorkerRecord worker = WorkerFromRow(row);
      const bool session_gone = row.Text(6) != "t";
      const bool process_gone =
          proc_readable && worker.host == here && ProcessStartTime(worker.pid) != worker.pid_start_time;
      if (!session_gone && !process_gone && worker.heartbeat_at >= stale_before) continue;
      // Waits for a claim in flight by this worker (it holds the row): its run is then among the ones read below.
      if (session.Execute("DELETE FROM workers WHERE worker_id = ?", {worker.worker_id}) == 0) continue;
      std::vector<RunRecord> runs = RunsFromRows(
          session.Query(kSelectRuns + "WHERE status = 'STARTED' AND pid = ? AND pid_start_time = ? AND host = ? "
                                      "ORDER BY created_at, run_id",
                        {worker.pid, worker.pid_start_time, worker.host}));
      orphaned.insert(orphaned.end(), runs.begin(), runs.end());
    }
    transaction.Commit();
    return orphaned;
  });
}

}  // namespace sluice
