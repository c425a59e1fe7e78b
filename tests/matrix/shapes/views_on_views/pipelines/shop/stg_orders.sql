MODEL (
  description "orders, typed",
);

SELECT
  CAST(order_id AS @BIGINT@) AS order_id,
  CAST(customer AS @VARCHAR@) AS customer,
  CAST(amount AS @BIGINT@) AS amount,
  CAST(status AS @VARCHAR@) AS status
FROM __source("orders")
