MODEL (
  description "Rows of slow_daily per day",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(event_date AS @DATE@) AS event_date,
  CAST(count(*) AS @BIGINT@) AS row_count
FROM __ref("slow_daily")
GROUP BY event_date
