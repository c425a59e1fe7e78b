#include "state/postgres/postgres_state_store.hpp"

#include <utility>

#include "state/postgres/postgres_migrations.hpp"
#include "state/postgres/postgres_store_connection.hpp"

namespace sluice {

std::unique_ptr<PostgresStateStore> PostgresStateStore::Open(const std::string& url) {
  return Open(url, SystemClock());
}

std::unique_ptr<PostgresStateStore> PostgresStateStore::Open(const std::string& url, const Clock& clock) {
  auto db = std::make_unique<PostgresStoreConnection>(url, "sluice state");
  const std::string now = FormatUtc(clock.Now());
  db->RunOpening("migrate the state database",
                 [&](pg::Connection& connection) { MigratePostgresSchema(connection, now, db->redacted_url()); });
  std::unique_ptr<PostgresStateStore> store(new PostgresStateStore(std::move(db)));
  store->MarkDeadRuns(now);
  return store;
}

PostgresStateStore::PostgresStateStore(std::unique_ptr<PostgresStoreConnection> connection)
    : SqlStateStore(std::move(connection)), postgres_(static_cast<PostgresStoreConnection&>(db())) {}

PostgresStateStore::~PostgresStateStore() = default;

int PostgresStateStore::BackendPid() {
  std::lock_guard lock(mutex_);
  return db().Read("read the backend pid", [](StateSession& session) {
    return static_cast<int>(session.Query("SELECT pg_backend_pid()").at(0).Int(0));
  });
}

void PostgresStateStore::LockAssetLog(StateSession& session) {
  session.Query("SELECT pg_advisory_xact_lock(?)", {kAssetLogLockKey});
}

// ---- the daemon lease ----

bool PostgresStateStore::LeaseLockHeld() {
  if (lease_connection_) {
    try {
      lease_connection_->Exec("SELECT 1");
      return lease_locked_;
    } catch (const pg::PgError& error) {
      if (!error.connection_lost()) postgres_.Throw(error, PgStage::kServing, "check the daemon lease connection");
      // The session ended (killed, or the server restarted): the lock went with it.
      lease_connection_.reset();
      lease_locked_ = false;
    }
  }
  try {
    lease_connection_ = pg::Connection::Open(postgres_.url(), "sluice daemon lease");
  } catch (const pg::PgError& error) {
    postgres_.Throw(error, PgStage::kServing, "open the daemon lease connection");
  }
  return false;
}

DaemonLease PostgresStateStore::AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                                   const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  const std::string action = "acquire the daemon lease";
  const std::string here = HostName();
  // The lease row: pid, pid_start_time, host, backend_pid, heartbeat_at.
  auto read_holder = [&](StateSession& session) -> std::optional<SqlRow> {
    std::vector<SqlRow> rows =
        session.Query("SELECT pid, pid_start_time, host, backend_pid, heartbeat_at FROM daemon_lease WHERE lease = 1");
    if (rows.empty()) return std::nullopt;
    return rows[0];
  };
  auto holder_lease = [&](const std::optional<SqlRow>& holder) {
    DaemonLease lease;
    if (holder) {
      lease.holder_pid = holder->Int(0);
      lease.holder_start_time = holder->Int(1);
      lease.heartbeat_at = holder->Text(4);
    }
    return lease;
  };

  bool newly_locked = false;
  if (!LeaseLockHeld()) {
    auto try_lock = [&] {
      try {
        return lease_connection_->Exec("SELECT pg_try_advisory_lock($1)", {std::to_string(kDaemonLeaseLockKey)})
                   .Scalar() == "t";
      } catch (const pg::PgError& error) {
        if (error.connection_lost()) lease_connection_.reset();
        postgres_.Throw(error, PgStage::kServing, action);
      }
    };
    if (!try_lock()) {
      // Another session holds it. When its heartbeat is stale its holder hangs (a dead one's session would be gone):
      // end that session, which releases the lock, and try once more.
      std::optional<SqlRow> holder = db().Read(action, read_holder);
      if (!holder || holder->Text(4) >= stale_before) return holder_lease(holder);
      db().Write(action, [&](StateSession& session) {
        try {
          session.Query("SELECT pg_terminate_backend(?, 5000)", {holder->Int(3)});
        } catch (const pg::PgError& error) {
          if (error.sqlstate() != "42501") throw;  // not allowed to: the lease stays with the holder
        }
      });
      if (!try_lock()) return holder_lease(db().Read(action, read_holder));
    }
    lease_locked_ = true;
    newly_locked = true;
  }

  // This store's session holds the lock. A row left by another session is a holder that is gone (its session ended,
  // releasing the lock); a row of this session is judged as SQLite judges it: the caller's own, a local process that
  // is gone, or a stale heartbeat.
  const int lease_backend = lease_connection_->BackendPid();
  return db().Write(action, [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    std::optional<SqlRow> holder = read_holder(session);
    if (holder && !newly_locked && holder->Int(3) == lease_backend) {
      const bool mine = holder->Int(0) == pid && holder->Int(1) == start_time && holder->Text(2) == here;
      const bool local = holder->Text(2) == here;
      const bool alive = !local || ProcessStartTime(holder->Int(0)) == holder->Int(1);
      if (!mine && alive && holder->Text(4) >= stale_before) return holder_lease(holder);
    }
    session.Execute(
        "INSERT INTO daemon_lease (lease, pid, pid_start_time, host, backend_pid, heartbeat_at) "
        "VALUES (1, ?, ?, ?, ?, ?) ON CONFLICT (lease) DO UPDATE SET pid = excluded.pid, "
        "pid_start_time = excluded.pid_start_time, host = excluded.host, backend_pid = excluded.backend_pid, "
        "heartbeat_at = excluded.heartbeat_at",
        {pid, start_time, here, lease_backend, now});
    transaction.Commit();
    return DaemonLease{true, pid, start_time, now};
  });
}

void PostgresStateStore::ReleaseDaemonLease(int64_t pid, int64_t start_time) {
  std::lock_guard lock(mutex_);
  if (!lease_connection_ || !lease_locked_) return;  // this store never held it: it is not the caller's
  const int lease_backend = lease_connection_->BackendPid();
  const int64_t released = db().Write("release the daemon lease", [&](StateSession& session) {
    return session.Execute(
        "DELETE FROM daemon_lease WHERE pid = ? AND pid_start_time = ? AND host = ? AND backend_pid = ?",
        {pid, start_time, HostName(), lease_backend});
  });
  if (released == 0) return;
  try {
    lease_connection_->Exec("SELECT pg_advisory_unlock($1)", {std::to_string(kDaemonLeaseLockKey)});
    lease_locked_ = false;
  } catch (const pg::PgError& error) {
    // A lost session released the lock with it; anything else is a failure to report.
    lease_connection_.reset();
    lease_locked_ = false;
    if (!error.connection_lost()) postgres_.Throw(error, PgStage::kServing, "release the daemon lease");
  }
}

}  // namespace sluice
