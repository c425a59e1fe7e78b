#include "state/postgres/postgres_state_store.hpp"

#include <unistd.h>

#include <utility>

#include "core/diagnostic.hpp"
#include "state/postgres/postgres_migrations.hpp"
#include "state/postgres/postgres_rows.hpp"

namespace sluice {

using pg_rows::Int;
using pg_rows::kSelectRuns;
using pg_rows::LimitParam;
using pg_rows::OptionalText;
using pg_rows::Param;
using pg_rows::Row;
using pg_rows::RunFromRow;
using pg_rows::RunsFromResult;
using pg_rows::Text;

namespace {

constexpr const char* kProcessDied = "process died";

// After an UPDATE guarded by the run's status changed nothing: the run is missing or in the wrong state.
[[noreturn]] void ThrowTransitionRefused(const PostgresStoreConnection& db, pg::Connection& connection,
                                         const std::string& run_id, const std::string& wanted) {
  pg::Result status = connection.Exec("SELECT status FROM runs WHERE run_id = $1", {run_id});
  if (status.rows.empty()) throw db.StateError("SLU-STATE-004", "there is no run " + run_id);
  throw db.StateError("SLU-STATE-005",
                      "run " + run_id + " is " + Text(status.rows[0], 0) + " and cannot become " + wanted);
}

}  // namespace

std::unique_ptr<PostgresStateStore> PostgresStateStore::Open(const std::string& url) {
  return Open(url, SystemClock());
}

std::unique_ptr<PostgresStateStore> PostgresStateStore::Open(const std::string& url, const Clock& clock) {
  auto db = std::make_unique<PostgresStoreConnection>(url, "sluice state");
  const std::string now = FormatUtc(clock.Now());
  db->Write(
      "migrate the state database",
      [&](pg::Connection& connection) { MigratePostgresSchema(connection, now, db->redacted_url()); },
      PgStage::kOpening);
  std::unique_ptr<PostgresStateStore> store(new PostgresStateStore(std::move(db)));
  store->MarkDeadRuns(now);
  return store;
}

PostgresStateStore::PostgresStateStore(std::unique_ptr<PostgresStoreConnection> connection)
    : db_(std::move(connection)) {}

PostgresStateStore::~PostgresStateStore() = default;

int PostgresStateStore::SchemaVersion() {
  std::lock_guard lock(mutex_);
  return db_->Read("read the schema version",
                   [](pg::Connection& connection) { return PostgresSchemaVersion(connection); });
}

int PostgresStateStore::BackendPid() {
  std::lock_guard lock(mutex_);
  return db_->Read("read the backend pid", [](pg::Connection& connection) {
    return static_cast<int>(std::stol(connection.Exec("SELECT pg_backend_pid()").Scalar().value_or("0")));
  });
}

int PostgresStateStore::MarkDeadRuns(const std::string& now) {
  std::lock_guard lock(mutex_);
  // Without a readable /proc every owner would look dead, even this process: judge none.
  if (ProcessStartTime(getpid()) == 0) return 0;
  return db_->Write("mark runs of dead processes as failed", [&](pg::Connection& connection) {
    pg::Result unfinished = connection.Exec(
        "SELECT run_id, pid, pid_start_time FROM runs WHERE (status = 'STARTED' OR (status = 'QUEUED' AND pid <> 0)) "
        "AND host IN ('', $1) AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.host = runs.host AND w.pid = runs.pid "
        "AND w.pid_start_time = runs.pid_start_time)",
        {HostName()});
    int marked = 0;
    for (const Row& row : unfinished.rows) {
      const int64_t pid = Int(row, 1);
      const int64_t start_time = ProcessStartTime(pid);
      if (start_time != 0 && start_time == Int(row, 2)) continue;
      // Guarded on owner and status: another process opening the store may have marked the run meanwhile.
      marked += static_cast<int>(
          connection
              .Exec("UPDATE runs SET status = 'FAILURE', error = $1, finished_at = $2 WHERE run_id = $3 AND pid = $4 "
                    "AND pid_start_time = $5 AND status IN ('QUEUED', 'STARTED')",
                    {kProcessDied, now, Text(row, 0), Param(pid), Text(row, 2)})
              .affected);
    }
    return marked;
  });
}

void PostgresStateStore::CreateRun(const RunRecord& run) {
  std::lock_guard lock(mutex_);
  if (run.status != RunStatus::kQueued) {
    throw db_->StateError("SLU-STATE-005", "run " + run.run_id + " cannot be created as " + RunStatusName(run.status) +
                                               "; a new run is QUEUED");
  }
  db_->Write("create run " + run.run_id, [&](pg::Connection& connection) {
    try {
      connection.Exec(
          "INSERT INTO runs (run_id, selection, partition_start, partition_end, status, created_at, started_at, "
          "finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) "
          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14::jsonb, $15)",
          {run.run_id, run.selection, run.partition_start, run.partition_end, RunStatusName(run.status), run.created_at,
           run.started_at, run.finished_at, Param(run.pid), Param(run.pid_start_time), run.error, run.backfill_id,
           run.job, nlohmann::json(run.tags).dump(), run.host});
    } catch (const pg::PgError& error) {
      if (error.sqlstate() != pg::kUniqueViolation) throw;
      throw db_->StateError("SLU-STATE-002", "a run with id " + run.run_id + " exists",
                            "run ids are unique; a new run needs a new id");
    }
  });
}

