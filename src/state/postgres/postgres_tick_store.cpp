// PostgresStateStore's TickStore (instigators, ticks, run keys and the daemon lease) and AssetEventStore (the asset
// materialization log): what the daemon and its sensors keep.

#include <algorithm>
#include <nlohmann/json.hpp>

#include "state/postgres/postgres_migrations.hpp"
#include "state/postgres/postgres_rows.hpp"
#include "state/postgres/postgres_state_store.hpp"

namespace sluice {

using pg_rows::Int;
using pg_rows::LimitParam;
using pg_rows::Param;
using pg_rows::Row;
using pg_rows::Text;

namespace {

std::vector<std::string> StringList(const PostgresStoreConnection& db, const std::string& text,
                                    const std::string& what) {
  nlohmann::json list = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) throw db.StateError("SLU-STATE-006", what + " is not a JSON array: " + text);
  std::vector<std::string> out;
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) throw db.StateError("SLU-STATE-006", what + " holds a value that is not a string: " + text);
    out.push_back(item.get<std::string>());
  }
  return out;
}

InstigatorState ReadInstigator(const PostgresStoreConnection& db, const Row& row) {
  InstigatorState state;
  state.name = Text(row, 0);
  std::optional<InstigatorKind> kind = ParseInstigatorKind(Text(row, 1));
  std::optional<InstigatorStatus> status = ParseInstigatorStatus(Text(row, 2));
  if (!kind || !status) {
    throw db.StateError("SLU-STATE-006", "instigator " + state.name + " has an unknown kind or status (" +
                                             Text(row, 1) + ", " + Text(row, 2) + ")");
  }
  state.kind = *kind;
  state.status = *status;
  state.cursor = Text(row, 3);
  state.updated_at = Text(row, 4);
  return state;
}

AssetMaterializationRecord ReadAssetMaterialization(const PostgresStoreConnection& db, const Row& row) {
  AssetMaterializationRecord record;
  record.sequence = Int(row, 0);
  record.asset = Text(row, 1);
  record.partition = Text(row, 2);
  record.run_id = Text(row, 3);
  record.at = Text(row, 4);
  record.metadata = nlohmann::json::parse(Text(row, 5), nullptr, /*allow_exceptions=*/false);
  if (!record.metadata.is_object()) {
    throw db.StateError("SLU-STATE-006",
                        "materialization " + std::to_string(record.sequence) + " has metadata that is not an object");
  }
  return record;
}

constexpr const char* kAssetMaterializationColumns =
    "SELECT sequence, asset, \"partition\", run_id, at, metadata::text FROM asset_materializations";

constexpr const char* kInstigatorColumns = "SELECT name, kind, status, \"cursor\", updated_at FROM instigators";

}  // namespace

void PostgresStateStore::SetInstigatorStatus(const std::string& name, InstigatorKind kind, InstigatorStatus status,
                                             const std::string& at) {
  std::lock_guard lock(mutex_);
  db_->Write("set the status of " + name, [&](pg::Connection& connection) {
    connection.Exec(
        "INSERT INTO instigators (name, kind, status, \"cursor\", updated_at) VALUES ($1, $2, $3, '', $4) "
        "ON CONFLICT (name) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at",
        {name, InstigatorKindName(kind), InstigatorStatusName(status), at});
  });
}

std::optional<InstigatorState> PostgresStateStore::GetInstigator(const std::string& name) {
  std::lock_guard lock(mutex_);
  return db_->Read("read instigator " + name, [&](pg::Connection& connection) -> std::optional<InstigatorState> {
    pg::Result result = connection.Exec(std::string(kInstigatorColumns) + " WHERE name = $1", {name});
    if (result.rows.empty()) return std::nullopt;
    return ReadInstigator(*db_, result.rows[0]);
  });
}

std::vector<InstigatorState> PostgresStateStore::ListInstigators() {
  std::lock_guard lock(mutex_);
  return db_->Read("list instigators", [&](pg::Connection& connection) {
    std::vector<InstigatorState> states;
    for (const Row& row : connection.Exec(std::string(kInstigatorColumns) + " ORDER BY name").rows) {
      states.push_back(ReadInstigator(*db_, row));
    }
    return states;
  });
}

