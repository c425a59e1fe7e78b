SELECT
  CAST(user_name AS VARCHAR) AS user_name,
  CAST(amount AS BIGINT) AS amount
FROM user_totals_table
ORDER BY amount DESC
LIMIT 2
