
SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

CREATE TABLE public.asset_materializations (
    sequence bigint NOT NULL,
    asset text NOT NULL COLLATE pg_catalog."C",
    partition text NOT NULL,
    run_id text NOT NULL,
    at text NOT NULL,
    metadata jsonb NOT NULL,
    CONSTRAINT asset_materializations_metadata_check CHECK ((jsonb_typeof(metadata) = 'object'::text))
);

ALTER TABLE public.asset_materializations ALTER COLUMN sequence ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.asset_materializations_sequence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.backfill_chunks (
    backfill_id text NOT NULL COLLATE pg_catalog."C",
    chunk_index integer NOT NULL,
    partition_start text,
    partition_end text,
    assets jsonb NOT NULL,
    status text NOT NULL,
    run_id text NOT NULL,
    CONSTRAINT backfill_chunks_assets_check CHECK ((jsonb_typeof(assets) = 'array'::text))
);

CREATE TABLE public.backfills (
    backfill_id text NOT NULL COLLATE pg_catalog."C",
    created_at text NOT NULL COLLATE pg_catalog."C",
    selection text NOT NULL,
    partition_from text NOT NULL,
    partition_to text NOT NULL,
    status text NOT NULL,
    pid bigint NOT NULL,
    pid_start_time bigint NOT NULL,
    max_concurrent_runs integer NOT NULL,
    finished_at text,
    error text NOT NULL
);

CREATE TABLE public.daemon_lease (
    lease integer NOT NULL,
    pid bigint NOT NULL,
    pid_start_time bigint NOT NULL,
    host text NOT NULL,
    backend_pid integer NOT NULL,
    heartbeat_at text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT daemon_lease_lease_check CHECK ((lease = 1))
);

CREATE TABLE public.events (
    sequence bigint NOT NULL,
    run_id text NOT NULL COLLATE pg_catalog."C",
    at text NOT NULL,
    kind text NOT NULL,
    payload jsonb NOT NULL
);

ALTER TABLE public.events ALTER COLUMN sequence ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.events_sequence_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.instigators (
    name text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL,
    status text NOT NULL,
    cursor text NOT NULL,
    updated_at text NOT NULL
);

CREATE TABLE public.materializations (
    asset text NOT NULL COLLATE pg_catalog."C",
    partition text NOT NULL COLLATE pg_catalog."C",
    run_id text NOT NULL,
    row_count bigint NOT NULL,
    sql_hash text NOT NULL,
    written_at text NOT NULL
);

CREATE TABLE public.partition_status (
    asset text NOT NULL COLLATE pg_catalog."C",
    partition text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL,
    run_id text NOT NULL,
    backfill_id text NOT NULL,
    at text NOT NULL
);

CREATE TABLE public.run_keys (
    run_key text NOT NULL COLLATE pg_catalog."C",
    run_id text NOT NULL,
    claimed_at text NOT NULL
);

CREATE TABLE public.runs (
    run_id text NOT NULL COLLATE pg_catalog."C",
    selection text NOT NULL,
    partition_start text,
    partition_end text,
    status text NOT NULL COLLATE pg_catalog."C",
    created_at text NOT NULL COLLATE pg_catalog."C",
    started_at text,
    finished_at text,
    pid bigint NOT NULL,
    pid_start_time bigint NOT NULL,
    error text NOT NULL,
    backfill_id text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    job text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    tags jsonb DEFAULT '{}'::jsonb NOT NULL,
    host text DEFAULT ''::text NOT NULL COLLATE pg_catalog."C",
    CONSTRAINT runs_tags_check CHECK ((jsonb_typeof(tags) = 'object'::text))
);

CREATE TABLE public.schema_migrations (
    version integer NOT NULL,
    name text NOT NULL,
    applied_at text NOT NULL
);

CREATE TABLE public.ticks (
    tick_id bigint NOT NULL,
    instigator text NOT NULL COLLATE pg_catalog."C",
    kind text NOT NULL,
    tick_time text NOT NULL,
    evaluated_at text NOT NULL COLLATE pg_catalog."C",
    status text NOT NULL,
    run_keys jsonb NOT NULL,
    run_ids jsonb NOT NULL,
    skip_reason text NOT NULL,
    error text NOT NULL,
    CONSTRAINT ticks_run_ids_check CHECK ((jsonb_typeof(run_ids) = 'array'::text)),
    CONSTRAINT ticks_run_keys_check CHECK ((jsonb_typeof(run_keys) = 'array'::text))
);

