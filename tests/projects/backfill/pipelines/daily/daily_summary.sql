MODEL (
  description "one row a day; single-run by default, so daily_events' multi_run 5 decides the chunks",
  partitions (daily (column "event_date", start_date "2026-01-01")),
);

SELECT
  CAST(event_date AS DATE) AS event_date,
  CAST(count(*) AS BIGINT) AS events,
  CAST(sum(amount) AS BIGINT) AS amount
FROM __ref("daily_events")
GROUP BY event_date
