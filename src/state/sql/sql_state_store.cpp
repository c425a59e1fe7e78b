#include "state/sql/sql_state_store.hpp"

#include <unistd.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

namespace sluice {

namespace {

constexpr const char* kProcessDied = "process died";

}  // namespace

const std::string SqlStateStore::kSelectRuns = "SELECT " + std::string(kRunColumns) + " FROM runs ";
const std::string SqlStateStore::kSelectWorkers =
    "SELECT worker_id, host, pid, pid_start_time, started_at, heartbeat_at FROM workers ";

SqlStateStore::SqlStateStore(std::unique_ptr<StateConnection> connection) : connection_(std::move(connection)) {}

SqlStateStore::~SqlStateStore() = default;

std::string SqlStateStore::NewerSluiceHint() const {
  return "the " + std::string(connection_->noun()) + " was probably written by a newer Sluice";
}

RunRecord SqlStateStore::RunFromRow(const SqlRow& row) const {
  RunRecord run;
  run.run_id = row.Text(0);
  run.selection = row.Text(1);
  run.partition_start = row.OptionalText(2);
  run.partition_end = row.OptionalText(3);
  const std::string status = row.Text(4);
  std::optional<RunStatus> parsed = ParseRunStatus(status);
  if (!parsed) {
    throw connection_->StateError("SLU-STATE-006", "run " + run.run_id + " has an unknown status \"" + status + "\"",
                                  NewerSluiceHint());
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
  if (!tags.is_object()) {
    throw connection_->StateError("SLU-STATE-006", "run " + run.run_id + " has tags that are not an object");
  }
  for (const auto& [key, value] : tags.items()) {
    if (!value.is_string()) {
      throw connection_->StateError("SLU-STATE-006", "run " + run.run_id + " has a tag that is not text");
    }
    run.tags[key] = value.get<std::string>();
  }
  run.host = row.Text(14);
  return run;
}

std::vector<RunRecord> SqlStateStore::RunsFromRows(const std::vector<SqlRow>& rows) const {
  std::vector<RunRecord> runs;
  runs.reserve(rows.size());
  for (const SqlRow& row : rows) runs.push_back(RunFromRow(row));
  return runs;
}

WorkerRecord SqlStateStore::WorkerFromRow(const SqlRow& row) {
  return WorkerRecord{row.Text(0), row.Text(1), row.Int(2), row.Int(3), row.Text(4), row.Text(5)};
}

void SqlStateStore::ThrowWorkerNotRegistered(const std::string& worker_id) const {
  throw connection_->StateError("SLU-STATE-010", "worker " + worker_id + " is not registered",
                                "it was found dead and its runs were taken over; restart the worker");
}

void SqlStateStore::ThrowTransitionRefused(StateSession& session, const std::string& run_id,
                                           const std::string& wanted) const {
  std::vector<SqlRow> status = session.Query("SELECT status FROM runs WHERE run_id = ?", {run_id});
  if (status.empty()) throw connection_->StateError("SLU-STATE-004", "there is no run " + run_id);
  throw connection_->StateError("SLU-STATE-005",
                                "run " + run_id + " is " + status[0].Text(0) + " and cannot become " + wanted);
}

int SqlStateStore::SchemaVersion() {
  std::lock_guard lock(mutex_);
  return db().Read("read the schema version", [](StateSession& session) {
    return static_cast<int>(session.Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations").at(0).Int(0));
  });
}

int SqlStateStore::MarkDeadRuns(const std::string& now) {
  std::lock_guard lock(mutex_);
  // Without a readable /proc every owner would look dead, even this process: judge none.
  if (ProcessStartTime(getpid()) == 0) return 0;
  return db().Write("mark runs of dead processes as failed", [&](StateSession& session) {
    std::vector<SqlRow> unfinished = session.Query(
        "SELECT run_id, pid, pid_start_time FROM runs WHERE (status = 'STARTED' OR (status = 'QUEUED' AND pid <> 0)) "
        "AND host IN ('', ?) AND NOT EXISTS (SELECT 1 FROM workers w WHERE w.host = runs.host AND w.pid = runs.pid "
        "AND w.pid_start_time = runs.pid_start_time)",
        {HostName()});
    std::vector<const SqlRow*> dead;
    for (const SqlRow& row : unfinished) {
      const int64_t start_time = ProcessStartTime(row.Int(1));
      if (start_time == 0 || start_time != row.Int(2)) dead.push_back(&row);
    }
    if (dead.empty()) return 0;
    // Guarded on owner and status: another process opening the store may have marked the run meanwhile.
    StateTransaction transaction(session, TransactionKind::kWrite);
    int64_t marked = 0;
    for (const SqlRow* row : dead) {
      marked += session.Execute(
          "UPDATE runs SET status = 'FAILURE', error = ?, finished_at = ? WHERE run_id = ? AND pid = ? "
          "AND pid_start_time = ? AND status IN ('QUEUED', 'STARTED')",
          {kProcessDied, now, row->Text(0), row->Int(1), row->Int(2)});
    }
    transaction.Commit();
    return static_cast<int>(marked);
  });
}

void SqlStateStore::CreateRun(const RunRecord& run) {
  std::lock_guard lock(mutex_);
  if (run.status != RunStatus::kQueued) {
    throw db().StateError("SLU-STATE-005", "run " + run.run_id + " cannot be created as " + RunStatusName(run.status) +
                                               "; a new run is QUEUED");
  }
  const int64_t inserted = db().Write("create run " + run.run_id, [&](StateSession& session) {
    return session.Execute(
        "INSERT INTO runs (run_id, selection, partition_start, partition_end, status, created_at, started_at, "
        "finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id) DO NOTHING",
        {run.run_id, run.selection, run.partition_start, run.partition_end, RunStatusName(run.status), run.created_at,
         run.started_at, run.finished_at, run.pid, run.pid_start_time, run.error, run.backfill_id, run.job,
         nlohmann::json(run.tags).dump(), run.host});
  });
  if (inserted == 0) {
    throw db().StateError("SLU-STATE-002", "a run with id " + run.run_id + " exists",
                          "run ids are unique; a new run needs a new id");
  }
}

void SqlStateStore::MarkStarted(const std::string& run_id, const std::string& at) {
  std::lock_guard lock(mutex_);
  db().Write("mark run " + run_id + " started", [&](StateSession& session) {
    if (session.Execute("UPDATE runs SET status = 'STARTED', started_at = ? WHERE run_id = ? AND status = 'QUEUED'",
                        {at, run_id}) == 0) {
      ThrowTransitionRefused(session, run_id, RunStatusName(RunStatus::kStarted));
    }
  });
}

void SqlStateStore::FinishRun(const std::string& run_id, RunStatus status, const std::string& at,
                              const std::string& error) {
  std::lock_guard lock(mutex_);
  if (!IsTerminal(status)) {
    throw db().StateError("SLU-STATE-005", "run " + run_id + " cannot finish as " + RunStatusName(status) +
                                               "; a run finishes as SUCCESS, FAILURE or CANCELED");
  }
  db().Write("finish run " + run_id, [&](StateSession& session) {
    if (session.Execute("UPDATE runs SET status = ?, finished_at = ?, error = ? WHERE run_id = ? "
                        "AND status IN ('QUEUED', 'STARTED')",
                        {RunStatusName(status), at, error, run_id}) == 0) {
      ThrowTransitionRefused(session, run_id, RunStatusName(status));
    }
  });
}

std::optional<RunRecord> SqlStateStore::GetRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return db().Read("read run " + run_id, [&](StateSession& session) -> std::optional<RunRecord> {
    std::vector<SqlRow> rows = session.Query(kSelectRuns + "WHERE run_id = ?", {run_id});
    if (rows.empty()) return std::nullopt;
    return RunFromRow(rows[0]);
  });
}

std::vector<RunRecord> SqlStateStore::ListRuns(int limit) {
  std::lock_guard lock(mutex_);
  return db().Read("list runs", [&](StateSession& session) {
    return RunsFromRows(
        session.Query(kSelectRuns + "ORDER BY created_at DESC, run_id DESC LIMIT ?", {LimitValue(limit)}));
  });
}

std::vector<RunRecord> SqlStateStore::RunsOfBackfill(const std::string& backfill_id) {
  std::lock_guard lock(mutex_);
  return db().Read("list the runs of backfill " + backfill_id, [&](StateSession& session) {
    return RunsFromRows(session.Query(
        kSelectRuns + "WHERE backfill_id = ? AND backfill_id <> '' ORDER BY created_at, run_id", {backfill_id}));
  });
}

std::vector<RunRecord> SqlStateStore::RunsOfJob(const std::string& job, int limit) {
  std::lock_guard lock(mutex_);
  return db().Read("list the runs of job " + job, [&](StateSession& session) {
    return RunsFromRows(
        session.Query(kSelectRuns + "WHERE job = ? AND job <> '' ORDER BY created_at DESC, run_id DESC LIMIT ?",
                      {job, LimitValue(limit)}));
  });
}

std::vector<RunRecord> SqlStateStore::UnclaimedQueuedRuns() {
  std::lock_guard lock(mutex_);
  return db().Read("list the queued runs", [&](StateSession& session) {
    return RunsFromRows(
        session.Query(kSelectRuns + "WHERE status = 'QUEUED' AND pid = 0 ORDER BY created_at, run_id"));
  });
}

bool SqlStateStore::StartQueuedRun(const std::string& run_id, int64_t pid, int64_t pid_start_time,
                                   const std::string& at) {
  std::lock_guard lock(mutex_);
  return db().Write("start queued run " + run_id, [&](StateSession& session) {
    if (session.Execute("UPDATE runs SET status = 'STARTED', started_at = ?, pid = ?, pid_start_time = ?, host = ? "
                        "WHERE run_id = ? AND status = 'QUEUED' AND pid = 0",
                        {at, pid, pid_start_time, HostName(), run_id}) == 1) {
      return true;
    }
    if (session.Query("SELECT 1 FROM runs WHERE run_id = ?", {run_id}).empty()) {
      throw db().StateError("SLU-STATE-004", "no run with id " + run_id);
    }
    return false;
  });
}

void SqlStateStore::Append(const std::string& run_id, const std::string& at, const RunEvent& event) {
  const std::string kind = EventKindName(event);
  const std::string payload = EventToJson(event).dump();
  std::lock_guard lock(mutex_);
  db().Write("append a " + kind + " event to run " + run_id, [&](StateSession& session) {
    session.Execute("INSERT INTO events (run_id, at, kind, payload) VALUES (?, ?, ?, ?)", {run_id, at, kind, payload});
  });
}

std::vector<StoredEvent> SqlStateStore::EventsForRun(const std::string& run_id) {
  std::lock_guard lock(mutex_);
  return db().Read("read the events of run " + run_id, [&](StateSession& session) {
    std::vector<SqlRow> rows = session.Query(
        "SELECT sequence, run_id, at, kind, payload FROM events WHERE run_id = ? ORDER BY sequence", {run_id});
    std::vector<StoredEvent> events;
    events.reserve(rows.size());
    for (const SqlRow& row : rows) {
      const int64_t sequence = row.Int(0);
      nlohmann::json payload = nlohmann::json::parse(row.Text(4), nullptr, /*allow_exceptions=*/false);
      try {
        events.push_back(StoredEvent{sequence, row.Text(1), row.Text(2), EventFromJson(row.Text(3), payload)});
      } catch (const std::invalid_argument& error) {
        throw db().StateError(
            "SLU-STATE-006",
            "event " + std::to_string(sequence) + " of run " + run_id + " cannot be read: " + error.what(),
            NewerSluiceHint());
      }
    }
    return events;
  });
}

void SqlStateStore::RecordMaterializations(const std::vector<MaterializationRecord>& records) {
  if (records.empty()) return;
  std::lock_guard lock(mutex_);
  db().Write("record " + std::to_string(records.size()) + " materialization(s)", [&](StateSession& session) {
    StateTransaction transaction(session, TransactionKind::kWrite);
    for (const MaterializationRecord& record : records) {
      session.Execute(
          "INSERT INTO materializations (asset, \"partition\", run_id, row_count, sql_hash, written_at) "
          "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (asset, \"partition\") DO UPDATE SET run_id = excluded.run_id, "
          "row_count = excluded.row_count, sql_hash = excluded.sql_hash, written_at = excluded.written_at",
          {record.asset, record.partition, record.run_id, record.rows, record.sql_hash, record.written_at});
    }
    transaction.Commit();
  });
}

std::vector<MaterializationRecord> SqlStateStore::LatestMaterializations() {
  std::lock_guard lock(mutex_);
  return db().Read("read materializations", [&](StateSession& session) {
    std::vector<MaterializationRecord> records;
    for (const SqlRow& row : session.Query("SELECT asset, \"partition\", run_id, row_count, sql_hash, written_at "
                                           "FROM materializations ORDER BY asset, \"partition\"")) {
      records.push_back(
          MaterializationRecord{row.Text(0), row.Text(1), row.Text(2), row.Int(3), row.Text(4), row.Text(5)});
    }
    return records;
  });
}

bool SqlStateStore::HasMaterializations() {
  std::lock_guard lock(mutex_);
  return db().Read("read materializations", [&](StateSession& session) {
    return !session.Query("SELECT 1 FROM materializations LIMIT 1").empty();
  });
}

}  // namespace sluice
