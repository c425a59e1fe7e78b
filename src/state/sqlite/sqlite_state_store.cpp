#include "state/sqlite/sqlite_state_store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include "core/diagnostic.hpp"
#include "state/sqlite/sqlite_migrations.hpp"
#include "state/sqlite/sqlite_statement.hpp"

namespace sluice {

namespace {

constexpr SqliteStage kServing = SqliteStage::kServing;
constexpr std::string_view kProcessDied = "process died";

struct ConnectionCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
using OwnedConnection = std::unique_ptr<sqlite3, ConnectionCloser>;

constexpr const char* kSelectBackfills =
    "SELECT backfill_id, created_at, selection, partition_from, partition_to, status, pid, pid_start_time, "
    "max_concurrent_runs, finished_at, error FROM backfills ";

constexpr const char* kSelectRuns =
    "SELECT run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, "
    "pid, pid_start_time, error, backfill_id, job, tags, host FROM runs ";

RunRecord RunFromRow(sqlite3* db, const SqliteStatement& row) {
  RunRecord run;
  run.run_id = row.Text(0);
  run.selection = row.Text(1);
  run.partition_start = row.OptionalText(2);
  run.partition_end = row.OptionalText(3);
  std::string status = row.Text(4);
  std::optional<RunStatus> parsed = ParseRunStatus(status);
  if (!parsed) {
    throw StateError(db, "SLU-STATE-006", "run " + run.run_id + " has an unknown status \"" + status + "\"",
                     "the file was probably written by a newer Sluice");
  }
  run.status = *parsed;
  run.created_at = row.Text(5);
  run.started_at = row.OptionalText(6);
  run.finished_at = row.OptionalText(7);
  run.pid = row.Int(8);
  run.pid_start_time = row.Int(9);
  run.error = row.Text(10);
  run.backfill_id = row.Text(11);
  run.job = row.Text(12);
  nlohmann::json tags = nlohmann::json::parse(row.Text(13), nullptr, /*allow_exceptions=*/false);
  if (!tags.is_object()) throw StateError(db, "SLU-STATE-006", "run " + run.run_id + " has tags that are not an object");
  for (const auto& [key, value] : tags.items()) {
    if (!value.is_string()) throw StateError(db, "SLU-STATE-006", "run " + run.run_id + " has a tag that is not text");
    run.tags[key] = value.get<std::string>();
  }
  run.host = row.Text(14);
  return run;
}

// Reads the current status of `run_id`; nullopt when there is no such run.
std::optional<std::string> StoredStatus(sqlite3* db, const std::string& run_id) {
  SqliteStatement query(db, kServing, "read the status of run " + run_id,
                        "SELECT status FROM runs WHERE run_id = :run_id");
  query.Bind(":run_id", run_id);
  if (!query.Step()) return std::nullopt;
  return query.Text(0);
}

// After an UPDATE guarded by the run's status changed nothing: the run is missing or in the wrong state.
[[noreturn]] void ThrowTransitionRefused(sqlite3* db, const std::string& run_id, const std::string& wanted) {
  std::optional<std::string> status = StoredStatus(db, run_id);
  if (!status) throw StateError(db, "SLU-STATE-004", "there is no run " + run_id);
  throw StateError(db, "SLU-STATE-005", "run " + run_id + " is " + *status + " and cannot become " + wanted);
}

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

