MODEL (
  description "Paid orders and amount per day",
  engine "SummingMergeTree()",
  order_by ["day"],
);

SELECT
  CAST(toDate(_replay_timestamp) AS Date) AS day,
  CAST(count() AS UInt64) AS orders,
  CAST(sum(amount) AS Float64) AS amount
FROM __ref("paid_orders")
GROUP BY day
