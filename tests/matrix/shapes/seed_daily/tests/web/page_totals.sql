TEST (name "page totals add up the days");

WITH __ref__daily_kpis AS (
  SELECT CAST('2026-11-01' AS @DATE@) AS event_date, 'home' AS page, 2 AS views, 8 AS amount
  UNION ALL SELECT CAST('2026-11-02' AS @DATE@), 'home', 1, 1
  UNION ALL SELECT CAST('2026-11-02' AS @DATE@), 'cart', 3, 6
),
__expected__page_totals AS (
  SELECT 'home' AS page, 3 AS views, 9 AS amount
  UNION ALL SELECT 'cart', 3, 6
)
SELECT 1
