// SqliteStateStore's TickStore (instigators, ticks, run keys and the daemon lease; migration 3) and AssetEventStore
// (the asset materialization log; migration 4): what the daemon and its sensors keep.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "state/sqlite/sqlite_state_store.hpp"
#include "state/sqlite/sqlite_statement.hpp"

namespace sluice {

namespace {

constexpr SqliteStage kServing = SqliteStage::kServing;

std::vector<std::string> StringList(sqlite3* db, const std::string& text, const std::string& what) {
  nlohmann::json list = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!list.is_array()) throw StateError(db, "SLU-STATE-006", what + " is not a JSON array: " + text);
  std::vector<std::string> out;
  for (const nlohmann::json& item : list) {
    if (!item.is_string()) throw StateError(db, "SLU-STATE-006", what + " holds a value that is not a string: " + text);
    out.push_back(item.get<std::string>());
  }
  return out;
}

InstigatorState ReadInstigator(sqlite3* db, const SqliteStatement& row) {
  InstigatorState state;
  state.name = row.Text(0);
  std::optional<InstigatorKind> kind = ParseInstigatorKind(row.Text(1));
  std::optional<InstigatorStatus> status = ParseInstigatorStatus(row.Text(2));
  if (!kind || !status) {
    throw StateError(db, "SLU-STATE-006", "instigator " + state.name + " has an unknown kind or status (" + row.Text(1) +
                                              ", " + row.Text(2) + ")");
  }
  state.kind = *kind;
  state.status = *status;
  state.cursor = row.Text(3);
  state.updated_at = row.Text(4);
  return state;
}

AssetMaterializationRecord ReadAssetMaterialization(sqlite3* db, const SqliteStatement& row) {
  AssetMaterializationRecord record;
  record.sequence = row.Int(0);
  record.asset = row.Text(1);
  record.partition = row.Text(2);
  record.run_id = row.Text(3);
  record.at = row.Text(4);
  record.metadata = nlohmann::json::parse(row.Text(5), nullptr, /*allow_exceptions=*/false);
  if (!record.metadata.is_object()) {
    throw StateError(db, "SLU-STATE-006",
                     "materialization " + std::to_string(record.sequence) + " has metadata that is not an object");
  }
  return record;
}

constexpr const char* kAssetMaterializationColumns =
    "SELECT sequence, asset, \"partition\", run_id, at, metadata FROM asset_materializations";

constexpr const char* kInstigatorColumns = "SELECT name, kind, status, cursor, updated_at FROM instigators";

}  // namespace

void SqliteStateStore::SetInstigatorStatus(const std::string& name, InstigatorKind kind, InstigatorStatus status,
                                           const std::string& at) {
  std::lock_guard lock(mutex_);
  SqliteStatement upsert(db_, kServing, "set the status of " + name,
                         "INSERT INTO instigators (name, kind, status, cursor, updated_at) "
                         "VALUES (:name, :kind, :status, '', :at) "
                         "ON CONFLICT (name) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at");
  upsert.Bind(":name", name)
      .Bind(":kind", InstigatorKindName(kind))
      .Bind(":status", InstigatorStatusName(status))
      .Bind(":at", at);
  upsert.Execute();
}

std::optional<InstigatorState> SqliteStateStore::GetInstigator(const std::string& name) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read instigator " + name, std::string(kInstigatorColumns) + " WHERE name = :name");
  query.Bind(":name", name);
  if (!query.Step()) return std::nullopt;
  return ReadInstigator(db_, query);
}

std::vector<InstigatorState> SqliteStateStore::ListInstigators() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list instigators", std::string(kInstigatorColumns) + " ORDER BY name");
  std::vector<InstigatorState> states;
  while (query.Step()) states.push_back(ReadInstigator(db_, query));
  return states;
}

