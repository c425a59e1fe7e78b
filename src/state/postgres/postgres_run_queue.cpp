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
#include "state/postgres/postgres_rows.hpp"
#include "state/postgres/postgres_state_store.hpp"

namespace sluice {

using pg_rows::Int;
using pg_rows::kRunColumns;
using pg_rows::kSelectRuns;
using pg_rows::Param;
using pg_rows::Row;
using pg_rows::RunFromRow;
using pg_rows::RunsFromResult;
using pg_rows::Text;

namespace {

// The class of the two-key advisory locks that serialize one worker's claims (the second key is hashtext(worker_id)).
constexpr int kWorkerClaimLockClass = 0x736c7563;
// Queued runs read per round while looking for one the tag limits allow.
constexpr int kCandidatePage = 100;

// The calling session, as pg_stat_activity shows it.
constexpr const char* kThisSession =
    "pg_backend_pid(), (SELECT backend_start FROM pg_stat_activity WHERE pid = "
    "pg_backend_pid())";

WorkerRecord WorkerFromRow(const Row& row) {
  return WorkerRecord{Text(row, 0), Text(row, 1), Int(row, 2), Int(row, 3), Text(row, 4), Text(row, 5)};
}

[[noreturn]] void ThrowWorkerNotRegistered(const PostgresStoreConnection& db, const std::string& worker_id) {
  throw db.StateError("SLU-STATE-010", "worker " + worker_id + " is not registered",
                      "it was found dead and its runs were taken over; restart the worker");
}

}  // namespace

void PostgresStateStore::RegisterWorker(const WorkerRecord& worker) {
  std::lock_guard lock(mutex_);
  db_->Write("register worker " + worker.worker_id, [&](pg::Connection& connection) {
    connection.Exec(
        "INSERT INTO workers (worker_id, host, pid, pid_start_time, started_at, heartbeat_at, backend_pid, "
        "backend_start) VALUES ($1, $2, $3, $4, $5, $6, " +
            std::string(kThisSession) +
            ") ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, "
            "backend_pid = excluded.backend_pid, backend_start = excluded.backend_start",
        {worker.worker_id, worker.host, Param(worker.pid), Param(worker.pid_start_time), worker.started_at,
         worker.heartbeat_at});
  });
}

void PostgresStateStore::HeartbeatWorker(const std::string& worker_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  db_->Write("heartbeat worker " + worker_id, [&](pg::Connection& connection) {
    // The session too: after a reconnect the worker lives on in its new session.
    pg::Result update =
        connection.Exec("UPDATE workers SET heartbeat_at = $1, (backend_pid, backend_start) = (SELECT " +
                            std::string(kThisSession) + ") WHERE worker_id = $2",
                        {at, worker_id});
    if (update.affected == 0) ThrowWorkerNotRegistered(*db_, worker_id);
  });
}

void PostgresStateStore::UnregisterWorker(const std::string& worker_id) {
  std::lock_guard lock(mutex_);
  db_->Write("unregister worker " + worker_id, [&](pg::Connection& connection) {
    connection.Exec("DELETE FROM workers WHERE worker_id = $1", {worker_id});
  });
}

std::vector<WorkerRecord> PostgresStateStore::ListWorkers() {
  std::lock_guard lock(mutex_);
  return db_->Read("list workers", [&](pg::Connection& connection) {
    std::vector<WorkerRecord> workers;
    for (const Row& row :
         connection
             .Exec("SELECT worker_id, host, pid, pid_start_time, started_at, heartbeat_at FROM workers "
                   "ORDER BY worker_id")
             .rows) {
      workers.push_back(WorkerFromRow(row));
    }
    return workers;
  });
}

std::optional<RunRecord> PostgresStateStore::ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                                            const std::vector<TagLimit>& limits,
                                                            const std::string& at) {
  std::lock_guard lock(mutex_);
  const std::string action = "claim a queued run for worker " + worker.worker_id;
  return db_->Write(action, [&](pg::Connection& connection) -> std::optional<RunRecord> {
    PgTransaction transaction(connection);
    // Always in this order (the shared lock first), so two claimers never wait for each other in a cycle.
    if (!limits.empty()) connection.Exec("SELECT pg_advisory_xact_lock($1)", {Param(kRunClaimLockKey)});
    connection.Exec("SELECT pg_advisory_xact_lock($1, hashtext($2))", {Param(kWorkerClaimLockClass), worker.worker_id});
    // KEY SHARE holds the row until commit: a concurrent reap deletes the worker after this claim, and so finds its
    // run.
    if (connection.Exec("SELECT 1 FROM workers WHERE worker_id = $1 FOR KEY SHARE", {worker.worker_id}).rows.empty()) {
      ThrowWorkerNotRegistered(*db_, worker.worker_id);
    }
    const pg::Result mine = connection.Exec(
        "SELECT count(*) FROM runs WHERE status = 'STARTED' AND pid = $1 AND pid_start_time = $2 AND host = $3",
        {Param(worker.pid), Param(worker.pid_start_time), worker.host});
    if (Int(mine.rows.at(0), 0) >= max_running) return std::nullopt;

    const std::string claim =
        "UPDATE runs SET status = 'STARTED', started_at = $1, pid = $2, pid_start_time = $3, "
        "host = $4 WHERE run_id = ";
    const pg::Params owner = {at, Param(worker.pid), Param(worker.pid_start_time), worker.host};
    std::optional<RunRecord> claimed;
    if (limits.empty()) {
      pg::Result result = connection.Exec(
          claim +
              "(SELECT run_id FROM runs WHERE status = 'QUEUED' AND pid = 0 AND job <> '' ORDER BY created_at, run_id "
              "LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING " +
              kRunColumns,
          owner);
      if (!result.rows.empty()) claimed = RunFromRow(*db_, result.rows[0]);
    } else {
      const std::vector<RunRecord> started =
          RunsFromResult(*db_, connection.Exec(kSelectRuns + "WHERE status = 'STARTED'"));
      std::optional<std::string> after_created, after_id;  // the last candidate read, for the next page
      while (!claimed) {
        pg::Result page = connection.Exec(
            kSelectRuns +
                "WHERE status = 'QUEUED' AND pid = 0 AND job <> '' AND ($1::text IS NULL OR (created_at, run_id) > "
                "($1, $2)) ORDER BY created_at, run_id LIMIT " +
                std::to_string(kCandidatePage) + " FOR UPDATE SKIP LOCKED",
            {after_created, after_id});
        for (const Row& row : page.rows) {
          RunRecord candidate = RunFromRow(*db_, row);
          if (!WithinTagLimits(limits, candidate, started)) continue;
          pg::Params params = owner;
          params.push_back(candidate.run_id);
          claimed = RunFromRow(*db_, connection.Exec(claim + "$5 RETURNING " + kRunColumns, params).rows.at(0));
          break;
        }
        if (claimed || page.rows.size() < static_cast<size_t>(kCandidatePage)) break;
        after_created = Text(page.rows.back(), 5);
        after_id = Text(page.rows.back(), 0);
      }
    }
    transaction.Commit();
    return claimed;
  });
}

