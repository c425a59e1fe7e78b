CREATE OR REPLACE VIEW "core"."top_users" AS
SELECT
  CAST(user_name AS VARCHAR) AS user_name,
  CAST(amount AS BIGINT) AS amount
FROM core.user_totals_table
ORDER BY amount DESC
LIMIT 2;
