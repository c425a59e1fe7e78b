MODEL (
  description "the events of each day",
  partitions (daily (column "event_date", start_date "2026-01-01")),
  backfill_policy (multi_run 5),
);

SELECT
  CAST(event_id AS BIGINT) AS event_id,
  CAST(event_date AS DATE) AS event_date,
  CAST(amount AS BIGINT) AS amount
FROM __source("events")
WHERE event_date >= @partition_start() AND event_date < @partition_end()