std::vector<RunRecord> PostgresStateStore::ReapDeadWorkers(const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  return db_->Write("reap dead workers", [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    const pg::Result workers = connection.Exec(
        "SELECT worker_id, host, pid, pid_start_time, started_at, heartbeat_at, EXISTS (SELECT 1 FROM "
        "pg_stat_activity a WHERE a.pid = w.backend_pid AND (a.backend_start = w.backend_start OR a.backend_start IS "
        "NULL)) FROM workers w");
    const std::string here = HostName();
    // Without a readable /proc every process would look dead, even this one: judge by sessions and heartbeats only.
    const bool proc_readable = ProcessStartTime(getpid()) != 0;
    std::vector<RunRecord> orphaned;
    for (const Row& row : workers.rows) {
      const WorkerRecord worker = WorkerFromRow(row);
      const bool session_gone = Text(row, 6) != "t";
      const bool process_gone =
          proc_readable && worker.host == here && ProcessStartTime(worker.pid) != worker.pid_start_time;
      if (!session_gone && !process_gone && worker.heartbeat_at >= stale_before) continue;
      // Waits for a claim in flight by this worker (it holds the row): its run is then among the ones read below.
      if (connection.Exec("DELETE FROM workers WHERE worker_id = $1", {worker.worker_id}).affected == 0) continue;
      std::vector<RunRecord> runs = RunsFromResult(
          *db_,
          connection.Exec(kSelectRuns + "WHERE status = 'STARTED' AND pid = $1 AND pid_start_time = $2 AND host = $3 "
                                        "ORDER BY created_at, run_id",
                          {Param(worker.pid), Param(worker.pid_start_time), worker.host}));
      orphaned.insert(orphaned.end(), runs.begin(), runs.end());
    }
    transaction.Commit();
    return orphaned;
  });
}

}  // namespace sluice
