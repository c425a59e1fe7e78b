MODEL (
  description "a table the views below read",
);

SELECT
  CAST(customer AS @VARCHAR@) AS customer,
  CAST(count(*) AS @BIGINT@) AS orders,
  CAST(sum(amount) AS @BIGINT@) AS amount
FROM __ref("stg_orders")
WHERE status = 'paid'
GROUP BY customer