void PostgresStateStore::MarkStarted(const std::string& run_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  db_->Write("mark run " + run_id + " started", [&](pg::Connection& connection) {
    pg::Result update = connection.Exec(
        "UPDATE runs SET status = 'STARTED', started_at = $1 WHERE run_id = $2 AND status = 'QUEUED'", {at, run_id});
    if (update.affected == 0) ThrowTransitionRefused(*db_, connection, run_id, RunStatusName(RunStatus::kStarted));
  });
}

void PostgresStateStore::FinishRun(const std::string& run_id, RunStatus status, const std::string& at,
                                   const std::string& error) {
  std::lock_guard lock(mutex_);
  if (!IsTerminal(status)) {
    throw db_->StateError("SLU-STATE-005", "run " + run_id + " cannot finish as " + RunStatusName(status) +
                                               "; a run finishes as SUCCESS, FAILURE or CANCELED");
  }
  db_->Write("finish run " + run_id, [&](pg::Connection& connection) {
    pg::Result update = connection.Exec(
        "UPDATE runs SET status = $1, finished_at = $2, error = $3 WHERE run_id = $4 AND status IN ('QUEUED', "
        "'STARTED')",
        {RunStatusName(status), at, error, run_id});
    if (update.affected == 0) ThrowTransitionRefused(*db_, connection, run_id, RunStatusName(status));
  });
}

std::optional<RunRecord> PostgresStateStore::GetRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return db_->Read("read run " + run_id, [&](pg::Connection& connection) -> std::optional<RunRecord> {
    pg::Result result = connection.Exec(kSelectRuns + "WHERE run_id = $1", {run_id});
    if (result.rows.empty()) return std::nullopt;
    return RunFromRow(*db_, result.rows[0]);
  });
}

std::vector<RunRecord> PostgresStateStore::ListRuns(int limit) {
  std::lock_guard lock(mutex_);
  return db_->Read("list runs", [&](pg::Connection& connection) {
    return RunsFromResult(
        *db_, connection.Exec(kSelectRuns + "ORDER BY created_at DESC, run_id DESC LIMIT $1", {LimitParam(limit)}));
  });
}

std::vector<RunRecord> PostgresStateStore::RunsOfBackfill(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  return db_->Read("list the runs of backfill " + backfill_id, [&](pg::Connection& connection) {
    return RunsFromResult(*db_, connection.Exec(kSelectRuns + "WHERE backfill_id = $1 AND backfill_id <> '' "
                                                              "ORDER BY created_at, run_id",
                                                {backfill_id}));
  });
}

