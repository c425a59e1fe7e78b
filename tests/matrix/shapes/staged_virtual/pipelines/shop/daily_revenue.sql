MODEL (
  description "revenue per day",
);

SELECT
  CAST(ordered_on AS @DATE@) AS day,
  CAST(count(*) AS @BIGINT@) AS orders,
  CAST(sum(amount) AS @BIGINT@) AS revenue
FROM __ref("paid_orders")
GROUP BY ordered_on
