// SqlStateStore's BackfillStore: backfills, their chunks, and the latest backfill outcome of each asset partition.
#include <nlohmann/json.hpp>

#include "state/sql/sql_state_store.hpp"

namespace sluice {

namespace {

constexpr const char* kSelectBackfills =
    "SELECT backfill_id, created_at, selection, partition_from, partition_to, status, pid, pid_start_time, "
    "max_concurrent_runs, finished_at, error FROM backfills ";

}  // namespace

BackfillRecord SqlStateStore::BackfillFromRow(const SqlRow& row) const {
  BackfillRecord backfill;
  backfill.backfill_id = row.Text(0);
  backfill.created_at = row.Text(1);
  backfill.selection = row.Text(2);
  backfill.partition_from = row.Text(3);
  backfill.partition_to = row.Text(4);
  const std::string status = row.Text(5);
  std::optional<BackfillStatus> parsed = ParseBackfillStatus(status);
  if (!parsed) {
    throw connection_->StateError("SLU-STATE-006",
                                  "backfill " + backfill.backfill_id + " has an unknown status \"" + status + "\"",
                                  NewerSluiceHint());
  }
  backfill.status = *parsed;
  backfill.pid = row.Int(6);
  backfill.pid_start_time = row.Int(7);
  backfill.max_concurrent_runs = static_cast<int>(row.Int(8));
  backfill.finished_at = row.OptionalText(9);
  backfill.error = row.Text(10);
  return backfill;
}

void SqlStateStore::ReadChunks(StateSession& session, BackfillRecord& backfill) const {
  for (const SqlRow& row :
       session.Query("SELECT chunk_index, partition_start, partition_end, assets, status, run_id FROM backfill_chunks "
                     "WHERE backfill_id = ? ORDER BY chunk_index",
                     {backfill.backfill_id})) {
    BackfillChunk chunk;
    chunk.index = static_cast<int>(row.Int(0));
    chunk.partition_start = row.OptionalText(1);
    chunk.partition_end = row.OptionalText(2);
    nlohmann::json assets = nlohmann::json::parse(row.Text(3), nullptr, /*allow_exceptions=*/false);
    const std::string status = row.Text(4);
    std::optional<ChunkStatus> parsed = ParseChunkStatus(status);
    if (!assets.is_array() || !parsed) {
      throw connection_->StateError("SLU-STATE-006",
                                    "chunk " + std::to_string(chunk.index) + " of backfill " + backfill.backfill_id +
                                        " cannot be read (status \"" + status + "\")",
                                    NewerSluiceHint());
    }
    for (const nlohmann::json& asset : assets) {
      if (asset.is_string()) chunk.assets.push_back(asset.get<std::string>());
    }
    chunk.status = *parsed;
    chunk.run_id = row.Text(5);
    backfill.chunks.push_back(std::move(chunk));
  }
}

void SqlStateStore::ThrowNoBackfill(const std::string& backfill_id) const {
  throw connection_->StateError("SLU-STATE-008", "there is no backfill " + backfill_id,
                                "list backfills with `sluice backfills`");
}

void SqlStateStore::CreateBackfill(const BackfillRecord& backfill) {
  std::lock_guard lock(mutex_);
  db().Write("create backfill " + backfill.backfill_id, [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    if (session.Execute("INSERT INTO backfills (backfill_id, created_at, selection, partition_from, partition_to, "
                        "status, pid, pid_start_time, max_concurrent_runs, finished_at, error) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (backfill_id) DO NOTHING",
                        {backfill.backfill_id, backfill.created_at, backfill.selection, backfill.partition_from,
                         backfill.partition_to, BackfillStatusName(backfill.status), backfill.pid,
                         backfill.pid_start_time, backfill.max_concurrent_runs, backfill.finished_at,
                         backfill.error}) == 0) {
      throw db().StateError("SLU-STATE-007", "a backfill with id " + backfill.backfill_id + " exists");
    }
    for (const BackfillChunk& chunk : backfill.chunks) {
      session.Execute(
          "INSERT INTO backfill_chunks (backfill_id, chunk_index, partition_start, partition_end, assets, status, "
          "run_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
          {backfill.backfill_id, chunk.index, chunk.partition_start, chunk.partition_end,
           nlohmann::json(chunk.assets).dump(), ChunkStatusName(chunk.status), chunk.run_id});
    }
    transaction.Commit();
  });
}

std::optional<BackfillRecord> SqlStateStore::GetBackfill(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  return db().Read("read backfill " + backfill_id, [&](StateSession& session) -> std::optional<BackfillRecord> {
    StateTransaction snapshot(session, TransactionKind::kRead);  // the backfill and its chunks at one time
    std::vector<SqlRow> rows = session.Query(std::string(kSelectBackfills) + "WHERE backfill_id = ?", {backfill_id});
    if (rows.empty()) return std::nullopt;
    BackfillRecord backfill = BackfillFromRow(rows[0]);
    ReadChunks(session, backfill);
    return backfill;
  });
}

std::vector<BackfillRecord> SqlStateStore::ListBackfills(int limit) {
  std::lock_guard lock(mutex_);
  return db().Read("list backfills", [&](StateSession& session) {
    StateTransaction snapshot(session, TransactionKind::kRead);
    std::vector<BackfillRecord> backfills;
    for (const SqlRow& row :
         session.Query(std::string(kSelectBackfills) + "ORDER BY created_at DESC, backfill_id DESC LIMIT ?",
                       {LimitValue(limit)})) {
      backfills.push_back(BackfillFromRow(row));
    }
    for (BackfillRecord& backfill : backfills) ReadChunks(session, backfill);
    return backfills;
  });
}

void SqlStateStore::SetBackfillStatus(const std::string& backfill_id, BackfillStatus status, const std::string& at,
                                      const std::string& error) {
  std::lock_guard lock(mutex_);
  db().Write("set the status of backfill " + backfill_id, [&](StateSession& session) {
    if (session.Execute("UPDATE backfills SET status = ?, finished_at = ?, error = ? WHERE backfill_id = ? "
                        "AND status IN ('REQUESTED', 'CANCELING')",
                        {BackfillStatusName(status), IsTerminal(status) ? SqlValue(at) : SqlValue(nullptr), error,
                         backfill_id}) > 0) {
      return;
    }
    std::vector<SqlRow> current = session.Query("SELECT status FROM backfills WHERE backfill_id = ?", {backfill_id});
    if (current.empty()) ThrowNoBackfill(backfill_id);
    throw db().StateError("SLU-STATE-005",
                          "backfill " + backfill_id + " is " + current[0].Text(0) + " and cannot become " +
                              BackfillStatusName(status),
                          "a finished backfill changes only when it is resumed");
  });
}

BackfillStatus SqlStateStore::RequestCancel(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  return db().Write("request the cancel of backfill " + backfill_id, [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    session.Execute("UPDATE backfills SET status = 'CANCELING' WHERE backfill_id = ? AND status = 'REQUESTED'",
                    {backfill_id});
    std::vector<SqlRow> current = session.Query("SELECT status FROM backfills WHERE backfill_id = ?", {backfill_id});
    if (current.empty()) ThrowNoBackfill(backfill_id);
    std::optional<BackfillStatus> status = ParseBackfillStatus(current[0].Text(0));
    if (!status) throw db().StateError("SLU-STATE-006", "backfill " + backfill_id + " has an unknown status");
    transaction.Commit();
    return *status;
  });
}

bool SqlStateStore::ClaimBackfill(const std::string& backfill_id, int64_t expected_pid, int64_t expected_start_time,
                                  int64_t pid, int64_t pid_start_time) {
  std::lock_guard lock(mutex_);
  return db().Write("claim backfill " + backfill_id, [&](StateSession& session) {
    if (session.Execute("UPDATE backfills SET pid = ?, pid_start_time = ?, status = 'REQUESTED', finished_at = NULL, "
                        "error = '' WHERE backfill_id = ? AND pid = ? AND pid_start_time = ?",
                        {pid, pid_start_time, backfill_id, expected_pid, expected_start_time}) > 0) {
      return true;
    }
    if (session.Query("SELECT 1 FROM backfills WHERE backfill_id = ?", {backfill_id}).empty()) {
      ThrowNoBackfill(backfill_id);
    }
    return false;
  });
}

void SqlStateStore::UpdateChunk(const std::string& backfill_id, int index, ChunkStatus status,
                                const std::string& run_id) {
  std::lock_guard lock(mutex_);
  db().Write("update chunk " + std::to_string(index) + " of backfill " + backfill_id, [&](StateSession& session) {
    if (session.Execute("UPDATE backfill_chunks SET status = ?, run_id = ? WHERE backfill_id = ? AND chunk_index = ?",
                        {ChunkStatusName(status), run_id, backfill_id, index}) == 0) {
      throw db().StateError("SLU-STATE-008", "backfill " + backfill_id + " has no chunk " + std::to_string(index));
    }
  });
}

void SqlStateStore::RecordPartitionStatuses(const std::vector<PartitionStatusRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  db().Write("record " + std::to_string(records.size()) + " partition status(es)", [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    for (const PartitionStatusRecord& record : records) {
      session.Execute(
          "INSERT INTO partition_status (asset, \"partition\", status, run_id, backfill_id, at) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (asset, \"partition\") DO UPDATE SET status = excluded.status, "
          "run_id = excluded.run_id, backfill_id = excluded.backfill_id, at = excluded.at",
          {record.asset, record.partition, PartitionStateName(record.state), record.run_id, record.backfill_id,
           record.at});
    }
    transaction.Commit();
  });
}

std::vector<PartitionStatusRecord> SqlStateStore::PartitionStatuses() {
  std::lock_guard lock(mutex_);
  return db().Read("read partition statuses", [&](StateSession& session) {
    std::vector<PartitionStatusRecord> records;
    for (const SqlRow& row : session.Query("SELECT asset, \"partition\", status, run_id, backfill_id, at "
                                           "FROM partition_status ORDER BY asset, \"partition\"")) {
      std::optional<PartitionState> state = ParsePartitionState(row.Text(2));
      if (!state) throw db().StateError("SLU-STATE-006", "a partition status \"" + row.Text(2) + "\" is unknown");
      records.push_back(
          PartitionStatusRecord{row.Text(0), row.Text(1), *state, row.Text(3), row.Text(4), row.Text(5)});
    }
    return records;
  });
}

}  // namespace sluice