  std::unique_ptr<SqliteStateStore> store(new SqliteStateStore(db.release()));
  store->MarkDeadRuns(now);
  return store;
}

SqliteStateStore::SqliteStateStore(sqlite3* db) : db_(db) {}

SqliteStateStore::~SqliteStateStore() { sqlite3_close_v2(db_); }

int SqliteStateStore::SchemaVersion() {
  std::lock_guard lock(mutex_);
  return SqliteSchemaVersion(db_, kServing);
}

int SqliteStateStore::MarkDeadRuns(const std::string& now) {
  std::lock_guard lock(mutex_);
  // Without a readable /proc every owner would look dead, even this process: judge none.
  if (ProcessStartTime(getpid()) == 0) return 0;

  struct Owner {
    std::string run_id;
    int64_t pid;
    int64_t pid_start_time;
  };
  std::vector<Owner> dead;
  {
    SqliteStatement unfinished(
        db_, kServing, "list unfinished runs",
        "SELECT run_id, pid, pid_start_time FROM runs WHERE (status = :started OR (status = :queued AND pid <> 0)) "
        "AND host IN ('', :host) AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.host = runs.host "
        "AND w.pid = runs.pid AND w.pid_start_time = runs.pid_start_time)");
    unfinished.Bind(":queued", RunStatusName(RunStatus::kQueued))
        .Bind(":started", RunStatusName(RunStatus::kStarted))
        .Bind(":host", HostName());
    while (unfinished.Step()) {
      Owner owner{unfinished.Text(0), unfinished.Int(1), unfinished.Int(2)};
      int64_t start_time = ProcessStartTime(owner.pid);
      if (start_time == 0 || start_time != owner.pid_start_time) dead.push_back(std::move(owner));
    }
  }
  if (dead.empty()) return 0;

  // Guarded on owner and status: another process opening the file may have marked the run meanwhile.
  SqliteTransaction transaction(db_, kServing, "mark runs of dead processes as failed");
  SqliteStatement mark(db_, kServing, "mark runs of dead processes as failed",
                       "UPDATE runs SET status = :failure, error = :error, finished_at = :now "
                       "WHERE run_id = :run_id AND pid = :pid AND pid_start_time = :pid_start_time "
                       "AND status IN (:queued, :started)");
  int64_t marked = 0;
  for (const Owner& owner : dead) {
    mark.Bind(":failure", RunStatusName(RunStatus::kFailure))
        .Bind(":error", kProcessDied)
        .Bind(":now", now)
        .Bind(":run_id", owner.run_id)
        .Bind(":pid", owner.pid)
        .Bind(":pid_start_time", owner.pid_start_time)
        .Bind(":queued", RunStatusName(RunStatus::kQueued))
        .Bind(":started", RunStatusName(RunStatus::kStarted));
    marked += mark.Execute();
    mark.Reset();
  }
  transaction.Commit();
  return static_cast<int>(marked);
}

void SqliteStateStore::CreateRun(const RunRecord& run) {
  std::lock_guard lock(mutex_);
  if (run.status != RunStatus::kQueued) {
    throw StateError(
        db_, "SLU-STATE-005",
        "run " + run.run_id + " cannot be created as " + RunStatusName(run.status) + "; a new run is QUEUED");
  }
  SqliteStatement insert(
      db_, kServing, "create run " + run.run_id,
      "INSERT INTO runs (run_id, selection, partition_start, partition_end, status, created_at, "
      "started_at, finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) "
      "VALUES (:run_id, :selection, :partition_start, :partition_end, :status, :created_at, "
      ":started_at, :finished_at, :pid, :pid_start_time, :error, :backfill_id, :job, :tags, :host)");
  insert.Bind(":run_id", run.run_id)
      .Bind(":selection", run.selection)
      .BindNullable(":partition_start", run.partition_start)
      .BindNullable(":partition_end", run.partition_end)
      .Bind(":status", RunStatusName(run.status))
      .Bind(":created_at", run.created_at)
      .BindNullable(":started_at", run.started_at)
      .BindNullable(":finished_at", run.finished_at)
      .Bind(":pid", run.pid)
      .Bind(":pid_start_time", run.pid_start_time)
      .Bind(":error", run.error)
      .Bind(":backfill_id", run.backfill_id)
      .Bind(":job", run.job)
      .Bind(":tags", nlohmann::json(run.tags).dump())
      .Bind(":host", run.host);
  insert.Execute();
}

void SqliteStateStore::MarkStarted(const std::string& run_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  SqliteStatement update(db_, kServing, "mark run " + run_id + " started",
                         "UPDATE runs SET status = :started, started_at = :at WHERE run_id = :run_id "
                         "AND status = :queued");
  update.Bind(":started", RunStatusName(RunStatus::kStarted))
      .Bind(":at", at)
      .Bind(":run_id", run_id)
      .Bind(":queued", RunStatusName(RunStatus::kQueued));
  if (update.Execute() == 0) ThrowTransitionRefused(db_, run_id, RunStatusName(RunStatus::kStarted));
}

void SqliteStateStore::FinishRun(const std::string& run_id, RunStatus status, const std::string& at,
                                 const std::string& error) {
  std::lock_guard lock(mutex_);
  if (!IsTerminal(status)) {
    throw StateError(db_, "SLU-STATE-005",
                     "run " + run_id + " cannot finish as " + RunStatusName(status) +
                         "; a run finishes as SUCCESS, FAILURE or CANCELED");
  }
  SqliteStatement update(db_, kServing, "finish run " + run_id,
                         "UPDATE runs SET status = :status, finished_at = :at, error = :error "
                         "WHERE run_id = :run_id AND status IN (:queued, :started)");
  update.Bind(":status", RunStatusName(status))
      .Bind(":at", at)
      .Bind(":error", error)
      .Bind(":run_id", run_id)
      .Bind(":queued", RunStatusName(RunStatus::kQueued))
      .Bind(":started", RunStatusName(RunStatus::kStarted));
  if (update.Execute() == 0) ThrowTransitionRefused(db_, run_id, RunStatusName(status));
}

std::optional<RunRecord> SqliteStateStore::GetRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read run " + run_id,
                        std::string(kSelectRuns) + "WHERE run_id = :run_id");
  query.Bind(":run_id", run_id);
  if (!query.Step()) return std::nullopt;
  return RunFromRow(db_, query);
}

