MODEL (
  description "orders, typed",
);

SELECT
  CAST(id AS BIGINT) AS id,
  CAST(customer AS VARCHAR) AS customer,
  CAST(amount AS BIGINT) AS amount,
  CAST(status AS VARCHAR) AS status
FROM __source("orders_raw")
