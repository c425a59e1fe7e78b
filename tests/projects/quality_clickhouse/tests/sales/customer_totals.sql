TEST (name "totals leave refunds out");

WITH __ref__orders AS (
  SELECT 1 AS id, 'ada' AS customer, 30 AS amount, toNullable('paid') AS status
  UNION ALL SELECT 2, 'ada', 12, toNullable('paid')
  UNION ALL SELECT 3, 'bob', 5, toNullable('refunded')
  UNION ALL SELECT 4, 'cyd', 8, NULL
),
__expected__customer_totals AS (
  SELECT 'ada' AS customer, 42 AS total, 2 AS orders
  UNION ALL SELECT 'cyd', 8, 1
),
__assert__no_negative_totals AS (
  SELECT * FROM __ref("customer_totals") WHERE total < 0
)
SELECT 1