std::vector<RunRecord> SqliteStateStore::ListRuns(int limit) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list runs",
                        std::string(kSelectRuns) + "ORDER BY created_at DESC, run_id DESC LIMIT :limit");
  // SQLite reads a negative LIMIT as "no limit".
  query.Bind(":limit", int64_t{limit});
  std::vector<RunRecord> runs;
  while (query.Step()) runs.push_back(RunFromRow(db_, query));
  return runs;
}

std::vector<RunRecord> SqliteStateStore::RunsOfJob(const std::string& job, int limit) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list the runs of job " + job,
                        std::string(kSelectRuns) +
                            "WHERE job = :job AND job <> '' ORDER BY created_at DESC, run_id DESC LIMIT :limit");
  query.Bind(":job", job).Bind(":limit", int64_t{limit});
  std::vector<RunRecord> runs;
  while (query.Step()) runs.push_back(RunFromRow(db_, query));
  return runs;
}

std::vector<RunRecord> SqliteStateStore::UnclaimedQueuedRuns() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list the queued runs",
                        std::string(kSelectRuns) + "WHERE status = :queued AND pid = 0 ORDER BY created_at, run_id");
  query.Bind(":queued", RunStatusName(RunStatus::kQueued));
  std::vector<RunRecord> runs;
  while (query.Step()) runs.push_back(RunFromRow(db_, query));
  return runs;
}

bool SqliteStateStore::StartQueuedRun(const std::string& run_id, int64_t pid, int64_t pid_start_time,
                                      const std::string& at) {
  std::lock_guard lock(mutex_);
  SqliteStatement update(db_, kServing, "start queued run " + run_id,
                         "UPDATE runs SET status = :started, started_at = :at, pid = :pid, "
                         "pid_start_time = :pid_start_time, host = :host "
                         "WHERE run_id = :run_id AND status = :queued AND pid = 0");
  update.Bind(":started", RunStatusName(RunStatus::kStarted))
      .Bind(":at", at)
      .Bind(":host", HostName())
      .Bind(":pid", pid)
      .Bind(":pid_start_time", pid_start_time)
      .Bind(":run_id", run_id)
      .Bind(":queued", RunStatusName(RunStatus::kQueued));
  if (update.Execute() == 1) return true;
  SqliteStatement exists(db_, kServing, "read run " + run_id, "SELECT 1 FROM runs WHERE run_id = :run_id");
  exists.Bind(":run_id", run_id);
  if (!exists.Step()) throw StateError(db_, "SLU-STATE-004", "no run with id " + run_id);
  return false;
}

std::vector<RunRecord> SqliteStateStore::RunsOfBackfill(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list the runs of backfill " + backfill_id,
                        std::string(kSelectRuns) +
                            "WHERE backfill_id = :backfill_id AND backfill_id <> '' ORDER BY created_at, run_id");
  query.Bind(":backfill_id", backfill_id);
  std::vector<RunRecord> runs;
  while (query.Step()) runs.push_back(RunFromRow(db_, query));
  return runs;
}

void SqliteStateStore::Append(const std::string& run_id, const std::string& at, const RunEvent& event) {
  std::string kind = EventKindName(event);
  std::string payload = EventToJson(event).dump();
  std::lock_guard lock(mutex_);
  SqliteStatement insert(
      db_, kServing, "append a " + kind + " event to run " + run_id,
      "INSERT INTO events (run_id, at, kind, payload) VALUES (:run_id, :at, :kind, :payload)");
  insert.Bind(":run_id", run_id).Bind(":at", at).Bind(":kind", kind).Bind(":payload", payload);
  insert.Execute();
}

