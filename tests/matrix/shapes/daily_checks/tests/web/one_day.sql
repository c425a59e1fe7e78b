TEST (name "daily visits count the test's day", partition "2026-11-02");

WITH __ref__stg_visits AS (
  SELECT 1 AS visit_id, CAST('2026-11-01' AS @DATE@) AS visit_date, 7 AS user_id, 'home' AS page
  UNION ALL SELECT 2, CAST('2026-11-02' AS @DATE@), 7, 'home'
  UNION ALL SELECT 3, CAST('2026-11-02' AS @DATE@), 8, 'cart'
  UNION ALL SELECT 4, CAST('2026-11-02' AS @DATE@), 8, 'home'
  UNION ALL SELECT 5, CAST('2026-11-03' AS @DATE@), 9, 'home'
),
__expected__daily_visits AS (
  SELECT CAST('2026-11-02' AS @DATE@) AS visit_date, 3 AS visits, 2 AS visitors
)
SELECT 1
