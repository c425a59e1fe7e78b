MODEL (
  description "Paid orders, one row per order",
);

SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(amount AS DOUBLE) AS amount,
  CAST(ordered_at AS DATE) AS day
FROM __source("orders")
WHERE status = 'paid'