std::vector<StoredEvent> SqliteStateStore::EventsForRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read the events of run " + run_id,
                        "SELECT sequence, run_id, at, kind, payload FROM events WHERE run_id = :run_id "
                        "ORDER BY sequence");
  query.Bind(":run_id", run_id);
  std::vector<StoredEvent> events;
  while (query.Step()) {
    int64_t sequence = query.Int(0);
    std::string kind = query.Text(3);
    nlohmann::json payload = nlohmann::json::parse(query.Text(4), nullptr, /*allow_exceptions=*/false);
    try {
      events.push_back(StoredEvent{sequence, query.Text(1), query.Text(2), EventFromJson(kind, payload)});
    } catch (const std::invalid_argument& error) {
      throw StateError(
          db_, "SLU-STATE-006",
          "event " + std::to_string(sequence) + " of run " + run_id + " cannot be read: " + error.what(),
          "the file was probably written by a newer Sluice");
    }
  }
  return events;
}

void SqliteStateStore::RecordMaterializations(const std::vector<MaterializationRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  std::string action = "record " + std::to_string(records.size()) + " materialization(s)";
  SqliteTransaction transaction(db_, kServing, action);
  SqliteStatement upsert(
      db_, kServing, action,
      "INSERT INTO materializations (asset, \"partition\", run_id, row_count, sql_hash, written_at) "
      "VALUES (:asset, :partition, :run_id, :row_count, :sql_hash, :written_at) "
      "ON CONFLICT (asset, \"partition\") DO UPDATE SET run_id = excluded.run_id, "
      "row_count = excluded.row_count, sql_hash = excluded.sql_hash, "
      "written_at = excluded.written_at");
  for (const MaterializationRecord& record : records) {
    upsert.Bind(":asset", record.asset)
        .Bind(":partition", record.partition)
        .Bind(":run_id", record.run_id)
        .Bind(":row_count", record.rows)
        .Bind(":sql_hash", record.sql_hash)
        .Bind(":written_at", record.written_at);
    upsert.Execute();
    upsert.Reset();
  }
  transaction.Commit();
}

std::vector<MaterializationRecord> SqliteStateStore::LatestMaterializations() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read materializations",
                        "SELECT asset, \"partition\", run_id, row_count, sql_hash, written_at "
                        "FROM materializations ORDER BY asset, \"partition\"");
  std::vector<MaterializationRecord> records;
  while (query.Step()) {
    records.push_back(MaterializationRecord{query.Text(0), query.Text(1), query.Text(2), query.Int(3),
                                            query.Text(4), query.Text(5)});
  }
  return records;
}

bool SqliteStateStore::HasMaterializations() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read materializations",
                        "SELECT EXISTS (SELECT 1 FROM materializations)");
  return query.Step() && query.Int(0) != 0;
}

}  // namespace sluice

