-- 1 prepare create_schema_raw
CREATE SCHEMA IF NOT EXISTS "raw";

-- 2 realization replace_table_dim_users
CREATE OR REPLACE TABLE "raw"."dim_users" AS
SELECT
  CAST(user_id AS BIGINT) AS user_id,
  CAST(user_name AS VARCHAR) AS user_name
FROM raw.users;
