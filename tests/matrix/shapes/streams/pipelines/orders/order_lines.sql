MODEL (
  description "orders, the replay roles read from part, ofs and ts",
);

SELECT
  CAST(o.order_id AS @BIGINT@) AS order_id,
  CAST(o.amount AS @BIGINT@) AS amount,
  CAST(o._replay_partition AS @INT@) AS _replay_partition,
  CAST(_replay_offset AS @BIGINT@) AS _replay_offset,
  CAST(o._replay_timestamp AS @TIMESTAMP@) AS _replay_timestamp
FROM __source("orders") AS o
WHERE o.amount > 0