namespace sluice {

namespace {

BackfillRecord BackfillFromRow(sqlite3* db, const SqliteStatement& row) {
  BackfillRecord backfill;
  backfill.backfill_id = row.Text(0);
  backfill.created_at = row.Text(1);
  backfill.selection = row.Text(2);
  backfill.partition_from = row.Text(3);
  backfill.partition_to = row.Text(4);
  std::string status = row.Text(5);
  std::optional<BackfillStatus> parsed = ParseBackfillStatus(status);
  if (!parsed) {
    throw StateError(db, "SLU-STATE-006",
                     "backfill " + backfill.backfill_id + " has an unknown status \"" + status + "\"",
                     "the file was probably written by a newer Sluice");
  }
  backfill.status = *parsed;
  backfill.pid = row.Int(6);
  backfill.pid_start_time = row.Int(7);
  backfill.max_concurrent_runs = static_cast<int>(row.Int(8));
  backfill.finished_at = row.OptionalText(9);
  backfill.error = row.Text(10);
  return backfill;
}

// Reads the chunks of `backfill` into it, by index.
void ReadChunks(sqlite3* db, BackfillRecord& backfill) {
  SqliteStatement query(db, kServing, "read the chunks of backfill " + backfill.backfill_id,
                        "SELECT chunk_index, partition_start, partition_end, assets, status, run_id "
                        "FROM backfill_chunks WHERE backfill_id = :backfill_id ORDER BY chunk_index");
  query.Bind(":backfill_id", backfill.backfill_id);
  while (query.Step()) {
    BackfillChunk chunk;
    chunk.index = static_cast<int>(query.Int(0));
    chunk.partition_start = query.OptionalText(1);
    chunk.partition_end = query.OptionalText(2);
    nlohmann::json assets = nlohmann::json::parse(query.Text(3), nullptr, /*allow_exceptions=*/false);
    std::string status = query.Text(4);
    std::optional<ChunkStatus> parsed = ParseChunkStatus(status);
    if (!assets.is_array() || !parsed) {
      throw StateError(db, "SLU-STATE-006",
                       "chunk " + std::to_string(chunk.index) + " of backfill " + backfill.backfill_id +
                           " cannot be read (status \"" + status + "\")",
                       "the file was probably written by a newer Sluice");
    }
    for (const nlohmann::json& asset : assets) {
      if (asset.is_string()) chunk.assets.push_back(asset.get<std::string>());
    }
    chunk.status = *parsed;
    chunk.run_id = query.Text(5);
    backfill.chunks.push_back(std::move(chunk));
  }
}

[[noreturn]] void ThrowNoBackfill(sqlite3* db, const std::string& backfill_id) {
  throw StateError(db, "SLU-STATE-008", "there is no backfill " + backfill_id, "list backfills with `sluice backfills`");
}

}  // namespace

void SqliteStateStore::CreateBackfill(const BackfillRecord& backfill) {
  std::lock_guard lock(mutex_);
  std::string action = "create backfill " + backfill.backfill_id;
  SqliteTransaction transaction(db_, kServing, action);
  {
    SqliteStatement exists(db_, kServing, action, "SELECT 1 FROM backfills WHERE backfill_id = :backfill_id");
    exists.Bind(":backfill_id", backfill.backfill_id);
    if (exists.Step()) throw StateError(db_, "SLU-STATE-007", "a backfill with id " + backfill.backfill_id + " exists");
  }
  SqliteStatement insert(
      db_, kServing, action,
      "INSERT INTO backfills (backfill_id, created_at, selection, partition_from, partition_to, status, pid, "
      "pid_start_time, max_concurrent_runs, finished_at, error) VALUES (:backfill_id, :created_at, :selection, "
      ":partition_from, :partition_to, :status, :pid, :pid_start_time, :max_concurrent_runs, :finished_at, :error)");
  insert.Bind(":backfill_id", backfill.backfill_id)
      .Bind(":created_at", backfill.created_at)
      .Bind(":selection", backfill.selection)
      .Bind(":partition_from", backfill.partition_from)
      .Bind(":partition_to", backfill.partition_to)
      .Bind(":status", BackfillStatusName(backfill.status))
      .Bind(":pid", backfill.pid)
      .Bind(":pid_start_time", backfill.pid_start_time)
      .Bind(":max_concurrent_runs", int64_t{backfill.max_concurrent_runs})
      .BindNullable(":finished_at", backfill.finished_at)
      .Bind(":error", backfill.error);
  insert.Execute();
  SqliteStatement chunk(db_, kServing, action,
                        "INSERT INTO backfill_chunks (backfill_id, chunk_index, partition_start, partition_end, assets, "
                        "status, run_id) VALUES (:backfill_id, :chunk_index, :partition_start, :partition_end, "
                        ":assets, :status, :run_id)");
  for (const BackfillChunk& c : backfill.chunks) {
    chunk.Bind(":backfill_id", backfill.backfill_id)
        .Bind(":chunk_index", int64_t{c.index})
        .BindNullable(":partition_start", c.partition_start)
        .BindNullable(":partition_end", c.partition_end)
        .Bind(":assets", nlohmann::json(c.assets).dump())
        .Bind(":status", ChunkStatusName(c.status))
        .Bind(":run_id", c.run_id);
    chunk.Execute();
    chunk.Reset();
  }
  transaction.Commit();
}

std::optional<BackfillRecord> SqliteStateStore::GetBackfill(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read backfill " + backfill_id,
                        std::string(kSelectBackfills) + "WHERE backfill_id = :backfill_id");
  query.Bind(":backfill_id", backfill_id);
  if (!query.Step()) return std::nullopt;
  BackfillRecord backfill = BackfillFromRow(db_, query);
  ReadChunks(db_, backfill);
  return backfill;
}

std::vector<BackfillRecord> SqliteStateStore::ListBackfills(int limit) {
  std::lock_guard lock(mutex_);
  std::vector<BackfillRecord> backfills;
  {
    SqliteStatement query(db_, kServing, "list backfills",
                          std::string(kSelectBackfills) + "ORDER BY created_at DESC, backfill_id DESC LIMIT :limit");
    query.Bind(":limit", int64_t{limit});
    while (query.Step()) backfills.push_back(BackfillFromRow(db_, query));
  }
  for (BackfillRecord& backfill : backfills) ReadChunks(db_, backfill);
  return backfills;
}

