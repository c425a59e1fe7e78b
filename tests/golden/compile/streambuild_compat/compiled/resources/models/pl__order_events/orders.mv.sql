CREATE MATERIALIZED VIEW orders_demo.mv__orders
TO orders_demo.tbl__orders AS
SELECT
  CAST(JSONExtractString(kafka_value, 'order_id') AS String) AS order_id,
  CAST(JSONExtractString(kafka_value, 'status') AS String) AS status,
  CAST(JSONExtractString(kafka_value, 'region') AS String) AS region,
  CAST(parseDateTime64BestEffort(JSONExtractString(kafka_value, 'event_at'), 3) AS DateTime64(3)) AS event_at,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS Nullable(DateTime64(3))) AS _replay_timestamp
FROM orders_demo.raw__order_events
