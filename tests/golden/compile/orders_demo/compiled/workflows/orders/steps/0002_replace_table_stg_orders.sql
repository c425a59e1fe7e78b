CREATE OR REPLACE TABLE "sales"."stg_orders" AS
SELECT
  CAST(order_id AS BIGINT) AS order_id,
  CAST(customer_id AS BIGINT) AS customer_id,
  CAST(order_date AS DATE) AS order_date,
  CAST(lower(status) AS VARCHAR) AS status,
  CAST(amount AS DECIMAL(12, 2)) AS amount
FROM raw.orders;
