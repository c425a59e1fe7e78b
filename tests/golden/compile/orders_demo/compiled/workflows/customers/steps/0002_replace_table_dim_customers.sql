CREATE OR REPLACE TABLE "silver"."dim_customers" AS
SELECT
  CAST(customer_id AS BIGINT) AS customer_id,
  CAST(trim(name) AS VARCHAR) AS customer_name,
  CAST(upper(region) AS VARCHAR) AS region,
  CAST(signup_date AS DATE) AS signup_date
FROM raw.customers;
