CREATE OR REPLACE TABLE "core"."user_totals_table" AS
SELECT
  CAST(e.user_id AS BIGINT) AS user_id,
  CAST(u.user_name AS VARCHAR) AS user_name,
  CAST(sum(e.amount) AS BIGINT) AS amount
FROM core.clean_events AS e
JOIN raw.dim_users AS u ON u.user_id = e.user_id
GROUP BY e.user_id, u.user_name;
