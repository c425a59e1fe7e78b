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
