MODEL (
  description "a table over a view, which Sluice refuses: views are terminal",
);

SELECT
  CAST(customer AS @VARCHAR@) AS customer,
  CAST(sum(amount) AS @BIGINT@) AS amount
FROM __ref("paid_orders")
GROUP BY customer