std::vector<RunRecord> PostgresStateStore::RunsOfJob(const std::string& job, int limit) {
  std::lock_guard lock(mutex_);
  return db_->Read("list the runs of job " + job, [&](pg::Connection& connection) {
    return RunsFromResult(*db_, connection.Exec(kSelectRuns + "WHERE job = $1 AND job <> '' "
                                                              "ORDER BY created_at DESC, run_id DESC LIMIT $2",
                                                {job, LimitParam(limit)}));
  });
}

std::vector<RunRecord> PostgresStateStore::UnclaimedQueuedRuns() {
  std::lock_guard lock(mutex_);
  return db_->Read("list the queued runs", [&](pg::Connection& connection) {
    return RunsFromResult(
        *db_, connection.Exec(kSelectRuns + "WHERE status = 'QUEUED' AND pid = 0 ORDER BY created_at, run_id"));
  });
}

bool PostgresStateStore::StartQueuedRun(const std::string& run_id, int64_t pid, int64_t pid_start_time,
                                        const std::string& at) {
  std::lock_guard lock(mutex_);
  return db_->Write("start queued run " + run_id, [&](pg::Connection& connection) {
    pg::Result update = connection.Exec(
        "UPDATE runs SET status = 'STARTED', started_at = $1, pid = $2, pid_start_time = $3, host = $4 "
        "WHERE run_id = $5 AND status = 'QUEUED' AND pid = 0",
        {at, Param(pid), Param(pid_start_time), HostName(), run_id});
    if (update.affected == 1) return true;
    if (connection.Exec("SELECT 1 FROM runs WHERE run_id = $1", {run_id}).rows.empty()) {
      throw db_->StateError("SLU-STATE-004", "no run with id " + run_id);
    }
    return false;
  });
}

void PostgresStateStore::Append(const std::string& run_id, const std::string& at, const RunEvent& event) {
  const std::string kind = EventKindName(event);
  const std::string payload = EventToJson(event).dump();
  std::lock_guard lock(mutex_);
  db_->Write("append a " + kind + " event to run " + run_id, [&](pg::Connection& connection) {
    connection.Exec("INSERT INTO events (run_id, at, kind, payload) VALUES ($1, $2, $3, $4::jsonb)",
                    {run_id, at, kind, payload});
  });
}

std::vector<StoredEvent> PostgresStateStore::EventsForRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return db_->Read("read the events of run " + run_id, [&](pg::Connection& connection) {
    pg::Result result = connection.Exec(
        "SELECT sequence, run_id, at, kind, payload::text FROM events WHERE run_id = $1 ORDER BY sequence", {run_id});
    std::vector<StoredEvent> events;
    events.reserve(result.rows.size());
    for (const Row& row : result.rows) {
      const int64_t sequence = Int(row, 0);
      nlohmann::json payload = nlohmann::json::parse(Text(row, 4), nullptr, /*allow_exceptions=*/false);
      try {
        events.push_back(StoredEvent{sequence, Text(row, 1), Text(row, 2), EventFromJson(Text(row, 3), payload)});
      } catch (const std::invalid_argument& error) {
        throw db_->StateError(
            "SLU-STATE-006",
            "event " + std::to_string(sequence) + " of run " + run_id + " cannot be read: " + error.what(),
            "the database was probably written by a newer Sluice");
      }
    }
    return events;
  });
}

void PostgresStateStore::RecordMaterializations(const std::vector<MaterializationRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  db_->Write("record " + std::to_string(records.size()) + " materialization(s)", [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    for (const MaterializationRecord& record : records) {
      connection.Exec(
          "INSERT INTO materializations (asset, \"partition\", run_id, row_count, sql_hash, written_at) "
          "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (asset, \"partition\") DO UPDATE SET run_id = excluded.run_id, "
          "row_count = excluded.row_count, sql_hash = excluded.sql_hash, written_at = excluded.written_at",
          {record.asset, record.partition, record.run_id, Param(record.rows), record.sql_hash, record.written_at});
    }
    transaction.Commit();
  });
}