void SqliteStateStore::SetBackfillStatus(const std::string& backfill_id, BackfillStatus status, const std::string& at,
                                         const std::string& error) {
  std::lock_guard lock(mutex_);
  std::string action = "set the status of backfill " + backfill_id;
  SqliteStatement update(db_, kServing, action,
                         "UPDATE backfills SET status = :status, finished_at = :finished_at, error = :error "
                         "WHERE backfill_id = :backfill_id AND status IN (:requested, :canceling)");
  update.Bind(":status", BackfillStatusName(status))
      .BindNullable(":finished_at", IsTerminal(status) ? std::optional<std::string>(at) : std::nullopt)
      .Bind(":error", error)
      .Bind(":backfill_id", backfill_id)
      .Bind(":requested", BackfillStatusName(BackfillStatus::kRequested))
      .Bind(":canceling", BackfillStatusName(BackfillStatus::kCanceling));
  if (update.Execute() > 0) return;
  SqliteStatement query(db_, kServing, action, "SELECT status FROM backfills WHERE backfill_id = :backfill_id");
  query.Bind(":backfill_id", backfill_id);
  if (!query.Step()) ThrowNoBackfill(db_, backfill_id);
  throw StateError(db_, "SLU-STATE-005",
                   "backfill " + backfill_id + " is " + query.Text(0) + " and cannot become " +
                       BackfillStatusName(status),
                   "a finished backfill changes only when it is resumed");
}

BackfillStatus SqliteStateStore::RequestCancel(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  std::string action = "request the cancel of backfill " + backfill_id;
  SqliteTransaction transaction(db_, kServing, action);
  SqliteStatement update(db_, kServing, action,
                         "UPDATE backfills SET status = :canceling WHERE backfill_id = :backfill_id "
                         "AND status = :requested");
  update.Bind(":canceling", BackfillStatusName(BackfillStatus::kCanceling))
      .Bind(":backfill_id", backfill_id)
      .Bind(":requested", BackfillStatusName(BackfillStatus::kRequested));
  update.Execute();
  SqliteStatement query(db_, kServing, action, "SELECT status FROM backfills WHERE backfill_id = :backfill_id");
  query.Bind(":backfill_id", backfill_id);
  if (!query.Step()) ThrowNoBackfill(db_, backfill_id);
  std::optional<BackfillStatus> status = ParseBackfillStatus(query.Text(0));
  if (!status) throw StateError(db_, "SLU-STATE-006", "backfill " + backfill_id + " has an unknown status");
  transaction.Commit();
  return *status;
}

bool SqliteStateStore::ClaimBackfill(const std::string& backfill_id, int64_t expected_pid,
                                     int64_t expected_start_time, int64_t pid, int64_t pid_start_time) {
  std::lock_guard lock(mutex_);
  std::string action = "claim backfill " + backfill_id;
  SqliteStatement update(db_, kServing, action,
                         "UPDATE backfills SET pid = :pid, pid_start_time = :pid_start_time, status = :requested, "
                         "finished_at = NULL, error = '' WHERE backfill_id = :backfill_id AND pid = :expected_pid "
                         "AND pid_start_time = :expected_start_time");
  update.Bind(":pid", pid)
      .Bind(":pid_start_time", pid_start_time)
      .Bind(":requested", BackfillStatusName(BackfillStatus::kRequested))
      .Bind(":backfill_id", backfill_id)
      .Bind(":expected_pid", expected_pid)
      .Bind(":expected_start_time", expected_start_time);
  if (update.Execute() > 0) return true;
  SqliteStatement query(db_, kServing, action, "SELECT 1 FROM backfills WHERE backfill_id = :backfill_id");
  query.Bind(":backfill_id", backfill_id);
  if (!query.Step()) ThrowNoBackfill(db_, backfill_id);
  return false;
}

void SqliteStateStore::UpdateChunk(const std::string& backfill_id, int index, ChunkStatus status,
                                   const std::string& run_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement update(db_, kServing, "update chunk " + std::to_string(index) + " of backfill " + backfill_id,
                         "UPDATE backfill_chunks SET status = :status, run_id = :run_id "
                         "WHERE backfill_id = :backfill_id AND chunk_index = :chunk_index");
  update.Bind(":status", ChunkStatusName(status))
      .Bind(":run_id", run_id)
      .Bind(":backfill_id", backfill_id)
      .Bind(":chunk_index", int64_t{index});
  if (update.Execute() == 0) {
    throw StateError(db_, "SLU-STATE-008",
                     "backfill " + backfill_id + " has no chunk " + std::to_string(index));
  }
}

