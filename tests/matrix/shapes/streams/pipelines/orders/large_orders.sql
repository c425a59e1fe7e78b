MODEL (
  description "orders of 50 or more, filled from order_lines",
);

SELECT
  CAST(order_id AS @BIGINT@) AS order_id,
  CAST(amount AS @BIGINT@) AS amount,
  CAST(_replay_offset AS @BIGINT@) AS _replay_offset
FROM __ref("order_lines")
WHERE amount >= 50
