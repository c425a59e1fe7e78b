// SqlStateStore's TickStore (instigators, ticks and run keys; the daemon lease is the backend's), AssetEventStore (the
// asset materialization log) and the worker list of the RunQueue: what the daemon, its sensors and workers keep.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "state/sql/sql_state_store.hpp"

namespace sluice {

namespace {

constexpr const char* kSelectInstigators = "SELECT name, kind, status, \"cursor\", updated_at FROM instigators";

constexpr const char* kSelectAssetMaterializations =
    "SELECT sequence, asset, \"partition\", run_id, at, metadata FROM asset_materializations";

}  // namespace

std::vector<std::string> SqlStateStore::StringList(const std::string& text, const std::string& what) const {
  nlohmann::json list = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) throw connection_->StateError("SLU-STATE-006", what + " is not a JSON array: " + text);
  std::vector<std::string> out;
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) {
      throw connection_->StateError("SLU-STATE-006", what + " holds a value that is not a string: " + text);
    }
    out.push_back(item.get<std::string>());
  }
  return out;
}

InstigatorState SqlStateStore::InstigatorFromRow(const SqlRow& row) const {
  InstigatorState state;
  state.name = row.Text(0);
  std::optional<InstigatorKind> kind = ParseInstigatorKind(row.Text(1));
  std::optional<InstigatorStatus> status = ParseInstigatorStatus(row.Text(2));
  if (!kind || !status) {
    throw connection_->StateError("SLU-STATE-006", "instigator " + state.name + " has an unknown kind or status (" +
                                                       row.Text(1) + ", " + row.Text(2) + ")");
  }
  state.kind = *kind;
  state.status = *status;
  state.cursor = row.Text(3);
  state.updated_at = row.Text(4);
  return state;
}

AssetMaterializationRecord SqlStateStore::AssetMaterializationFromRow(const SqlRow& row) const {
  AssetMaterializationRecord record;
  record.sequence = row.Int(0);
  record.asset = row.Text(1);
  record.partition = row.Text(2);
  record.run_id = row.Text(3);
  record.at = row.Text(4);
  record.metadata = nlohmann::json::parse(row.Text(5), nullptr, /*allow_exceptions=*/false);
  if (!record.metadata.is_object()) {
    throw connection_->StateError(
        "SLU-STATE-006", "materialization " + std::to_string(record.sequence) + " has metadata that is not an object");
  }
  return record;
}

// ---- instigators, ticks, run keys ----

void SqlStateStore::SetInstigatorStatus(const std::string& name, InstigatorKind kind, InstigatorStatus status,
                                        const std::string& at) {
  std::lock_guard lock(mutex_);
  db().Write("set the status of " + name, [&](StateSession& session) {
    session.Execute(
        "INSERT INTO instigators (name, kind, status, \"cursor\", updated_at) VALUES (?, ?, ?, '', ?) "
        "ON CONFLICT (name) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at",
        {name, InstigatorKindName(kind), InstigatorStatusName(status), at});
  });
}

std::optional<InstigatorState> SqlStateStore::GetInstigator(const std::string& name) {
  std::lock_guard lock(mutex_);
  return db().Read("read instigator " + name, [&](StateSession& session) -> std::optional<InstigatorState> {
    std::vector<SqlRow> rows = session.Query(std::string(kSelectInstigators) + " WHERE name = ?", {name});
    if (rows.empty()) return std::nullopt;
    return InstigatorFromRow(rows[0]);
  });
}

std::vector<InstigatorState> SqlStateStore::ListInstigators() {
  std::lock_guard lock(mutex_);
  return db().Read("list instigators", [&](StateSession& session) {
    std::vector<InstigatorState> states;
    for (const SqlRow& row : session.Query(std::string(kSelectInstigators) + " ORDER BY name")) {
      states.push_back(InstigatorFromRow(row));
    }
    return states;
  });
}

int64_t SqlStateStore::RecordTick(const TickRecord& tick, const std::string& cursor) {
  std::lock_guard lock(mutex_);
  return db().Write("record a tick of " + tick.instigator, [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    if (session.Execute("UPDATE instigators SET \"cursor\" = ?, updated_at = ? WHERE name = ?",
                        {cursor, tick.evaluated_at, tick.instigator}) == 0) {
      throw db().StateError("SLU-STATE-009", "there is no schedule or sensor named " + tick.instigator);
    }
    std::vector<SqlRow> inserted = session.Query(
        "INSERT INTO ticks (instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, skip_reason, error) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING tick_id",
        {tick.instigator, InstigatorKindName(tick.kind), tick.tick_time, tick.evaluated_at, TickStatusName(tick.status),
         nlohmann::json(tick.run_keys).dump(), nlohmann::json(tick.run_ids).dump(), tick.skip_reason, tick.error});
    transaction.Commit();
    return inserted.at(0).Int(0);
  });
}

std::vector<TickRecord> SqlStateStore::TicksOf(const std::string& instigator, int limit) {
  std::lock_guard lock(mutex_);
  return db().Read("list the ticks of " + instigator, [&](StateSession& session) {
    std::vector<TickRecord> ticks;
    for (const SqlRow& row : session.Query("SELECT tick_id, instigator, kind, tick_time, evaluated_at, status, "
                                           "run_keys, run_ids, skip_reason, error FROM ticks WHERE instigator = ? "
                                           "ORDER BY tick_id DESC LIMIT ?",
                                           {instigator, LimitValue(limit)})) {
      TickRecord tick;
      tick.tick_id = row.Int(0);
      tick.instigator = row.Text(1);
      std::optional<InstigatorKind> kind = ParseInstigatorKind(row.Text(2));
      std::optional<TickStatus> status = ParseTickStatus(row.Text(5));
      if (!kind || !status) {
        throw db().StateError("SLU-STATE-006",
                              "tick " + std::to_string(tick.tick_id) + " has an unknown kind or status");
      }
      tick.kind = *kind;
      tick.tick_time = row.Text(3);
      tick.evaluated_at = row.Text(4);
      tick.status = *status;
      tick.run_keys = StringList(row.Text(6), "the run keys of tick " + std::to_string(tick.tick_id));
      tick.run_ids = StringList(row.Text(7), "the run ids of tick " + std::to_string(tick.tick_id));
      tick.skip_reason = row.Text(8);
      tick.error = row.Text(9);
      ticks.push_back(std::move(tick));
    }
    return ticks;
  });
}

