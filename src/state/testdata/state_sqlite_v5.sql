BEGIN TRANSACTION;
CREATE TABLE asset_materializations (
  sequence    INTEGER PRIMARY KEY,
  asset       TEXT NOT NULL,
  "partition" TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  at          TEXT NOT NULL,
  metadata    TEXT NOT NULL CHECK (json_valid(metadata))
) STRICT;
INSERT INTO "asset_materializations" VALUES(1,'starbake_orders','2026-03-01T00:00:00','q1','2026-03-01T10:05:00.000Z','{"sl_options":{"a":1},"sl_uri":"starbake.orders"}');
INSERT INTO "asset_materializations" VALUES(2,'starbake_orders','','q1','2026-03-01T10:05:00.000Z','{}');
INSERT INTO "asset_materializations" VALUES(3,'kpi_revenue','','r1','2026-03-01T10:05:00.000Z','{}');
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
INSERT INTO "backfill_chunks" VALUES('b1',0,NULL,NULL,'["raw.orders"]','canceled','r2');
INSERT INTO "backfill_chunks" VALUES('b1',1,'2026-01-01','2026-01-12','["silver.orders","gold.daily_revenue"]','pending','');
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
INSERT INTO "backfills" VALUES('b1','2026-03-01T10:00:00.000Z','*','2026-01-01','2026-01-12','COMPLETED_FAILED',4242,17,2,'2026-03-01T10:05:00.000Z','a chunk was canceled');
INSERT INTO "backfills" VALUES('b2','2026-03-01T10:05:00.000Z','*','2026-01-01','2026-01-12','REQUESTED',4242,17,2,NULL,'');
CREATE TABLE daemon_lease (
  lease          INTEGER NOT NULL PRIMARY KEY CHECK (lease = 1),
  pid            INTEGER NOT NULL,
  pid_start_time INTEGER NOT NULL,
  heartbeat_at   TEXT    NOT NULL
) STRICT;
INSERT INTO "daemon_lease" VALUES(1,4242,17,'2026-03-01T10:00:00.000Z');
CREATE TABLE events (
  sequence INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
  run_id   TEXT    NOT NULL,
  at       TEXT    NOT NULL,
  kind     TEXT    NOT NULL,
  payload  TEXT    NOT NULL CHECK (json_valid(payload))
) STRICT;
INSERT INTO "events" VALUES(1,'r1','2026-03-01T10:00:00.000Z','run_started','{"assets":["bronze.orders","silver.orders","gold.daily_revenue"],"selection":"+gold.daily_revenue"}');
INSERT INTO "events" VALUES(2,'r1','2026-03-01T10:00:00.000Z','step_started','{"asset":"silver.orders"}');
INSERT INTO "events" VALUES(3,'r1','2026-03-01T10:00:00.000Z','materialization','{"asset":"silver.orders","rows_dropped":7,"rows_written":1200,"sql_hash":"ab12cd","view":false,"window_end":"2026-01-03","window_start":"2026-01-01"}');
INSERT INTO "events" VALUES(4,'r1','2026-03-01T10:00:00.000Z','step_failed','{"asset":"gold.daily_revenue","diagnostics":[{"code":"SLU-ENGINE-004","column":5,"file":"models/gold/revenue.sql","hint":"guard the divisor","line":12,"message":"division by zero"},{"code":"SLU-WAREHOUSE-001","column":0,"file":"","hint":"","line":0,"message":"query failed: \"quoted\" ''text'' ü"}]}');
INSERT INTO "events" VALUES(5,'r1','2026-03-01T10:00:00.000Z','step_skipped','{"asset":"gold.weekly","reason":"upstream gold.daily_revenue failed"}');
INSERT INTO "events" VALUES(6,'r1','2026-03-01T10:00:00.000Z','step_finished','{"asset":"silver.orders","duration_ms":1534}');
INSERT INTO "events" VALUES(7,'r1','2026-03-01T10:00:00.000Z','run_finished','{"message":"1 step failed","status":"FAILURE"}');
INSERT INTO "events" VALUES(8,'r1','2026-03-01T10:00:00.000Z','run_waiting','{"reason":"waiting for the writer lock on /p/warehouse.duckdb (held by pid 123)"}');
INSERT INTO "events" VALUES(9,'r1','2026-03-01T10:00:00.000Z','statement','{"sha256":"ab12","sql":"INSERT INTO db.t SELECT 1","step":"replay_tbl__orders"}');
INSERT INTO "events" VALUES(10,'r1','2026-03-01T10:00:00.000Z','step_note','{"note":"rows arrived","step":"replay_tbl__orders"}');
INSERT INTO "events" VALUES(11,'r1','2026-03-01T10:00:00.000Z','materialization','{"asset":"gold.totals","rows_dropped":0,"rows_written":3,"sql_hash":"h","view":true,"window_end":null,"window_start":null}');
CREATE TABLE instigators (
  name       TEXT NOT NULL PRIMARY KEY,
  kind       TEXT NOT NULL,
  status     TEXT NOT NULL,
  cursor     TEXT NOT NULL,
  updated_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO "instigators" VALUES('daily','schedule','RUNNING','2026-03-01T00:00:00.000Z','2026-03-01T10:05:00.000Z');
INSERT INTO "instigators" VALUES('orders_landed','sensor','STOPPED','{"orders": 3}','2026-03-01T10:05:00.000Z');
CREATE TABLE materializations (
  asset       TEXT    NOT NULL,
  "partition" TEXT    NOT NULL,
  run_id      TEXT    NOT NULL,
  row_count   INTEGER NOT NULL,
  sql_hash    TEXT    NOT NULL,
  written_at  TEXT    NOT NULL,
  PRIMARY KEY (asset, "partition")
) STRICT, WITHOUT ROWID;
INSERT INTO "materializations" VALUES('gold.totals','','r1',3,'ef34','2026-03-01T10:05:00.000Z');
INSERT INTO "materializations" VALUES('silver.orders','2026-01-01','r1',1200,'ab12cd','2026-03-01T10:05:00.000Z');
CREATE TABLE partition_status (
  asset       TEXT NOT NULL,
  "partition" TEXT NOT NULL,
  status      TEXT NOT NULL,
  run_id      TEXT NOT NULL,
  backfill_id TEXT NOT NULL,
  at          TEXT NOT NULL,
  PRIMARY KEY (asset, "partition")
) STRICT, WITHOUT ROWID;
INSERT INTO "partition_status" VALUES('gold.daily_revenue','2026-01-01','failed','r1','b1','2026-03-01T10:05:00.000Z');
INSERT INTO "partition_status" VALUES('silver.orders','2026-01-01','materialized','r1','b1','2026-03-01T10:05:00.000Z');
CREATE TABLE run_keys (
  run_key    TEXT NOT NULL PRIMARY KEY,
  run_id     TEXT NOT NULL,
  claimed_at TEXT NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO "run_keys" VALUES('daily:2026-03-01','q1','2026-03-01T10:05:00.000Z');
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
, backfill_id TEXT NOT NULL DEFAULT '', job TEXT NOT NULL DEFAULT '', tags TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(tags)), host TEXT NOT NULL DEFAULT '') STRICT;
INSERT INTO "runs" VALUES('r1','+gold.daily_revenue','2026-01-01','2026-01-31','FAILURE','2026-03-01T10:00:00.000Z','2026-03-01T10:00:00.000Z','2026-03-01T10:05:00.000Z',4242,17,'1 step failed','','','{"logical_datetime":"2026-03-01T00:00:00","trigger":"schedule \"daily\" ü"}','');
INSERT INTO "runs" VALUES('r2','+gold.daily_revenue',NULL,NULL,'CANCELED','2026-03-01T10:01:00.000Z',NULL,'2026-03-01T10:05:00.000Z',4242,17,'','b1','','{}','');
INSERT INTO "runs" VALUES('q1','+gold.daily_revenue','2026-01-01','2026-01-31','STARTED','2026-03-01T10:02:00.000Z','2026-03-01T10:05:00.000Z',NULL,7,1,'','','load_orders','{"dagster/priority":"1"}','golden-elsewhere');
INSERT INTO "runs" VALUES('q2','+gold.daily_revenue','2026-01-01','2026-01-31','QUEUED','2026-03-01T10:03:00.000Z',NULL,NULL,0,0,'','','load_orders','{"dagster/priority":"1"}','');
CREATE TABLE schema_migrations (
  version    INTEGER NOT NULL PRIMARY KEY,
  name       TEXT    NOT NULL,
  applied_at TEXT    NOT NULL
) STRICT;
INSERT INTO "schema_migrations" VALUES(1,'runs, events, materializations','2026-12-07T21:11:04.187Z');
INSERT INTO "schema_migrations" VALUES(2,'backfills, their chunks, partition status','2026-12-07T21:11:04.187Z');
INSERT INTO "schema_migrations" VALUES(3,'instigators, ticks, run keys, the daemon lease','2026-12-07T21:11:04.187Z');
INSERT INTO "schema_migrations" VALUES(4,'run jobs and tags, the asset materialization log','2026-12-07T21:11:04.187Z');
INSERT INTO "schema_migrations" VALUES(5,'run hosts, workers','2026-12-07T21:11:04.187Z');
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
INSERT INTO "ticks" VALUES(1,'daily','schedule','2026-03-01T10:00:00.000Z','2026-03-01T10:05:00.000Z','SUCCESS','["daily:2026-03-01"]','["q1"]','','');
INSERT INTO "ticks" VALUES(2,'orders_landed','sensor','2026-03-01T10:00:00.000Z','2026-03-01T10:05:00.000Z','SKIPPED','[]','[]','no new events','');
INSERT INTO "ticks" VALUES(3,'daily','schedule','2026-03-01T10:05:00.000Z','2026-03-01T10:05:00.000Z','FAILURE','[]','[]','','cron failed');
CREATE TABLE workers (
  worker_id      TEXT    NOT NULL PRIMARY KEY,
  host           TEXT    NOT NULL,
  pid            INTEGER NOT NULL,
  pid_start_time INTEGER NOT NULL,
  started_at     TEXT    NOT NULL,
  heartbeat_at   TEXT    NOT NULL
) STRICT, WITHOUT ROWID;
INSERT INTO "workers" VALUES('golden-elsewhere:7:1','golden-elsewhere',7,1,'2026-03-01T10:00:00.000Z','2026-03-01T10:05:00.000Z');
CREATE INDEX runs_by_created_at ON runs (created_at, run_id);
CREATE INDEX runs_by_status ON runs (status);
CREATE INDEX events_by_run ON events (run_id, sequence);
CREATE INDEX runs_by_backfill ON runs (backfill_id, created_at, run_id) WHERE backfill_id <> '';
CREATE INDEX backfills_by_created_at ON backfills (created_at, backfill_id);
CREATE INDEX ticks_by_instigator ON ticks (instigator, tick_id);
CREATE INDEX runs_by_job ON runs (job, created_at, run_id) WHERE job <> '';
CREATE INDEX asset_materializations_by_asset ON asset_materializations (asset, sequence);
DELETE FROM "sqlite_sequence";
INSERT INTO "sqlite_sequence" VALUES('events',11);
COMMIT;