int64_t PostgresStateStore::RecordTick(const TickRecord& tick, const std::string& cursor) {
  std::lock_guard lock(mutex_);
  return db_->Write("record a tick of " + tick.instigator, [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    pg::Result advance = connection.Exec("UPDATE instigators SET \"cursor\" = $1, updated_at = $2 WHERE name = $3",
                                         {cursor, tick.evaluated_at, tick.instigator});
    if (advance.affected == 0) {
      throw db_->StateError("SLU-STATE-009", "there is no schedule or sensor named " + tick.instigator);
    }
    pg::Result inserted = connection.Exec(
        "INSERT INTO ticks (instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, skip_reason, error) "
        "VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9) RETURNING tick_id",
        {tick.instigator, InstigatorKindName(tick.kind), tick.tick_time, tick.evaluated_at, TickStatusName(tick.status),
         nlohmann::json(tick.run_keys).dump(), nlohmann::json(tick.run_ids).dump(), tick.skip_reason, tick.error});
    transaction.Commit();
    return Int(inserted.rows.at(0), 0);
  });
}

std::vector<TickRecord> PostgresStateStore::TicksOf(const std::string& instigator, int limit) {
  std::lock_guard lock(mutex_);
  return db_->Read("list the ticks of " + instigator, [&](pg::Connection& connection) {
    pg::Result result = connection.Exec(
        "SELECT tick_id, instigator, kind, tick_time, evaluated_at, status, run_keys::text, run_ids::text, "
        "skip_reason, error FROM ticks WHERE instigator = $1 ORDER BY tick_id DESC LIMIT $2",
        {instigator, LimitParam(limit)});
    std::vector<TickRecord> ticks;
    for (const Row& row : result.rows) {
      TickRecord tick;
      tick.tick_id = Int(row, 0);
      tick.instigator = Text(row, 1);
      std::optional<InstigatorKind> kind = ParseInstigatorKind(Text(row, 2));
      std::optional<TickStatus> status = ParseTickStatus(Text(row, 5));
      if (!kind || !status) {
        throw db_->StateError("SLU-STATE-006",
                              "tick " + std::to_string(tick.tick_id) + " has an unknown kind or status");
      }
      tick.kind = *kind;
      tick.tick_time = Text(row, 3);
      tick.evaluated_at = Text(row, 4);
      tick.status = *status;
      tick.run_keys = StringList(*db_, Text(row, 6), "the run keys of tick " + std::to_string(tick.tick_id));
      tick.run_ids = StringList(*db_, Text(row, 7), "the run ids of tick " + std::to_string(tick.tick_id));
      tick.skip_reason = Text(row, 8);
      tick.error = Text(row, 9);
      ticks.push_back(std::move(tick));
    }
    return ticks;
  });
}

std::optional<std::string> PostgresStateStore::ClaimRunKey(const std::string& run_key, const std::string& run_id,
                                                           const std::string& at) {
  std::lock_guard lock(mutex_);
  return db_->Write("claim run key " + run_key, [&](pg::Connection& connection) -> std::optional<std::string> {
    // A concurrent insert of the same key makes ON CONFLICT wait for its commit, so the SELECT then sees its row.
    pg::Result inserted = connection.Exec(
        "INSERT INTO run_keys (run_key, run_id, claimed_at) VALUES ($1, $2, $3) ON CONFLICT (run_key) DO NOTHING",
        {run_key, run_id, at});
    if (inserted.affected > 0) return std::nullopt;
    return connection.Exec("SELECT run_id FROM run_keys WHERE run_key = $1", {run_key}).Scalar();
  });
}

int64_t PostgresStateStore::PurgeTicks(TickStatus status, const std::string& evaluated_before) {
  std::lock_guard lock(mutex_);
  return db_->Write("purge old ticks", [&](pg::Connection& connection) {
    return connection
        .Exec("DELETE FROM ticks WHERE status = $1 AND evaluated_at < $2", {TickStatusName(status), evaluated_before})
        .affected;
  });
}

// ---- the daemon lease ----