std::vector<MaterializationRecord> PostgresStateStore::LatestMaterializations() {
  std::lock_guard lock(mutex_);
  return db_->Read("read materializations", [&](pg::Connection& connection) {
    pg::Result result = connection.Exec(
        "SELECT asset, \"partition\", run_id, row_count, sql_hash, written_at FROM materializations "
        "ORDER BY asset, \"partition\"");
    std::vector<MaterializationRecord> records;
    for (const Row& row : result.rows) {
      records.push_back(
          MaterializationRecord{Text(row, 0), Text(row, 1), Text(row, 2), Int(row, 3), Text(row, 4), Text(row, 5)});
    }
    return records;
  });
}

bool PostgresStateStore::HasMaterializations() {
  std::lock_guard lock(mutex_);
  return db_->Read("read materializations", [&](pg::Connection& connection) {
    return connection.Exec("SELECT EXISTS (SELECT 1 FROM materializations)").Scalar() == "t";
  });
}

// ---- backfills ----

namespace {

constexpr const char* kSelectBackfills =
    "SELECT backfill_id, created_at, selection, partition_from, partition_to, status, pid, pid_start_time, "
    "max_concurrent_runs, finished_at, error FROM backfills ";

BackfillRecord BackfillFromRow(const PostgresStoreConnection& db, const Row& row) {
  BackfillRecord backfill;
  backfill.backfill_id = Text(row, 0);
  backfill.created_at = Text(row, 1);
  backfill.selection = Text(row, 2);
  backfill.partition_from = Text(row, 3);
  backfill.partition_to = Text(row, 4);
  const std::string status = Text(row, 5);
  std::optional<BackfillStatus> parsed = ParseBackfillStatus(status);
  if (!parsed) {
    throw db.StateError("SLU-STATE-006",
                        "backfill " + backfill.backfill_id + " has an unknown status \"" + status + "\"",
                        "the database was probably written by a newer Sluice");
  }
  backfill.status = *parsed;
  backfill.pid = Int(row, 6);
  backfill.pid_start_time = Int(row, 7);
  backfill.max_concurrent_runs = static_cast<int>(Int(row, 8));
  backfill.finished_at = OptionalText(row, 9);
  backfill.error = Text(row, 10);
  return backfill;
}

// Reads the chunks of `backfill` into it, by index.
void ReadChunks(const PostgresStoreConnection& db, pg::Connection& connection, BackfillRecord& backfill) {
  pg::Result result = connection.Exec(
      "SELECT chunk_index, partition_start, partition_end, assets::text, status, run_id FROM backfill_chunks "
      "WHERE backfill_id = $1 ORDER BY chunk_index",
      {backfill.backfill_id});
  for (const Row& row : result.rows) {
    BackfillChunk chunk;
    chunk.index = static_cast<int>(Int(row, 0));
    chunk.partition_start = OptionalText(row, 1);
    chunk.partition_end = OptionalText(row, 2);
    nlohmann::json assets = nlohmann::json::parse(Text(row, 3), nullptr, /*allow_exceptions=*/false);
    const std::string status = Text(row, 4);
    std::optional<ChunkStatus> parsed = ParseChunkStatus(status);
    if (!assets.is_array() || !parsed) {
      throw db.StateError("SLU-STATE-006",
                          "chunk " + std::to_string(chunk.index) + " of backfill " + backfill.backfill_id +
                              " cannot be read (status \"" + status + "\")",
                          "the database was probably written by a newer Sluice");
    }
    for (const nlohmann::json& asset : assets) {
      if (asset.is_string()) chunk.assets.push_back(asset.get<std::string>());
    }
    chunk.status = *parsed;
    chunk.run_id = Text(row, 5);
    backfill.chunks.push_back(std::move(chunk));
  }
}

[[noreturn]] void ThrowNoBackfill(const PostgresStoreConnection& db, const std::string& backfill_id) {
  throw db.StateError("SLU-STATE-008", "there is no backfill " + backfill_id, "list backfills with `sluice backfills`");
}

}  // namespace

