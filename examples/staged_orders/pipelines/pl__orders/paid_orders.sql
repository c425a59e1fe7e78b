MODEL (
  description "Paid orders, one row per order",
);

SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer AS VARCHAR) AS customer,
  CAST(amount AS DOUBLE) AS amount,
  CAST(ordered_at AS TIMESTAMP) AS ordered_at
FROM __source("orders")
WHERE status = 'paid'
