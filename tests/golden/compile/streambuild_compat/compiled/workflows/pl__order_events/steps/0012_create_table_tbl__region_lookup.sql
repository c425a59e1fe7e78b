CREATE TABLE orders_demo.tbl__region_lookup (
    order_id String,
    region LowCardinality(String),
    _replay_partition Int32,
    _replay_offset Int64
) ENGINE = ReplacingMergeTree()
ORDER BY (order_id);
CREATE MATERIALIZED VIEW orders_demo.mv__region_lookup
TO orders_demo.tbl__region_lookup AS
SELECT
  CAST(order_id AS String) AS order_id,
  CAST(region AS LowCardinality(String)) AS region,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset
FROM orders_demo.tbl__orders;
