SELECT
  CAST(region AS VARCHAR) AS region,
  CAST(sum(orders) AS BIGINT) AS orders,
  CAST(sum(revenue) AS DECIMAL(18, 2)) AS revenue
FROM daily_revenue
GROUP BY region
