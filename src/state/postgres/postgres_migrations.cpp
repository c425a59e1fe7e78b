#include "state/postgres/postgres_migrations.hpp"

#include <array>
#include <optional>

#include "core/diagnostic.hpp"
#include "state/postgres/postgres_store_connection.hpp"

namespace sluice {

namespace {

// Notes on migration 1 (the SQLite store's migrations 1–5 in one):
// - Times are ISO-8601 UTC text of fixed width (FormatUtc), as in SQLite, so they read back byte for byte and text
//   order is time order. Every text column that is sorted or compared is COLLATE "C": byte order whatever the
//   database's locale, the order SQLite gives.
// - Payloads, tags, chunk asset lists, tick run keys/ids and materialization metadata are jsonb (read whole).
// - Sequences are identity columns; `partition` is a keyword in window clauses, hence quoted, and the row count is
//   `row_count`.
// - runs.host and workers.backend_pid / backend_start tie an owner to its machine and a worker to its session
//   (RunQueue); daemon_lease keeps who holds the lease (the lease itself is an advisory lock) for reporting.
constexpr std::array kMigrations = {
    PostgresMigration{1, "runs, events, materializations, backfills, ticks, the daemon lease, the asset log, workers",
                      R"sql(
CREATE TABLE runs (
  run_id          text COLLATE "C" NOT NULL PRIMARY KEY,
  selection       text   NOT NULL,
  partition_start text,
  partition_end   text,
  status          text COLLATE "C" NOT NULL,
  created_at      text COLLATE "C" NOT NULL,
  started_at      text,
  finished_at     text,
  pid             bigint NOT NULL,
  pid_start_time  bigint NOT NULL,
  error           text   NOT NULL,
  backfill_id     text COLLATE "C" NOT NULL DEFAULT '',
  job             text COLLATE "C" NOT NULL DEFAULT '',
  tags            jsonb  NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(tags) = 'object'),
  host            text COLLATE "C" NOT NULL DEFAULT ''
);
-- ListRuns: newest first.
CREATE INDEX runs_by_created_at ON runs (created_at, run_id);
-- MarkDeadRuns and the claims' counts: the few QUEUED/STARTED runs among many finished ones.
CREATE INDEX runs_unfinished ON runs (status) WHERE status IN ('QUEUED', 'STARTED');
-- The queue workers claim from, oldest first.
CREATE INDEX runs_queued ON runs (created_at, run_id) WHERE status = 'QUEUED' AND pid = 0 AND job <> '';
CREATE INDEX runs_by_backfill ON runs (backfill_id, created_at, run_id) WHERE backfill_id <> '';
CREATE INDEX runs_by_job ON runs (job, created_at, run_id) WHERE job <> '';

CREATE TABLE events (
  sequence bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id   text COLLATE "C" NOT NULL,
  at       text  NOT NULL,
  kind     text  NOT NULL,
  payload  jsonb NOT NULL
);
-- EventsForRun: one run's events in sequence order.
CREATE INDEX events_by_run ON events (run_id, sequence);

CREATE TABLE materializations (
  asset       text COLLATE "C" NOT NULL,
  "partition" text COLLATE "C" NOT NULL,
  run_id      text   NOT NULL,
  row_count   bigint NOT NULL,
  sql_hash    text   NOT NULL,
  written_at  text   NOT NULL,
  PRIMARY KEY (asset, "partition")
);

CREATE TABLE backfills (
  backfill_id         text COLLATE "C" NOT NULL PRIMARY KEY,
  created_at          text COLLATE "C" NOT NULL,
  selection           text    NOT NULL,
  partition_from      text    NOT NULL,
  partition_to        text    NOT NULL,
  status              text    NOT NULL,
  pid                 bigint  NOT NULL,
  pid_start_time      bigint  NOT NULL,
  max_concurrent_runs integer NOT NULL,
  finished_at         text,
  error               text    NOT NULL
);
CREATE INDEX backfills_by_created_at ON backfills (created_at, backfill_id);

CREATE TABLE backfill_chunks (
  backfill_id     text COLLATE "C" NOT NULL REFERENCES backfills (backfill_id),
  chunk_index     integer NOT NULL,
  partition_start text,
  partition_end   text,
  assets          jsonb   NOT NULL CHECK (jsonb_typeof(assets) = 'array'),
  status          text    NOT NULL,
  run_id          text    NOT NULL,
  PRIMARY KEY (backfill_id, chunk_index)
);

CREATE TABLE partition_status (
  asset       text COLLATE "C" NOT NULL,
  "partition" text COLLATE "C" NOT NULL,
  status      text NOT NULL,
  run_id      text NOT NULL,
  backfill_id text NOT NULL,
  at          text NOT NULL,
  PRIMARY KEY (asset, "partition")
);

CREATE TABLE instigators (
  name       text COLLATE "C" NOT NULL PRIMARY KEY,
  kind       text NOT NULL,
  status     text NOT NULL,
  "cursor"   text NOT NULL,
  updated_at text NOT NULL
);

CREATE TABLE ticks (
  tick_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  instigator   text COLLATE "C" NOT NULL REFERENCES instigators (name),
  kind         text  NOT NULL,
  tick_time    text  NOT NULL,
  evaluated_at text COLLATE "C" NOT NULL,
  status       text  NOT NULL,
  run_keys     jsonb NOT NULL CHECK (jsonb_typeof(run_keys) = 'array'),
  run_ids      jsonb NOT NULL CHECK (jsonb_typeof(run_ids) = 'array'),
  skip_reason  text  NOT NULL,
  error        text  NOT NULL
);
CREATE INDEX ticks_by_instigator ON ticks (instigator, tick_id);

CREATE TABLE run_keys (
  run_key    text COLLATE "C" NOT NULL PRIMARY KEY,
  run_id     text NOT NULL,
  claimed_at text NOT NULL
);

CREATE TABLE daemon_lease (
  lease          integer NOT NULL PRIMARY KEY CHECK (lease = 1),
  pid            bigint  NOT NULL,
  pid_start_time bigint  NOT NULL,
  host           text    NOT NULL,
  backend_pid    integer NOT NULL,
  heartbeat_at   text COLLATE "C" NOT NULL
);

CREATE TABLE asset_materializations (
  sequence    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  asset       text COLLATE "C" NOT NULL,
  "partition" text  NOT NULL,
  run_id      text  NOT NULL,
  at          text  NOT NULL,
  metadata    jsonb NOT NULL CHECK (jsonb_typeof(metadata) = 'object')
);
CREATE INDEX asset_materializations_by_asset ON asset_materializations (asset, sequence);

CREATE TABLE workers (
  worker_id      text COLLATE "C" NOT NULL PRIMARY KEY,
  host           text COLLATE "C" NOT NULL,
  pid            bigint      NOT NULL,
  pid_start_time bigint      NOT NULL,
  started_at     text        NOT NULL,
  heartbeat_at   text COLLATE "C" NOT NULL,
  backend_pid    integer     NOT NULL,
  backend_start  timestamptz NOT NULL
);
)sql"},
};

constexpr bool NumberedInOrder() {
  for (size_t i = 0; i < kMigrations.size(); ++i) {
    if (kMigrations[i].version != static_cast<int>(i) + 1) return false;
  }
  return true;
}
static_assert(NumberedInOrder(), "migrations must be numbered 1, 2, 3 … in list order");

}  // namespace

