MODEL (
  description "paid orders, one row per order",
);

SELECT
  CAST(order_id AS @BIGINT@) AS order_id,
  CAST(customer AS @VARCHAR@) AS customer,
  CAST(amount AS @BIGINT@) AS amount,
  CAST(ordered_on AS @DATE@) AS ordered_on
FROM __source("orders")
WHERE status = 'paid'
