CREATE TABLE orders_demo.tbl__order_items (
    order_id String,
    sku String,
    line_total Float64,
    event_at DateTime64(3),
    _replay_partition Int32,
    _replay_offset Int64,
    _replay_timestamp Nullable(DateTime64(3))
) ENGINE = MergeTree()
ORDER BY (order_id, _replay_partition, _replay_offset);
CREATE MATERIALIZED VIEW orders_demo.mv__order_items
TO orders_demo.tbl__order_items AS
SELECT
  CAST(order_id AS String) AS order_id,
  CAST(JSONExtractString(item, 'sku') AS String) AS sku,
  CAST(coalesce(JSONExtractFloat(item, 'quantity'), 0) * coalesce(JSONExtractFloat(item, 'price'), 0) AS Float64) AS line_total,
  CAST(event_at AS DateTime64(3)) AS event_at,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS Nullable(DateTime64(3))) AS _replay_timestamp
FROM orders_demo.tbl__orders
ARRAY JOIN JSONExtractArrayRaw(status) AS item;
