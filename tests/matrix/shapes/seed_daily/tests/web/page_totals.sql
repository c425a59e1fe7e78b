TEST (name "page totals add up the days");

WITH __ref__daily_kpis AS (
  SELECT DATE '2026-11-01' AS event_date, 'home' AS page, 2 AS views, 8 AS amount
  UNION ALL SELECT DATE '2026-11-02', 'home', 1, 1
  UNION ALL SELECT DATE '2026-11-02', 'cart', 3, 6
),
__expected__page_totals AS (
  SELECT 'home' AS page, 3 AS views, 9 AS amount
  UNION ALL SELECT 'cart', 3, 6
)
SELECT 1
