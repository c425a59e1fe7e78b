MODEL (
  description "what each customer spent, refunds left out",
);

SELECT
  CAST(customer AS VARCHAR) AS customer,
  CAST(sum(amount) AS BIGINT) AS total,
  CAST(count(*) AS BIGINT) AS orders
FROM __ref("orders")
WHERE status IS DISTINCT FROM 'refunded'
GROUP BY customer
