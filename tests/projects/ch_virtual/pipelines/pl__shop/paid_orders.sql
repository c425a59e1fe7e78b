MODEL (
  description "Paid orders, one row per event",
  order_by ["_replay_partition", "_replay_offset"],
);

SELECT
  CAST(order_id AS UInt64) AS order_id,
  CAST(customer AS String) AS customer,
  CAST(amount AS Float64) AS amount,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS DateTime) AS _replay_timestamp
FROM __source("events")
WHERE status = 'paid'