int64_t SqlStateStore::PurgeTicks(TickStatus status, const std::string& evaluated_before) {
  std::lock_guard lock(mutex_);
  return db().Write("purge old ticks", [&](StateSession& session) {
    return session.Execute("DELETE FROM ticks WHERE status = ? AND evaluated_at < ?",
                           {TickStatusName(status), evaluated_before});
  });
}

std::optional<std::string> SqlStateStore::ClaimRunKey(const std::string& run_key, const std::string& run_id,
                                                      const std::string& at) {
  std::lock_guard lock(mutex_);
  return db().Write("claim run key " + run_key, [&](StateSession& session) -> std::optional<std::string> {
    // On PostgreSQL a concurrent insert of the same key makes ON CONFLICT wait for its commit, so the SELECT then sees
    // its row; SQLite writers are serialized.
    if (session.Execute("INSERT INTO run_keys (run_key, run_id, claimed_at) VALUES (?, ?, ?) "
                        "ON CONFLICT (run_key) DO NOTHING",
                        {run_key, run_id, at}) > 0) {
      return std::nullopt;
    }
    return session.Query("SELECT run_id FROM run_keys WHERE run_key = ?", {run_key}).at(0).Text(0);
  });
}

// ---- the asset materialization log ----

int64_t SqlStateStore::RecordAssetMaterialization(const AssetMaterializationRecord& record) {
  std::lock_guard lock(mutex_);
  return db().Write("record a materialization of " + record.asset, [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    LockAssetLog(session);
    std::vector<SqlRow> inserted = session.Query(
        "INSERT INTO asset_materializations (asset, \"partition\", run_id, at, metadata) VALUES (?, ?, ?, ?, ?) "
        "RETURNING sequence",
        {record.asset, record.partition, record.run_id, record.at,
         record.metadata.is_null() ? std::string("{}") : record.metadata.dump()});
    transaction.Commit();
    return inserted.at(0).Int(0);
  });
}

std::optional<AssetMaterializationRecord> SqlStateStore::LatestAssetMaterialization(const std::string& asset,
                                                                                    int64_t after) {
  std::lock_guard lock(mutex_);
  return db().Read("read the latest materialization of " + asset,
                   [&](StateSession& session) -> std::optional<AssetMaterializationRecord> {
                     std::vector<SqlRow> rows = session.Query(
                         std::string(kSelectAssetMaterializations) +
                             " WHERE asset = ? AND sequence > ? ORDER BY sequence DESC LIMIT 1",
                         {asset, after});
                     if (rows.empty()) return std::nullopt;
                     return AssetMaterializationFromRow(rows[0]);
                   });
}

std::vector<AssetMaterializationRecord> SqlStateStore::RecentAssetMaterializations(const std::string& asset,
                                                                                   int limit) {
  std::lock_guard lock(mutex_);
  return db().Read("read the materializations of " + asset, [&](StateSession& session) {
    std::vector<AssetMaterializationRecord> records;
    for (const SqlRow& row :
         session.Query(std::string(kSelectAssetMaterializations) + " WHERE asset = ? ORDER BY sequence DESC LIMIT ?",
                       {asset, LimitValue(limit)})) {
      records.push_back(AssetMaterializationFromRow(row));
    }
    std::reverse(records.begin(), records.end());
    return records;
  });
}

int64_t SqlStateStore::LastAssetSequence() {
  std::lock_guard lock(mutex_);
  return db().Read("read the last materialization sequence", [&](StateSession& session) {
    return session.Query("SELECT COALESCE(MAX(sequence), 0) FROM asset_materializations").at(0).Int(0);
  });
}

std::vector<AssetMaterializationRecord> SqlStateStore::LatestAssetMaterializations() {
  std::lock_guard lock(mutex_);
  return db().Read("read the latest materialization of every asset", [&](StateSession& session) {
    std::vector<AssetMaterializationRecord> records;
    for (const SqlRow& row : session.Query(
             std::string(kSelectAssetMaterializations) +
             " WHERE sequence IN (SELECT MAX(sequence) FROM asset_materializations GROUP BY asset) ORDER BY asset")) {
      records.push_back(AssetMaterializationFromRow(row));
    }
    return records;
  });
}

// ---- workers ----

void SqlStateStore::UnregisterWorker(const std::string& worker_id) {
  std::lock_guard lock(mutex_);
  db().Write("unregister worker " + worker_id, [&](StateSession& session) {
    session.Execute("DELETE FROM workers WHERE worker_id = ?", {worker_id});
  });
}

std::vector<WorkerRecord> SqlStateStore::ListWorkers() {
  std::lock_guard lock(mutex_);
  return db().Read("list workers", [&](StateSession& session) {
    std::vector<WorkerRecord> workers;
    for (const SqlRow& row : session.Query(kSelectWorkers + "ORDER BY worker_id")) workers.push_back(WorkerFromRow(row));
    return workers;
  });
}

}  // namespace sluice
