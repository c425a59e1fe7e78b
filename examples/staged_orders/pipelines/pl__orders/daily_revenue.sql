MODEL (
  description "Revenue per day and customer tier",
);

SELECT
  CAST(CAST(p.ordered_at AS DATE) AS DATE) AS day,
  CAST(c.tier AS VARCHAR) AS tier,
  CAST(count(*) AS BIGINT) AS orders,
  CAST(sum(p.amount) AS DOUBLE) AS revenue
FROM __ref("paid_orders") AS p
LEFT JOIN __ref("customers", ref_type='reference') AS c ON c.customer = p.customer
GROUP BY 1, 2
