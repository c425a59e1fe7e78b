MODEL (
  description "Views and visitors per day",
  partitions (daily (column "day", start_date "2026-01-01")),
);

SELECT
  CAST(day AS Date) AS day,
  CAST(count() AS UInt64) AS views,
  CAST(uniqExact(user_id) AS UInt64) AS visitors
FROM __ref("stg_events")
GROUP BY day
