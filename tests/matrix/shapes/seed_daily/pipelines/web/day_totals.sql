MODEL (
  description "a partitioned model over a partitioned upstream, the upstream not aliased",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(event_date AS @DATE@) AS event_date,
  CAST(sum(views) AS @BIGINT@) AS views,
  CAST(sum(amount) AS @BIGINT@) AS amount
FROM __ref("daily_kpis")
GROUP BY event_date
