MODEL (
  description "views and amount per day and page; the window bounds prune the unpartitioned input",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(event_date AS Date) AS event_date,
  CAST(page AS String) AS page,
  CAST(count(*) AS Int64) AS views,
  CAST(sum(amount) AS Int64) AS amount
FROM __ref("stg_events")
WHERE event_date >= @partition_start() AND event_date < @partition_end()
GROUP BY event_date, page
