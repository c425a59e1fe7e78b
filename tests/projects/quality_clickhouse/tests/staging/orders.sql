TEST ();

WITH __source__orders_raw AS (
  SELECT '1' AS id, 'ada' AS customer, '30' AS amount, toNullable('paid') AS status
  UNION ALL SELECT '4', 'cyd', '8', NULL
),
__expected__orders AS (
  SELECT 1 AS id, 'ada' AS customer, 30 AS amount, toNullable('paid') AS status
  UNION ALL SELECT 4, 'cyd', 8, NULL
)
SELECT 1
