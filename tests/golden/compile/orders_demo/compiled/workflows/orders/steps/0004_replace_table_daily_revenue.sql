CREATE OR REPLACE TABLE "sales"."daily_revenue" AS
-- @partition_start() / @partition_end() bound the run's window; Sluice also restricts the output to it.
SELECT
  CAST(order_date AS DATE) AS order_date,
  CAST(region AS VARCHAR) AS region,
  CAST(count(*) AS BIGINT) AS orders,
  CAST(sum(amount) AS DECIMAL(18, 2)) AS revenue
FROM sales.orders_enriched
WHERE order_date >= @partition_start() AND order_date < @partition_end()
GROUP BY order_date, region;
