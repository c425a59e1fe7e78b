MODEL (
  kind view,
  description "a view over a table: the paid orders",
);

SELECT
  CAST(order_id AS @BIGINT@) AS order_id,
  CAST(customer AS @VARCHAR@) AS customer,
  CAST(amount AS @BIGINT@) AS amount
FROM __ref("stg_orders")
WHERE status = 'paid'
