MODEL (
  kind view,
  description "a view over a view, which Sluice refuses: views are terminal",
);

SELECT
  CAST(order_id AS @BIGINT@) AS order_id,
  CAST(amount AS @BIGINT@) AS amount
FROM __ref("paid_orders")
WHERE amount >= 30