bool PostgresStateStore::LeaseLockHeld() {
  if (lease_connection_) {
    try {
      lease_connection_->Exec("SELECT 1");
      return lease_locked_;
    } catch (const pg::PgError& error) {
      if (!error.connection_lost()) db_->Throw(error, PgStage::kServing, "check the daemon lease connection");
      // The session ended (killed, or the server restarted): the lock went with it.
      lease_connection_.reset();
      lease_locked_ = false;
    }
  }
  try {
    lease_connection_ = pg::Connection::Open(db_->url(), "sluice daemon lease");
  } catch (const pg::PgError& error) {
    db_->Throw(error, PgStage::kServing, "open the daemon lease connection");
  }
  return false;
}

DaemonLease PostgresStateStore::AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                                   const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  const std::string action = "acquire the daemon lease";
  const std::string here = HostName();
  auto read_holder = [&](pg::Connection& connection) -> std::optional<Row> {
    pg::Result row = connection.Exec(
        "SELECT pid, pid_start_time, host, backend_pid, heartbeat_at FROM daemon_lease WHERE lease = 1");
    if (row.rows.empty()) return std::nullopt;
    return row.rows[0];
  };
  auto holder_lease = [&](const std::optional<Row>& holder) {
    DaemonLease lease;
    if (holder) {
      lease.holder_pid = Int(*holder, 0);
      lease.holder_start_time = Int(*holder, 1);
      lease.heartbeat_at = Text(*holder, 4);
    }
    return lease;
  };

  bool newly_locked = false;
  if (!LeaseLockHeld()) {
    auto try_lock = [&] {
      try {
        return lease_connection_->Exec("SELECT pg_try_advisory_lock($1)", {Param(kDaemonLeaseLockKey)}).Scalar() == "t";
      } catch (const pg::PgError& error) {
        if (error.connection_lost()) lease_connection_.reset();
        db_->Throw(error, PgStage::kServing, action);
      }
    };
    if (!try_lock()) {
      // Another session holds it. When its heartbeat is stale its holder hangs (a dead one's session would be gone):
      // end that session, which releases the lock, and try once more.
      std::optional<Row> holder = db_->Read(action, read_holder);
      if (!holder || Text(*holder, 4) >= stale_before) return holder_lease(holder);
      db_->Write(action, [&](pg::Connection& connection) {
        try {
          connection.Exec("SELECT pg_terminate_backend($1, 5000)", {Text(*holder, 3)});
        } catch (const pg::PgError& error) {
          if (error.sqlstate() != "42501") throw;  // not allowed to: the lease stays with the holder
        }
      });
      if (!try_lock()) return holder_lease(db_->Read(action, read_holder));
    }
    lease_locked_ = true;
    newly_locked = true;
  }

  // This store's session holds the lock. A row left by another session is a holder that is gone (its session ended,
  // releasing the lock); a row of this session is judged as SQLite judges it: the caller's own, a local process that
  // is gone, or a stale heartbeat.
  const int lease_backend = lease_connection_->BackendPid();
  return db_->Write(action, [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    std::optional<Row> holder = read_holder(connection);
    if (holder && !newly_locked && Int(*holder, 3) == lease_backend) {
      const bool mine = Int(*holder, 0) == pid && Int(*holder, 1) == start_time && Text(*holder, 2) == here;
      const bool local = Text(*holder, 2) == here;
      const bool alive = !local || ProcessStartTime(Int(*holder, 0)) == Int(*holder, 1);
      if (!mine && alive && Text(*holder, 4) >= stale_before) return holder_lease(holder);
    }
    connection.Exec(
        "INSERT INTO daemon_lease (lease, pid, pid_start_time, host, backend_pid, heartbeat_at) "
        "VALUES (1, $1, $2, $3, $4, $5) ON CONFLICT (lease) DO UPDATE SET pid = excluded.pid, "
        "pid_start_time = excluded.pid_start_time, host = excluded.host, backend_pid = excluded.backend_pid, "
        "heartbeat_at = excluded.heartbeat_at",
        {Param(pid), Param(start_time), here, Param(lease_backend), now});
    transaction.Commit();
    return DaemonLease{true, pid, start_time, now};
  });
}

