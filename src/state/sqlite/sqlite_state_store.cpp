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

constexpr const char* kSelectRuns =
    "SELECT run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, "
    "pid, pid_start_time, error FROM runs ";

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
        "SELECT run_id, pid, pid_start_time FROM runs WHERE status IN (:queued, :started)");
    unfinished.Bind(":queued", RunStatusName(RunStatus::kQueued))
        .Bind(":started", RunStatusName(RunStatus::kStarted));
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
      "started_at, finished_at, pid, pid_start_time, error) "
      "VALUES (:run_id, :selection, :partition_start, :partition_end, :status, :created_at, "
      ":started_at, :finished_at, :pid, :pid_start_time, :error)");
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
      .Bind(":error", run.error);
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