int64_t SqliteStateStore::RecordTick(const TickRecord& tick, const std::string& cursor) {
  std::lock_guard lock(mutex_);
  const std::string action = "record a tick of " + tick.instigator;
  SqliteTransaction transaction(db_, kServing, action);
  SqliteStatement advance(db_, kServing, action,
                          "UPDATE instigators SET cursor = :cursor, updated_at = :at WHERE name = :name");
  advance.Bind(":cursor", cursor).Bind(":at", tick.evaluated_at).Bind(":name", tick.instigator);
  if (advance.Execute() == 0) {
    throw StateError(db_, "SLU-STATE-009", "there is no schedule or sensor named " + tick.instigator);
  }
  SqliteStatement insert(db_, kServing, action,
                         "INSERT INTO ticks (instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, "
                         "skip_reason, error) VALUES (:instigator, :kind, :tick_time, :evaluated_at, :status, "
                         ":run_keys, :run_ids, :skip_reason, :error)");
  insert.Bind(":instigator", tick.instigator)
      .Bind(":kind", InstigatorKindName(tick.kind))
      .Bind(":tick_time", tick.tick_time)
      .Bind(":evaluated_at", tick.evaluated_at)
      .Bind(":status", TickStatusName(tick.status))
      .Bind(":run_keys", nlohmann::json(tick.run_keys).dump())
      .Bind(":run_ids", nlohmann::json(tick.run_ids).dump())
      .Bind(":skip_reason", tick.skip_reason)
      .Bind(":error", tick.error);
  insert.Execute();
  int64_t id = sqlite3_last_insert_rowid(db_);
  transaction.Commit();
  return id;
}

std::vector<TickRecord> SqliteStateStore::TicksOf(const std::string& instigator, int limit) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list the ticks of " + instigator,
                        "SELECT tick_id, instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, "
                        "skip_reason, error FROM ticks WHERE instigator = :instigator ORDER BY tick_id DESC "
                        "LIMIT :limit");
  query.Bind(":instigator", instigator).Bind(":limit", int64_t{limit});
  std::vector<TickRecord> ticks;
  while (query.Step()) {
    TickRecord tick;
    tick.tick_id = query.Int(0);
    tick.instigator = query.Text(1);
    std::optional<InstigatorKind> kind = ParseInstigatorKind(query.Text(2));
    std::optional<TickStatus> status = ParseTickStatus(query.Text(5));
    if (!kind || !status) {
      throw StateError(db_, "SLU-STATE-006", "tick " + std::to_string(tick.tick_id) + " has an unknown kind or status");
    }
    tick.kind = *kind;
    tick.tick_time = query.Text(3);
    tick.evaluated_at = query.Text(4);
    tick.status = *status;
    tick.run_keys = StringList(db_, query.Text(6), "the run keys of tick " + std::to_string(tick.tick_id));
    tick.run_ids = StringList(db_, query.Text(7), "the run ids of tick " + std::to_string(tick.tick_id));
    tick.skip_reason = query.Text(8);
    tick.error = query.Text(9);
    ticks.push_back(std::move(tick));
  }
  return ticks;
}

std::optional<std::string> SqliteStateStore::ClaimRunKey(const std::string& run_key, const std::string& run_id,
                                                         const std::string& at) {
  std::lock_guard lock(mutex_);
  const std::string action = "claim run key " + run_key;
  SqliteStatement insert(db_, kServing, action,
                         "INSERT INTO run_keys (run_key, run_id, claimed_at) VALUES (:run_key, :run_id, :at) "
                         "ON CONFLICT (run_key) DO NOTHING");
  insert.Bind(":run_key", run_key).Bind(":run_id", run_id).Bind(":at", at);
  if (insert.Execute() > 0) return std::nullopt;
  SqliteStatement query(db_, kServing, action, "SELECT run_id FROM run_keys WHERE run_key = :run_key");
  query.Bind(":run_key", run_key);
  query.Step();
  return query.Text(0);
}

int64_t SqliteStateStore::PurgeTicks(TickStatus status, const std::string& evaluated_before) {
  std::lock_guard lock(mutex_);
  SqliteStatement remove(db_, kServing, "purge old ticks",
                         "DELETE FROM ticks WHERE status = :status AND evaluated_at < :before");
  remove.Bind(":status", TickStatusName(status)).Bind(":before", evaluated_before);
  return remove.Execute();
}

