MODEL (
  description "Paid orders and amount per day and tier",
);

SELECT
  CAST(CAST(p._replay_timestamp AS DATE) AS DATE) AS day,
  CAST(t.tier AS VARCHAR) AS tier,
  CAST(count(*) AS BIGINT) AS orders,
  CAST(sum(p.amount) AS DOUBLE) AS amount
FROM __ref("paid_orders") AS p
LEFT JOIN __ref("customer_tiers", ref_type='reference') AS t ON t.customer = p.customer
GROUP BY 1, 2
