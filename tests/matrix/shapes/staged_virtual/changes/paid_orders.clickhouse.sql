MODEL (
  description "paid orders, one row per order",
);

SELECT
  CAST(order_id AS Int64) AS order_id,
  CAST(customer AS String) AS customer,
  CAST(amount AS Int64) AS amount,
  CAST(amount * 2 AS Int64) AS doubled,
  CAST(ordered_on AS Date) AS ordered_on
FROM __source("orders")
WHERE status = 'paid' AND amount > 20
