MODEL (
  description "orders, typed",
  order_by ["id"],
);

SELECT
  CAST(id AS Int64) AS id,
  CAST(customer AS String) AS customer,
  CAST(amount AS Int64) AS amount,
  CAST(status AS Nullable(String)) AS status
FROM __source("orders_raw")
