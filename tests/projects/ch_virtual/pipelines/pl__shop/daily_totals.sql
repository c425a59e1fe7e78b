MODEL (
  description "Paid orders and amount per day and tier",
  engine "SummingMergeTree()",
  order_by ["day", "tier"],
);

SELECT
  CAST(toDate(p._replay_timestamp) AS Date) AS day,
  CAST(t.tier AS String) AS tier,
  CAST(count() AS UInt64) AS orders,
  CAST(sum(p.amount) AS Float64) AS total_amount
FROM __ref("paid_orders") AS p
LEFT JOIN __ref("customer_tiers", ref_type='reference') AS t ON t.customer = p.customer
GROUP BY day, tier
