MODEL (
  description "Paid orders, one row per event",
);

SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer AS VARCHAR) AS customer,
  CAST(amount AS DOUBLE) AS amount,
  CAST(_replay_partition AS INTEGER) AS _replay_partition,
  CAST(_replay_offset AS BIGINT) AS _replay_offset,
  CAST(_replay_timestamp AS TIMESTAMP) AS _replay_timestamp
FROM __source("events")
WHERE status = 'paid'
