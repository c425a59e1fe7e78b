CREATE OR REPLACE VIEW "sales"."revenue_by_region" AS
SELECT
  CAST(region AS VARCHAR) AS region,
  CAST(sum(orders) AS BIGINT) AS orders,
  CAST(sum(revenue) AS DECIMAL(18, 2)) AS revenue
FROM sales.daily_revenue
GROUP BY region;