void SqliteStateStore::RecordPartitionStatuses(const std::vector<PartitionStatusRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  std::string action = "record " + std::to_string(records.size()) + " partition status(es)";
  SqliteTransaction transaction(db_, kServing, action);
  SqliteStatement upsert(
      db_, kServing, action,
      "INSERT INTO partition_status (asset, \"partition\", status, run_id, backfill_id, at) "
      "VALUES (:asset, :partition, :status, :run_id, :backfill_id, :at) "
      "ON CONFLICT (asset, \"partition\") DO UPDATE SET status = excluded.status, run_id = excluded.run_id, "
      "backfill_id = excluded.backfill_id, at = excluded.at");
  for (const PartitionStatusRecord& record : records) {
    upsert.Bind(":asset", record.asset)
        .Bind(":partition", record.partition)
        .Bind(":status", PartitionStateName(record.state))
        .Bind(":run_id", record.run_id)
        .Bind(":backfill_id", record.backfill_id)
        .Bind(":at", record.at);
    upsert.Execute();
    upsert.Reset();
  }
  transaction.Commit();
}

std::vector<PartitionStatusRecord> SqliteStateStore::PartitionStatuses() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "read partition statuses",
                        "SELECT asset, \"partition\", status, run_id, backfill_id, at FROM partition_status "
                        "ORDER BY asset, \"partition\"");
  std::vector<PartitionStatusRecord> records;
  while (query.Step()) {
    std::optional<PartitionState> state = ParsePartitionState(query.Text(2));
    if (!state) throw StateError(db_, "SLU-STATE-006", "a partition status \"" + query.Text(2) + "\" is unknown");
    records.push_back(
        PartitionStatusRecord{query.Text(0), query.Text(1), *state, query.Text(3), query.Text(4), query.Text(5)});
  }
  return records;
}

}  // namespace sluice

