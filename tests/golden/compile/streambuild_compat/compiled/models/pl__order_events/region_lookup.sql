SELECT
  CAST(order_id AS String) AS order_id,
  CAST(region AS LowCardinality(String)) AS region,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset
FROM tbl__orders
