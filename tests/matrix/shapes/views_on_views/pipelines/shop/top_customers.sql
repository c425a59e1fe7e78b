MODEL (
  kind view,
  description "a view over the table: customers of 100 or more",
);

SELECT
  CAST(customer AS @VARCHAR@) AS customer,
  CAST(amount AS @BIGINT@) AS amount
FROM __ref("customer_totals")
WHERE amount >= 100