namespace sluice {

namespace {

constexpr const char* kSelectWorkers =
    "SELECT worker_id, host, pid, pid_start_time, started_at, heartbeat_at FROM workers ";

// A row of kSelectWorkers.
WorkerRecord WorkerFromRow(const SqliteStatement& row) {
  return WorkerRecord{row.Text(0), row.Text(1), row.Int(2), row.Int(3), row.Text(4), row.Text(5)};
}

bool WorkerRegistered(sqlite3* db, const std::string& worker_id) {
  SqliteStatement query(db, kServing, "read worker " + worker_id, "SELECT 1 FROM workers WHERE worker_id = :id");
  query.Bind(":id", worker_id);
  return query.Step();
}

[[noreturn]] void ThrowWorkerNotRegistered(sqlite3* db, const std::string& worker_id) {
  throw StateError(db, "SLU-STATE-010", "worker " + worker_id + " is not registered",
                   "it was found dead and its runs were taken over; restart the worker");
}

}  // namespace

void SqliteStateStore::RegisterWorker(const WorkerRecord& worker) {
  std::lock_guard lock(mutex_);
  SqliteStatement upsert(db_, kServing, "register worker " + worker.worker_id,
                         "INSERT INTO workers (worker_id, host, pid, pid_start_time, started_at, heartbeat_at) "
                         "VALUES (:id, :host, :pid, :start, :started_at, :heartbeat_at) "
                         "ON CONFLICT (worker_id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at");
  upsert.Bind(":id", worker.worker_id)
      .Bind(":host", worker.host)
      .Bind(":pid", worker.pid)
      .Bind(":start", worker.pid_start_time)
      .Bind(":started_at", worker.started_at)
      .Bind(":heartbeat_at", worker.heartbeat_at);
  upsert.Execute();
}

void SqliteStateStore::HeartbeatWorker(const std::string& worker_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  SqliteStatement update(db_, kServing, "heartbeat worker " + worker_id,
                         "UPDATE workers SET heartbeat_at = :at WHERE worker_id = :id");
  update.Bind(":at", at).Bind(":id", worker_id);
  if (update.Execute() == 0) ThrowWorkerNotRegistered(db_, worker_id);
}

void SqliteStateStore::UnregisterWorker(const std::string& worker_id) {
  std::lock_guard lock(mutex_);
  SqliteStatement remove(db_, kServing, "unregister worker " + worker_id, "DELETE FROM workers WHERE worker_id = :id");
  remove.Bind(":id", worker_id);
  remove.Execute();
}

std::vector<WorkerRecord> SqliteStateStore::ListWorkers() {
  std::lock_guard lock(mutex_);
  SqliteStatement query(db_, kServing, "list workers", std::string(kSelectWorkers) + "ORDER BY worker_id");
  std::vector<WorkerRecord> workers;
  while (query.Step()) workers.push_back(WorkerFromRow(query));
  return workers;
}

std::optional<RunRecord> SqliteStateStore::ClaimQueuedRun(const WorkerRecord& worker, int max_running,
                                                          const std::vector<TagLimit>& limits,
                                                          const std::string& at) {
  std::lock_guard lock(mutex_);
  const std::string action = "claim a queued run for worker " + worker.worker_id;
  // BEGIN IMMEDIATE: the write lock is taken first, so the counts read below hold until the claim commits.
  SqliteTransaction transaction(db_, kServing, action);
  if (!WorkerRegistered(db_, worker.worker_id)) ThrowWorkerNotRegistered(db_, worker.worker_id);
  std::vector<RunRecord> started;
  {
    SqliteStatement query(db_, kServing, action, std::string(kSelectRuns) + "WHERE status = :started");
    query.Bind(":started", RunStatusName(RunStatus::kStarted));
    while (query.Step()) started.push_back(RunFromRow(db_, query));
  }
  const auto mine = std::count_if(started.begin(), started.end(), [&](const RunRecord& run) {
    return run.pid == worker.pid && run.pid_start_time == worker.pid_start_time && run.host == worker.host;
  });
  if (mine >= max_running) return std::nullopt;
  std::optional<RunRecord> chosen;
  {
    SqliteStatement query(db_, kServing, action,
                          std::string(kSelectRuns) +
                              "WHERE status = :queued AND pid = 0 AND job <> '' ORDER BY created_at, run_id");
    query.Bind(":queued", RunStatusName(RunStatus::kQueued));
    while (!chosen && query.Step()) {
      RunRecord candidate = RunFromRow(db_, query);
      if (WithinTagLimits(limits, candidate, started)) chosen = std::move(candidate);
    }
  }
  if (!chosen) return std::nullopt;
  SqliteStatement claim(db_, kServing, action,
                        "UPDATE runs SET status = :started, started_at = :at, pid = :pid, "
                        "pid_start_time = :start, host = :host WHERE run_id = :run_id");
  claim.Bind(":started", RunStatusName(RunStatus::kStarted))
      .Bind(":at", at)
      .Bind(":pid", worker.pid)
      .Bind(":start", worker.pid_start_time)
      .Bind(":host", worker.host)
      .Bind(":run_id", chosen->run_id);
  claim.Execute();
  transaction.Commit();
  chosen->status = RunStatus::kStarted;
  chosen->started_at = at;
  chosen->pid = worker.pid;
  chosen->pid_start_time = worker.pid_start_time;
  chosen->host = worker.host;
  return chosen;
}

std::vector<RunRecord> SqliteStateStore::ReapDeadWorkers(const std::string& stale_before) {
  std::lock_guard lock(mutex_);
  const std::string action = "reap dead workers";
  SqliteTransaction transaction(db_, kServing, action);
  std::vector<WorkerRecord> dead;
  {
    SqliteStatement query(db_, kServing, action, kSelectWorkers);
    const std::string here = HostName();
    // Without a readable /proc every process would look dead, even this one: judge by heartbeats only.
    const bool proc_readable = ProcessStartTime(getpid()) != 0;
    while (query.Step()) {
      WorkerRecord worker = WorkerFromRow(query);
      const bool gone = proc_readable && worker.host == here && ProcessStartTime(worker.pid) != worker.pid_start_time;
      if (gone || worker.heartbeat_at < stale_before) dead.push_back(std::move(worker));
    }
  }
  std::vector<RunRecord> orphaned;
  for (const WorkerRecord& worker : dead) {
    SqliteStatement runs(db_, kServing, action,
                         std::string(kSelectRuns) +
                             "WHERE status = :started AND pid = :pid AND pid_start_time = :start AND host = :host "
                             "ORDER BY created_at, run_id");
    runs.Bind(":started", RunStatusName(RunStatus::kStarted))
        .Bind(":pid", worker.pid)
        .Bind(":start", worker.pid_start_time)
        .Bind(":host", worker.host);
    while (runs.Step()) orphaned.push_back(RunFromRow(db_, runs));
    SqliteStatement remove(db_, kServing, action, "DELETE FROM workers WHERE worker_id = :id");
    remove.Bind(":id", worker.worker_id);
    remove.Execute();
  }
  transaction.Commit();
  return orphaned;
}

}  // namespace sluice