DaemonLease SqliteStateStore::AcquireDaemonLease(int64_t pid, int64_t start_time, const std::string& now,
                                                 const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  const std::string action = "acquire the daemon lease";
  SqliteTransaction transaction(db_, kServing, action);
  SqliteStatement query(db_, kServing, action, "SELECT pid, pid_start_time, heartbeat_at FROM daemon_lease");
  DaemonLease lease;
  bool take = true;
  if (query.Step()) {
    lease.holder_pid = query.Int(0);
    lease.holder_start_time = query.Int(1);
    lease.heartbeat_at = query.Text(2);
    const bool mine = lease.holder_pid == pid && lease.holder_start_time == start_time;
    const bool holder_alive = ProcessStartTime(lease.holder_pid) == lease.holder_start_time;
    take = mine || !holder_alive || lease.heartbeat_at < stale_before;
  }
  if (!take) return lease;  // the transaction rolls back: nothing changed
  SqliteStatement upsert(db_, kServing, action,
                         "INSERT INTO daemon_lease (lease, pid, pid_start_time, heartbeat_at) "
                         "VALUES (1, :pid, :start_time, :now) ON CONFLICT (lease) DO UPDATE SET pid = excluded.pid, "
                         "pid_start_time = excluded.pid_start_time, heartbeat_at = excluded.heartbeat_at");
  upsert.Bind(":pid", pid).Bind(":start_time", start_time).Bind(":now", now);
  upsert.Execute();
  transaction.Commit();
  return DaemonLease{true, pid, start_time, now};
}

void SqliteStateStore::ReleaseDaemonLease(int64_t pid, int64_t start_time) {
  std::lock_guard lock(mutex_);
  SqliteStatement remove(db_, kServing, "release the daemon lease",
                         "DELETE FROM daemon_lease WHERE pid = :pid AND pid_start_time = :start_time");
  remove.Bind(":pid", pid).Bind(":start_time", start_time);
  remove.Execute();
}

int64_t SqliteStateStore::RecordAssetMaterialization(const AssetMaterializationRecord& record) {
  std::lock_guard lock(mutex_);
  SqliteStatement insert(db_, kServing, "record a materialization of " + record.asset,
                         "INSERT INTO asset_materializations (asset, \"partition\", run_id, at, metadata) "
                         "VALUES (:asset, :partition, :run_id, :at, :metadata)");
  insert.Bind(":asset", record.asset)
      .Bind(":partition", record.partition)
      .Bind(":run_id", record.run_id)
      .Bind(":at", record.at)
      .Bind(":metadata", record.metadata.is_null() ? std::string("{}") : record.metadata.dump());
  insert.Execute();
  return sqlite3_last_insert_rowid(db_);
}

std::optional<AssetMaterializationRecord> SqliteStateStore::LatestAssetMaterialization(const std::string& asset,
                                                                                        int64_t after) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read the latest materialization of " + asset,
                        std::string(kAssetMaterializationColumns) +
                            " WHERE asset = :asset AND sequence > :after ORDER BY sequence DESC LIMIT 1");
  query.Bind(":asset", asset).Bind(":after", after);
  if (!query.Step()) return std::nullopt;
  return ReadAssetMaterialization(db_, query);
}

std::vector<AssetMaterializationRecord> SqliteStateStore::RecentAssetMaterializations(const std::string& asset,
                                                                                      int limit) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read the materializations of " + asset,
                        std::string(kAssetMaterializationColumns) +
                            " WHERE asset = :asset ORDER BY sequence DESC LIMIT :limit");
  query.Bind(":asset", asset).Bind(":limit", int64_t{limit});
  std::vector<AssetMaterializationRecord> records;
  while (query.Step()) records.push_back(ReadAssetMaterialization(db_, query));
  std::reverse(records.begin(), records.end());
  return records;
}

int64_t SqliteStateStore::LastAssetSequence() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read the last materialization sequence",
                        "SELECT COALESCE(MAX(sequence), 0) FROM asset_materializations");
  query.Step();
  return query.Int(0);
}

std::vector<AssetMaterializationRecord> SqliteStateStore::LatestAssetMaterializations() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read the latest materialization of every asset",
                        std::string(kAssetMaterializationColumns) +
                            " WHERE sequence IN (SELECT MAX(sequence) FROM asset_materializations GROUP BY asset)"
                            " ORDER BY asset");
  std::vector<AssetMaterializationRecord> records;
  while (query.Step()) records.push_back(ReadAssetMaterialization(db_, query));
  return records;
}

}  // namespace sluice
