MODEL (
  description "revenue per day",
);

SELECT
  CAST(ordered_on AS Date) AS day,
  CAST(count(*) AS Int64) AS orders,
  CAST(sum(amount) AS Int64) AS revenue
FROM __ref("paid_orders")
GROUP BY ordered_on