ALTER TABLE public.ticks ALTER COLUMN tick_id ADD GENERATED ALWAYS AS IDENTITY (
    SEQUENCE NAME public.ticks_tick_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1
);

CREATE TABLE public.workers (
    worker_id text NOT NULL COLLATE pg_catalog."C",
    host text NOT NULL COLLATE pg_catalog."C",
    pid bigint NOT NULL,
    pid_start_time bigint NOT NULL,
    started_at text NOT NULL,
    heartbeat_at text NOT NULL COLLATE pg_catalog."C",
    backend_pid integer NOT NULL,
    backend_start timestamp with time zone NOT NULL
);

INSERT INTO public.asset_materializations (sequence, asset, partition, run_id, at, metadata) OVERRIDING SYSTEM VALUE VALUES (1, 'starbake_orders', '2026-03-01T00:00:00', 'q1', '2026-03-01T10:05:00.000Z', '{"sl_uri": "starbake.orders", "sl_options": {"a": 1}}');
INSERT INTO public.asset_materializations (sequence, asset, partition, run_id, at, metadata) OVERRIDING SYSTEM VALUE VALUES (2, 'starbake_orders', '', 'q1', '2026-03-01T10:05:00.000Z', '{}');
INSERT INTO public.asset_materializations (sequence, asset, partition, run_id, at, metadata) OVERRIDING SYSTEM VALUE VALUES (3, 'kpi_revenue', '', 'r1', '2026-03-01T10:05:00.000Z', '{}');

INSERT INTO public.backfill_chunks (backfill_id, chunk_index, partition_start, partition_end, assets, status, run_id) VALUES ('b1', 1, '2026-01-01', '2026-01-12', '["silver.orders", "gold.daily_revenue"]', 'pending', '');
INSERT INTO public.backfill_chunks (backfill_id, chunk_index, partition_start, partition_end, assets, status, run_id) VALUES ('b1', 0, NULL, NULL, '["raw.orders"]', 'canceled', 'r2');

INSERT INTO public.backfills (backfill_id, created_at, selection, partition_from, partition_to, status, pid, pid_start_time, max_concurrent_runs, finished_at, error) VALUES ('b1', '2026-03-01T10:00:00.000Z', '*', '2026-01-01', '2026-01-12', 'COMPLETED_FAILED', 4242, 17, 2, '2026-03-01T10:05:00.000Z', 'a chunk was canceled');
INSERT INTO public.backfills (backfill_id, created_at, selection, partition_from, partition_to, status, pid, pid_start_time, max_concurrent_runs, finished_at, error) VALUES ('b2', '2026-03-01T10:05:00.000Z', '*', '2026-01-01', '2026-01-12', 'REQUESTED', 4242, 17, 2, NULL, '');

INSERT INTO public.daemon_lease (lease, pid, pid_start_time, host, backend_pid, heartbeat_at) VALUES (1, 4242, 17, 'vm', 1137, '2026-03-01T10:00:00.000Z');

INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (1, 'r1', '2026-03-01T10:00:00.000Z', 'run_started', '{"assets": ["bronze.orders", "silver.orders", "gold.daily_revenue"], "selection": "+gold.daily_revenue"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (2, 'r1', '2026-03-01T10:00:00.000Z', 'step_started', '{"asset": "silver.orders"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (3, 'r1', '2026-03-01T10:00:00.000Z', 'materialization', '{"view": false, "asset": "silver.orders", "sql_hash": "ab12cd", "window_end": "2026-01-03", "rows_dropped": 7, "rows_written": 1200, "window_start": "2026-01-01"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (4, 'r1', '2026-03-01T10:00:00.000Z', 'step_failed', '{"asset": "gold.daily_revenue", "diagnostics": [{"code": "SLU-ENGINE-004", "file": "models/gold/revenue.sql", "hint": "guard the divisor", "line": 12, "column": 5, "message": "division by zero"}, {"code": "SLU-WAREHOUSE-001", "file": "", "hint": "", "line": 0, "column": 0, "message": "query failed: \"quoted\" ''text'' ü"}]}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (5, 'r1', '2026-03-01T10:00:00.000Z', 'step_skipped', '{"asset": "gold.weekly", "reason": "upstream gold.daily_revenue failed"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (6, 'r1', '2026-03-01T10:00:00.000Z', 'step_finished', '{"asset": "silver.orders", "duration_ms": 1534}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (7, 'r1', '2026-03-01T10:00:00.000Z', 'run_finished', '{"status": "FAILURE", "message": "1 step failed"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (8, 'r1', '2026-03-01T10:00:00.000Z', 'run_waiting', '{"reason": "waiting for the writer lock on /p/warehouse.duckdb (held by pid 123)"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (9, 'r1', '2026-03-01T10:00:00.000Z', 'statement', '{"sql": "INSERT INTO db.t SELECT 1", "step": "replay_tbl__orders", "sha256": "ab12"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (10, 'r1', '2026-03-01T10:00:00.000Z', 'step_note', '{"note": "rows arrived", "step": "replay_tbl__orders"}');
INSERT INTO public.events (sequence, run_id, at, kind, payload) OVERRIDING SYSTEM VALUE VALUES (11, 'r1', '2026-03-01T10:00:00.000Z', 'materialization', '{"view": true, "asset": "gold.totals", "sql_hash": "h", "window_end": null, "rows_dropped": 0, "rows_written": 3, "window_start": null}');

INSERT INTO public.instigators (name, kind, status, cursor, updated_at) VALUES ('orders_landed', 'sensor', 'STOPPED', '{"orders": 3}', '2026-03-01T10:05:00.000Z');
INSERT INTO public.instigators (name, kind, status, cursor, updated_at) VALUES ('daily', 'schedule', 'RUNNING', '2026-03-01T00:00:00.000Z', '2026-03-01T10:05:00.000Z');

INSERT INTO public.materializations (asset, partition, run_id, row_count, sql_hash, written_at) VALUES ('silver.orders', '2026-01-01', 'r1', 1200, 'ab12cd', '2026-03-01T10:05:00.000Z');
INSERT INTO public.materializations (asset, partition, run_id, row_count, sql_hash, written_at) VALUES ('gold.totals', '', 'r1', 3, 'ef34', '2026-03-01T10:05:00.000Z');

INSERT INTO public.partition_status (asset, partition, status, run_id, backfill_id, at) VALUES ('silver.orders', '2026-01-01', 'materialized', 'r1', 'b1', '2026-03-01T10:05:00.000Z');
INSERT INTO public.partition_status (asset, partition, status, run_id, backfill_id, at) VALUES ('gold.daily_revenue', '2026-01-01', 'failed', 'r1', 'b1', '2026-03-01T10:05:00.000Z');

INSERT INTO public.run_keys (run_key, run_id, claimed_at) VALUES ('daily:2026-03-01', 'q1', '2026-03-01T10:05:00.000Z');

INSERT INTO public.runs (run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) VALUES ('r1', '+gold.daily_revenue', '2026-01-01', '2026-01-31', 'FAILURE', '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z', '2026-03-01T10:05:00.000Z', 4242, 17, '1 step failed', '', '', '{"trigger": "schedule \"daily\" ü", "logical_datetime": "2026-03-01T00:00:00"}', '');
INSERT INTO public.runs (run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) VALUES ('r2', '+gold.daily_revenue', NULL, NULL, 'CANCELED', '2026-03-01T10:01:00.000Z', NULL, '2026-03-01T10:05:00.000Z', 4242, 17, '', 'b1', '', '{}', '');
INSERT INTO public.runs (run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) VALUES ('q2', '+gold.daily_revenue', '2026-01-01', '2026-01-31', 'QUEUED', '2026-03-01T10:03:00.000Z', NULL, NULL, 0, 0, '', '', 'load_orders', '{"dagster/priority": "1"}', '');
INSERT INTO public.runs (run_id, selection, partition_start, partition_end, status, created_at, started_at, finished_at, pid, pid_start_time, error, backfill_id, job, tags, host) VALUES ('q1', '+gold.daily_revenue', '2026-01-01', '2026-01-31', 'STARTED', '2026-03-01T10:02:00.000Z', '2026-03-01T10:05:00.000Z', NULL, 7, 1, '', '', 'load_orders', '{"dagster/priority": "1"}', 'golden-elsewhere');

INSERT INTO public.schema_migrations (version, name, applied_at) VALUES (1, 'runs, events, materializations, backfills, ticks, the daemon lease, the asset log, workers', '2026-12-07T21:11:04.339Z');

INSERT INTO public.ticks (tick_id, instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, skip_reason, error) OVERRIDING SYSTEM VALUE VALUES (1, 'daily', 'schedule', '2026-03-01T10:00:00.000Z', '2026-03-01T10:05:00.000Z', 'SUCCESS', '["daily:2026-03-01"]', '["q1"]', '', '');
INSERT INTO public.ticks (tick_id, instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, skip_reason, error) OVERRIDING SYSTEM VALUE VALUES (2, 'orders_landed', 'sensor', '2026-03-01T10:00:00.000Z', '2026-03-01T10:05:00.000Z', 'SKIPPED', '[]', '[]', 'no new events', '');
INSERT INTO public.ticks (tick_id, instigator, kind, tick_time, evaluated_at, status, run_keys, run_ids, skip_reason, error) OVERRIDING SYSTEM VALUE VALUES (3, 'daily', 'schedule', '2026-03-01T10:05:00.000Z', '2026-03-01T10:05:00.000Z', 'FAILURE', '[]', '[]', '', 'cron failed');

INSERT INTO public.workers (worker_id, host, pid, pid_start_time, started_at, heartbeat_at, backend_pid, backend_start) VALUES ('golden-elsewhere:7:1', 'golden-elsewhere', 7, 1, '2026-03-01T10:00:00.000Z', '2026-03-01T10:05:00.000Z', 1136, '2026-12-07 21:11:04.318902+00');

SELECT pg_catalog.setval('public.asset_materializations_sequence_seq', 3, true);

SELECT pg_catalog.setval('public.events_sequence_seq', 11, true);

SELECT pg_catalog.setval('public.ticks_tick_id_seq', 3, true);

ALTER TABLE ONLY public.asset_materializations
    ADD CONSTRAINT asset_materializations_pkey PRIMARY KEY (sequence);

ALTER TABLE ONLY public.backfill_chunks
    ADD CONSTRAINT backfill_chunks_pkey PRIMARY KEY (backfill_id, chunk_index);

ALTER TABLE ONLY public.backfills
    ADD CONSTRAINT backfills_pkey PRIMARY KEY (backfill_id);

ALTER TABLE ONLY public.daemon_lease
    ADD CONSTRAINT daemon_lease_pkey PRIMARY KEY (lease);

ALTER TABLE ONLY public.events
    ADD CONSTRAINT events_pkey PRIMARY KEY (sequence);

ALTER TABLE ONLY public.instigators
    ADD CONSTRAINT instigators_pkey PRIMARY KEY (name);

ALTER TABLE ONLY public.materializations
    ADD CONSTRAINT materializations_pkey PRIMARY KEY (asset, partition);

ALTER TABLE ONLY public.partition_status
    ADD CONSTRAINT partition_status_pkey PRIMARY KEY (asset, partition);

ALTER TABLE ONLY public.run_keys
    ADD CONSTRAINT run_keys_pkey PRIMARY KEY (run_key);

ALTER TABLE ONLY public.runs
    ADD CONSTRAINT runs_pkey PRIMARY KEY (run_id);

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

ALTER TABLE ONLY public.ticks
    ADD CONSTRAINT ticks_pkey PRIMARY KEY (tick_id);

ALTER TABLE ONLY public.workers
    ADD CONSTRAINT workers_pkey PRIMARY KEY (worker_id);

CREATE INDEX asset_materializations_by_asset ON public.asset_materializations USING btree (asset, sequence);

CREATE INDEX backfills_by_created_at ON public.backfills USING btree (created_at, backfill_id);

CREATE INDEX events_by_run ON public.events USING btree (run_id, sequence);

CREATE INDEX runs_by_backfill ON public.runs USING btree (backfill_id, created_at, run_id) WHERE (backfill_id <> ''::text);

CREATE INDEX runs_by_created_at ON public.runs USING btree (created_at, run_id);

CREATE INDEX runs_by_job ON public.runs USING btree (job, created_at, run_id) WHERE (job <> ''::text);

CREATE INDEX runs_queued ON public.runs USING btree (created_at, run_id) WHERE ((status = 'QUEUED'::text) AND (pid = 0) AND (job <> ''::text));

CREATE INDEX runs_unfinished ON public.runs USING btree (status) WHERE (status = ANY (ARRAY['QUEUED'::text, 'STARTED'::text]));

CREATE INDEX ticks_by_instigator ON public.ticks USING btree (instigator, tick_id);

ALTER TABLE ONLY public.backfill_chunks
    ADD CONSTRAINT backfill_chunks_backfill_id_fkey FOREIGN KEY (backfill_id) REFERENCES public.backfills(backfill_id);

ALTER TABLE ONLY public.ticks
    ADD CONSTRAINT ticks_instigator_fkey FOREIGN KEY (instigator) REFERENCES public.instigators(name);

