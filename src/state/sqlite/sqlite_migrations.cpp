#include "state/sqlite/sqlite_migrations.hpp"

#include <array>

namespace sluice {

namespace {

// Notes on migration 1:
// - Tables are STRICT, so a value of the wrong type is refused instead of silently coerced.
// - `events.payload` holds JSON text. It is declared TEXT (with a json_valid check) because a column
//   declared `JSON` gets NUMERIC affinity in SQLite, which would turn a payload such as "5" into a number.
// - Times are ISO-8601 UTC text of fixed width (FormatUtc), so text order is time order.
// - `partition` is a keyword in window clauses, hence quoted; the row count is `row_count` for the same
//   reason (`rows`).
constexpr std::array kMigrations = {
    SqliteMigration{1, "runs, events, materializations", R"sql(
CREATE TABLE runs (
  run_id          TEXT    NOT NULL PRIMARY KEY,
  selection       TEXT    NOT NULL,
  partition_start TEXT,
  partition_end   TEXT,
  status          TEXT    NOT NULL,
  created_at      TEXT    NOT NULL,
  started_at      TEXT,
  finished_at     TEXT,
  pid             INTEGER NOT NULL,
  pid_start_time  INTEGER NOT NULL,
  error           TEXT    NOT NULL
) STRICT;
-- ListRuns: newest first.
CREATE INDEX runs_by_created_at ON runs (created_at, run_id);
-- MarkDeadRuns: the few QUEUED/STARTED runs among many finished ones.
CREATE INDEX runs_by_status ON runs (status);

CREATE TABLE events (
  sequence INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  run_id   TEXT    NOT NULL,
  at       TEXT    NOT NULL,
  kind     TEXT    NOT NULL,
  payload  TEXT    NOT NULL CHECK (json_valid(payload))
) STRICT;
-- EventsForRun: one run's events in sequence order.
CREATE INDEX events_by_run ON events (run_id, sequence);

CREATE TABLE materializations (
  asset       TEXT    NOT NULL,
  "partition" TEXT    NOT NULL,
  run_id      TEXT    NOT NULL,
  row_count   INTEGER NOT NULL,
  sql_hash    TEXT    NOT NULL,
  written_at  TEXT    NOT NULL,
  PRIMARY KEY (asset, "partition")
) STRICT, WITHOUT ROWID;
)sql"},
    // Chunk asset lists are JSON arrays of asset keys (read whole, never queried into).
    SqliteMigration{2, "backfills, their chunks, partition status", R"sql(
ALTER TABLE runs ADD COLUMN backfill_id TEXT NOT NULL DEFAULT '';
-- RunsOfBackfill; plain runs (the many) stay out of the index.
CREATE INDEX runs_by_backfill ON runs (backfill_id, created_at, run_id) WHERE backfill_id <> '';

CREATE TABLE backfills (
  backfill_id         TEXT    NOT NULL PRIMARY KEY,
  created_at          TEXT    NOT NULL,
  selection           TEXT    NOT NULL,
  partition_from      TEXT    NOT NULL,
  partition_to        TEXT    NOT NULL,
  status              TEXT    NOT NULL,
  pid                 INTEGER NOT NULL,
  pid_start_time      INTEGER NOT NULL,
  max_concurrent_runs INTEGER NOT NULL,
  finished_at         TEXT,
  error               TEXT    NOT NULL
) STRICT;
CREATE INDEX backfills_by_created_at ON backfills (created_at, backfill_id);

CREATE TABLE backfill_chunks (
  backfill_id     TEXT    NOT NULL,
  chunk_index     INTEGER NOT NULL,
  partition_start TEXT,
  partition_end   TEXT,
  assets          TEXT    NOT NULL CHECK (json_valid(assets)),
  status          TEXT    NOT NULL,
  run_id          TEXT    NOT NULL,
  PRIMARY KEY (backfill_id, chunk_index)
) STRICT, WITHOUT ROWID;

CREATE TABLE partition_status (
  asset       TEXT NOT NULL,
  "partition" TEXT NOT NULL,
  status      TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  backfill_id TEXT NOT NULL,
  at          TEXT NOT NULL,
  PRIMARY KEY (asset, "partition")
) STRICT, WITHOUT ROWID;
)sql"},
    // A tick's run keys and run ids are JSON arrays (read whole). run_keys' primary key is what makes a run key launch
    // one run across daemon restarts; daemon_lease holds at most one row.
    SqliteMigration{3, "instigators, ticks, run keys, the daemon lease", R"sql(
CREATE TABLE instigators (
  name       TEXT NOT NULL PRIMARY KEY,
  kind       TEXT NOT NULL,
  status     TEXT NOT NULL,
  cursor     TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE ticks (
  tick_id      INTEGER PRIMARY KEY,
  instigator   TEXT    NOT NULL REFERENCES instigators (name),
  kind         TEXT    NOT NULL,
  tick_time    TEXT    NOT NULL,
  evaluated_at TEXT    NOT NULL,
  status       TEXT    NOT NULL,
  run_keys     TEXT    NOT NULL CHECK (json_valid(run_keys)),
  run_ids      TEXT    NOT NULL CHECK (json_valid(run_ids)),
  skip_reason  TEXT    NOT NULL,
  error        TEXT    NOT NULL
) STRICT;
CREATE INDEX ticks_by_instigator ON ticks (instigator, tick_id);

CREATE TABLE run_keys (
  run_key    TEXT NOT NULL PRIMARY KEY,
  run_id     TEXT NOT NULL,
  claimed_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE daemon_lease (
  lease          INTEGER NOT NULL PRIMARY KEY CHECK (lease = 1),
  pid            INTEGER NOT NULL,
  pid_start_time INTEGER NOT NULL,
  heartbeat_at   TEXT    NOT NULL
) STRICT;
)sql"},
    // Orchestrated runs name their job and carry tags (a JSON object of strings); asset_materializations is the log
    // dataset sensors read, every record kept in sequence order.
    SqliteMigration{4, "run jobs and tags, the asset materialization log", R"sql(
ALTER TABLE runs ADD COLUMN job TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN tags TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(tags));
CREATE INDEX runs_by_job ON runs (job, created_at, run_id) WHERE job <> '';

CREATE TABLE asset_materializations (
  sequence    INTEGER PRIMARY KEY,
  asset       TEXT NOT NULL,
  "partition" TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  at          TEXT NOT NULL,
  metadata    TEXT NOT NULL CHECK (json_valid(metadata))
) STRICT;
CREATE INDEX asset_materializations_by_asset ON asset_materializations (asset, sequence);
)sql"},
    // Runs record their owner's machine (a pid means something only there); workers are the processes claiming
    // queued runs (RunQueue).
    SqliteMigration{5, "run hosts, workers", R"sql(
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
CREATE TABLE workers (
  worker_id      TEXT    NOT NULL PRIMARY KEY,
  host           TEXT    NOT NULL,
  pid            INTEGER NOT NULL,
  pid_start_time INTEGER NOT NULL,
  started_at     TEXT    NOT NULL,
  heartbeat_at   TEXT    NOT NULL
) STRICT, WITHOUT ROWID;
)sql"},
};

constexpr bool NumberedInOrder() {
  for (size_t i = 0; i < kMigrations.size(); ++i) {
    if (kMigrations[i].version != static_cast<int>(i) + 1) return false;
  }
  return true;
}
static_assert(NumberedInOrder(), "migrations must be numbered 1, 2, 3 … in list order");

bool IsApplied(sqlite3* db, int version) {
  SqliteStatement query(db, SqliteStage::kOpening, "read schema_migrations",
                        "SELECT 1 FROM schema_migrations WHERE version = ?");
  query.BindAll({version});
  return query.Step();
}

}  // namespace

std::span<const SqliteMigration> SqliteMigrations() { return kMigrations; }

int SqliteSchemaVersion(sqlite3* db, SqliteStage stage) {
  SqliteStatement query(db, stage, "read the schema version",
                        "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  query.Step();
  return static_cast<int>(query.Int(0));
}

void MigrateSqliteSchema(sqlite3* db, const std::string& now) {
  ExecuteSqliteScript(db, SqliteStage::kOpening, "create schema_migrations", R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER NOT NULL PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;
)sql");

  int applied = SqliteSchemaVersion(db, SqliteStage::kOpening);
  int known = kMigrations.back().version;
  if (applied > known) {
    throw StateError(db, "SLU-STATE-001",
                     "the state database has schema version " + std::to_string(applied) +
                         ", newer than this build of Sluice knows (" + std::to_string(known) + ")",
                     "use a Sluice release at least as new as the one that last wrote this file");
  }

  for (const SqliteMigration& migration : kMigrations) {
    if (migration.version <= applied) continue;
    std::string action = "apply state migration " + std::to_string(migration.version) + " (" +
                         std::string(migration.name) + ")";
    SqliteTransaction transaction(db, SqliteStage::kOpening, action);
    // Another process may have applied it between our version check and taking the write lock.
    if (IsApplied(db, migration.version)) continue;
    ExecuteSqliteScript(db, SqliteStage::kOpening, action, std::string(migration.sql));
    SqliteStatement record(db, SqliteStage::kOpening, action,
                           "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
    record.BindAll({migration.version, migration.name, now});
    record.Execute();
    transaction.Commit();
  }
}

}  // namespace sluice
