MODEL (
  description "Views over every day",
);

SELECT
  CAST(sum(views) AS UInt64) AS views,
  CAST(max(day) AS Date) AS last_day
FROM __ref("daily_kpis")