void PostgresStateStore::ReleaseDaemonLease(int64_t pid, int64_t start_time) {
  std::lock_guard lock(mutex_);
  if (!lease_connection_ || !lease_locked_) return;  // this store never held it: it is not the caller's
  const int lease_backend = lease_connection_->BackendPid();
  const int64_t released = db_->Write("release the daemon lease", [&](pg::Connection& connection) {
    return connection
        .Exec("DELETE FROM daemon_lease WHERE pid = $1 AND pid_start_time = $2 AND host = $3 AND backend_pid = $4",
              {Param(pid), Param(start_time), HostName(), Param(lease_backend)})
        .affected;
  });
  if (released == 0) return;
  try {
    lease_connection_->Exec("SELECT pg_advisory_unlock($1)", {Param(kDaemonLeaseLockKey)});
    lease_locked_ = false;
  } catch (const pg::PgError& error) {
    // A lost session released the lock with it; anything else is a failure to report.
    lease_connection_.reset();
    lease_locked_ = false;
    if (!error.connection_lost()) db_->Throw(error, PgStage::kServing, "release the daemon lease");
  }
}

// ---- the asset materialization log ----

int64_t PostgresStateStore::RecordAssetMaterialization(const AssetMaterializationRecord& record) {
  std::lock_guard lock(mutex_);
  return db_->Write("record a materialization of " + record.asset, [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    connection.Exec("SELECT pg_advisory_xact_lock($1)", {Param(kAssetLogLockKey)});
    pg::Result inserted = connection.Exec(
        "INSERT INTO asset_materializations (asset, \"partition\", run_id, at, metadata) "
        "VALUES ($1, $2, $3, $4, $5::jsonb) RETURNING sequence",
        {record.asset, record.partition, record.run_id, record.at,
         record.metadata.is_null() ? std::string("{}") : record.metadata.dump()});
    transaction.Commit();
    return Int(inserted.rows.at(0), 0);
  });
}

std::optional<AssetMaterializationRecord> PostgresStateStore::LatestAssetMaterialization(const std::string& asset,
                                                                                         int64_t after) {
  std::lock_guard lock(mutex_);
  return db_->Read("read the latest materialization of " + asset,
                   [&](pg::Connection& connection) -> std::optional<AssetMaterializationRecord> {
                     pg::Result result =
                         connection.Exec(std::string(kAssetMaterializationColumns) +
                                             " WHERE asset = $1 AND sequence > $2 ORDER BY sequence DESC LIMIT 1",
                                         {asset, Param(after)});
                     if (result.rows.empty()) return std::nullopt;
                     return ReadAssetMaterialization(*db_, result.rows[0]);
                   });
}

std::vector<AssetMaterializationRecord> PostgresStateStore::RecentAssetMaterializations(const std::string& asset,
                                                                                        int limit) {
  std::lock_guard lock(mutex_);
  return db_->Read("read the materializations of " + asset, [&](pg::Connection& connection) {
    pg::Result result =
        connection.Exec(std::string(kAssetMaterializationColumns) + " WHERE asset = $1 ORDER BY sequence DESC LIMIT $2",
                        {asset, LimitParam(limit)});
    std::vector<AssetMaterializationRecord> records;
    for (const Row& row : result.rows) records.push_back(ReadAssetMaterialization(*db_, row));
    std::reverse(records.begin(), records.end());
    return records;
  });
}

int64_t PostgresStateStore::LastAssetSequence() {
  std::lock_guard lock(mutex_);
  return db_->Read("read the last materialization sequence", [&](pg::Connection& connection) {
    return std::stoll(
        connection.Exec("SELECT COALESCE(MAX(sequence), 0) FROM asset_materializations").Scalar().value_or("0"));
  });
}

std::vector<AssetMaterializationRecord> PostgresStateStore::LatestAssetMaterializations() {
  std::lock_guard lock(mutex_);
  return db_->Read("read the latest materialization of every asset", [&](pg::Connection& connection) {
    pg::Result result = connection.Exec(
        "SELECT DISTINCT ON (asset) sequence, asset, \"partition\", run_id, at, metadata::text "
        "FROM asset_materializations ORDER BY asset, sequence DESC");
    std::vector<AssetMaterializationRecord> records;
    for (const Row& row : result.rows) records.push_back(ReadAssetMaterialization(*db_, row));
    return records;
  });
}

}  // namespace sluice
