MODEL (
  description "a partitioned model over a partitioned upstream, the upstream aliased",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(k.event_date AS @DATE@) AS event_date,
  CAST(k.page AS @VARCHAR@) AS page,
  CAST(k.amount AS @BIGINT@) AS amount
FROM __ref("daily_kpis") AS k
WHERE k.amount >= 5
