-- 1 prepare create_database_orders_demo
CREATE DATABASE IF NOT EXISTS `orders_demo`;

-- 2 teardown drop_tbl__legacy_sessions
DROP TABLE IF EXISTS `orders_demo`.`mv__legacy_sessions` SYNC;
DROP TABLE IF EXISTS `orders_demo`.`tbl__legacy_sessions` SYNC;

-- 3 realization create_table_tbl__legacy_sessions
CREATE TABLE orders_demo.tbl__legacy_sessions (
    session_id String,
    _replay_timestamp DateTime64(3)
) ENGINE = MergeTree()
ORDER BY (_replay_timestamp);

-- 4 replay replay_tbl__legacy_sessions
CREATE MATERIALIZED VIEW orders_demo.mv__legacy_sessions
TO orders_demo.tbl__legacy_sessions AS
SELECT
  CAST(session_id AS String) AS session_id,
  CAST(event_timestamp AS DateTime64(3)) AS _replay_timestamp
FROM orders_demo.clicks_existing;
INSERT INTO `orders_demo`.`tbl__legacy_sessions`
SELECT
  CAST(session_id AS String) AS session_id,
  CAST(event_timestamp AS DateTime64(3)) AS _replay_timestamp
FROM (SELECT * FROM orders_demo.clicks_existing WHERE {replay_boundary});
