-- 1 prepare create_schema_sales
CREATE SCHEMA IF NOT EXISTS "sales";

-- 2 realization replace_table_stg_orders
CREATE OR REPLACE TABLE "sales"."stg_orders" AS
SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer_id AS BIGINT) AS customer_id,
  CAST(order_date AS DATE) AS order_date,
  CAST(lower(status) AS VARCHAR) AS status,
  CAST(amount AS DECIMAL(12, 2)) AS amount
FROM raw.orders;

-- 3 realization replace_table_orders_enriched
CREATE OR REPLACE TABLE "sales"."orders_enriched" AS
SELECT
  CAST(o.order_id AS BIGINT) AS order_id,
  CAST(o.order_date AS DATE) AS order_date,
  CAST(o.status AS VARCHAR) AS status,
  CAST(o.amount AS DECIMAL(12, 2)) AS amount,
  CAST(coalesce(c.region, 'UNKNOWN') AS VARCHAR) AS region
FROM sales.stg_orders AS o
LEFT JOIN silver.dim_customers AS c
  ON c.customer_id = o.customer_id
WHERE o.status <> 'cancelled';

-- 4 realization replace_table_daily_revenue
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

-- 5 realization replace_view_revenue_by_region
CREATE OR REPLACE VIEW "sales"."revenue_by_region" AS
SELECT
  CAST(region AS VARCHAR) AS region,
  CAST(sum(orders) AS BIGINT) AS orders,
  CAST(sum(revenue) AS DECIMAL(18, 2)) AS revenue
FROM sales.daily_revenue
GROUP BY region;
