TEST (name "without a partition, the day is the model's start_date");

WITH __ref__stg_visits AS (
  SELECT 1 AS visit_id, @partition_start() AS visit_date, 7 AS user_id, 'home' AS page
  UNION ALL SELECT 2, @partition_end(), 8, 'home'
),
__expected__daily_visits AS (
  SELECT CAST('2026-11-01' AS @DATE@) AS visit_date, 1 AS visits, 1 AS visitors
)
SELECT 1