void PostgresStateStore::CreateBackfill(const BackfillRecord& backfill) {
  std::lock_guard lock(mutex_);
  db_->Write("create backfill " + backfill.backfill_id, [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    try {
      connection.Exec(
          "INSERT INTO backfills (backfill_id, created_at, selection, partition_from, partition_to, status, pid, "
          "pid_start_time, max_concurrent_runs, finished_at, error) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
          "$11)",
          {backfill.backfill_id, backfill.created_at, backfill.selection, backfill.partition_from,
           backfill.partition_to, BackfillStatusName(backfill.status), Param(backfill.pid),
           Param(backfill.pid_start_time), Param(backfill.max_concurrent_runs), backfill.finished_at, backfill.error});
    } catch (const pg::PgError& error) {
      if (error.sqlstate() != pg::kUniqueViolation) throw;
      throw db_->StateError("SLU-STATE-007", "a backfill with id " + backfill.backfill_id + " exists");
    }
    for (const BackfillChunk& chunk : backfill.chunks) {
      connection.Exec(
          "INSERT INTO backfill_chunks (backfill_id, chunk_index, partition_start, partition_end, assets, status, "
          "run_id) VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)",
          {backfill.backfill_id, Param(chunk.index), chunk.partition_start, chunk.partition_end,
           nlohmann::json(chunk.assets).dump(), ChunkStatusName(chunk.status), chunk.run_id});
    }
    transaction.Commit();
  });
}

std::optional<BackfillRecord> PostgresStateStore::GetBackfill(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  return db_->Read("read backfill " + backfill_id, [&](pg::Connection& connection) -> std::optional<BackfillRecord> {
    // One snapshot for the backfill and its chunks.
    PgTransaction transaction(connection);
    pg::Result result = connection.Exec(std::string(kSelectBackfills) + "WHERE backfill_id = $1", {backfill_id});
    if (result.rows.empty()) return std::nullopt;
    BackfillRecord backfill = BackfillFromRow(*db_, result.rows[0]);
    ReadChunks(*db_, connection, backfill);
    return backfill;
  });
}

std::vector<BackfillRecord> PostgresStateStore::ListBackfills(int limit) {
  std::lock_guard lock(mutex_);
  return db_->Read("list backfills", [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    pg::Result result = connection.Exec(
        std::string(kSelectBackfills) + "ORDER BY created_at DESC, backfill_id DESC LIMIT $1", {LimitParam(limit)});
    std::vector<BackfillRecord> backfills;
    for (const Row& row : result.rows) backfills.push_back(BackfillFromRow(*db_, row));
    for (BackfillRecord& backfill : backfills) ReadChunks(*db_, connection, backfill);
    return backfills;
  });
}

void PostgresStateStore::SetBackfillStatus(const std::string& backfill_id, BackfillStatus status, const std::string& at,
                                           const std::string& error) {
  std::lock_guard lock(mutex_);
  db_->Write("set the status of backfill " + backfill_id, [&](pg::Connection& connection) {
    pg::Result update = connection.Exec(
        "UPDATE backfills SET status = $1, finished_at = $2, error = $3 WHERE backfill_id = $4 "
        "AND status IN ('REQUESTED', 'CANCELING')",
        {BackfillStatusName(status), IsTerminal(status) ? std::optional<std::string>(at) : std::nullopt, error,
         backfill_id});
    if (update.affected > 0) return;
    pg::Result current = connection.Exec("SELECT status FROM backfills WHERE backfill_id = $1", {backfill_id});
    if (current.rows.empty()) ThrowNoBackfill(*db_, backfill_id);
    throw db_->StateError("SLU-STATE-005",
                          "backfill " + backfill_id + " is " + Text(current.rows[0], 0) + " and cannot become " +
                              BackfillStatusName(status),
                          "a finished backfill changes only when it is resumed");
  });
}