std::span<const PostgresMigration> PostgresMigrations() { return kMigrations; }

int PostgresSchemaVersion(pg::Connection& connection) {
  const pg::Result result = connection.Exec("SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
  return std::stoi(result.Scalar().value_or("0"));
}

void MigratePostgresSchema(pg::Connection& connection, const std::string& now, const std::string& redacted_url) {
  PgTransaction transaction(connection);
  connection.Exec("SELECT pg_advisory_xact_lock($1)", {std::to_string(kMigrationLockKey)});
  connection.Exec(R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer NOT NULL PRIMARY KEY,
  name       text    NOT NULL,
  applied_at text    NOT NULL
))sql");
  const int applied = PostgresSchemaVersion(connection);
  const int known = kMigrations.back().version;
  if (applied > known) {
    throw Error(MakeDiagnostic("SLU-STATE-001",
                               "the state database has schema version " + std::to_string(applied) +
                                   ", newer than this build of Sluice knows (" + std::to_string(known) + ")",
                               SourceLocation{redacted_url, 0, 0},
                               "use a Sluice release at least as new as the one that last wrote this database"));
  }
  for (const PostgresMigration& migration : kMigrations) {
    if (migration.version <= applied) continue;
    connection.Exec(std::string(migration.sql));
    connection.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                    {std::to_string(migration.version), std::string(migration.name), now});
  }
  transaction.Commit();
}

}  // namespace sluice
