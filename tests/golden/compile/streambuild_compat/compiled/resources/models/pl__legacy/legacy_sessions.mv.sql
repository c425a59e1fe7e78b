CREATE MATERIALIZED VIEW orders_demo.mv__legacy_sessions
TO orders_demo.tbl__legacy_sessions AS
SELECT
  CAST(session_id AS String) AS session_id,
  CAST(event_timestamp AS DateTime64(3)) AS _replay_timestamp
FROM orders_demo.clicks_existing