BackfillStatus PostgresStateStore::RequestCancel(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  return db_->Write("request the cancel of backfill " + backfill_id, [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    connection.Exec("UPDATE backfills SET status = 'CANCELING' WHERE backfill_id = $1 AND status = 'REQUESTED'",
                    {backfill_id});
    pg::Result current = connection.Exec("SELECT status FROM backfills WHERE backfill_id = $1", {backfill_id});
    if (current.rows.empty()) ThrowNoBackfill(*db_, backfill_id);
    std::optional<BackfillStatus> status = ParseBackfillStatus(Text(current.rows[0], 0));
    if (!status) throw db_->StateError("SLU-STATE-006", "backfill " + backfill_id + " has an unknown status");
    transaction.Commit();
    return *status;
  });
}

bool PostgresStateStore::ClaimBackfill(const std::string& backfill_id, int64_t expected_pid,
                                       int64_t expected_start_time, int64_t pid, int64_t pid_start_time) {
  std::lock_guard lock(mutex_);
  return db_->Write("claim backfill " + backfill_id, [&](pg::Connection& connection) {
    pg::Result update = connection.Exec(
        "UPDATE backfills SET pid = $1, pid_start_time = $2, status = 'REQUESTED', finished_at = NULL, error = '' "
        "WHERE backfill_id = $3 AND pid = $4 AND pid_start_time = $5",
        {Param(pid), Param(pid_start_time), backfill_id, Param(expected_pid), Param(expected_start_time)});
    if (update.affected > 0) return true;
    if (connection.Exec("SELECT 1 FROM backfills WHERE backfill_id = $1", {backfill_id}).rows.empty()) {
      ThrowNoBackfill(*db_, backfill_id);
    }
    return false;
  });
}

void PostgresStateStore::UpdateChunk(const std::string& backfill_id, int index, ChunkStatus status,
                                     const std::string& run_id) {
  std::lock_guard lock(mutex_);
  db_->Write("update chunk " + std::to_string(index) + " of backfill " + backfill_id, [&](pg::Connection& connection) {
    pg::Result update = connection.Exec(
        "UPDATE backfill_chunks SET status = $1, run_id = $2 WHERE backfill_id = $3 AND chunk_index = $4",
        {ChunkStatusName(status), run_id, backfill_id, Param(index)});
    if (update.affected == 0) {
      throw db_->StateError("SLU-STATE-008", "backfill " + backfill_id + " has no chunk " + std::to_string(index));
    }
  });
}

void PostgresStateStore::RecordPartitionStatuses(const std::vector<PartitionStatusRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  db_->Write("record " + std::to_string(records.size()) + " partition status(es)", [&](pg::Connection& connection) {
    PgTransaction transaction(connection);
    for (const PartitionStatusRecord& record : records) {
      connection.Exec(
          "INSERT INTO partition_status (asset, \"partition\", status, run_id, backfill_id, at) "
          "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (asset, \"partition\") DO UPDATE SET status = excluded.status, "
          "run_id = excluded.run_id, backfill_id = excluded.backfill_id, at = excluded.at",
          {record.asset, record.partition, PartitionStateName(record.state), record.run_id, record.backfill_id,
           record.at});
    }
    transaction.Commit();
  });
}

std::vector<PartitionStatusRecord> PostgresStateStore::PartitionStatuses() {
  std::lock_guard lock(mutex_);
  return db_->Read("read partition statuses", [&](pg::Connection& connection) {
    pg::Result result = connection.Exec(
        "SELECT asset, \"partition\", status, run_id, backfill_id, at FROM partition_status "
        "ORDER BY asset, \"partition\"");
    std::vector<PartitionStatusRecord> records;
    for (const Row& row : result.rows) {
      std::optional<PartitionState> state = ParsePartitionState(Text(row, 2));
      if (!state) throw db_->StateError("SLU-STATE-006", "a partition status \"" + Text(row, 2) + "\" is unknown");
      records.push_back(
          PartitionStatusRecord{Text(row, 0), Text(row, 1), *state, Text(row, 3), Text(row, 4), Text(row, 5)});
    }
    return records;
  });
}

}  // namespace sluice
