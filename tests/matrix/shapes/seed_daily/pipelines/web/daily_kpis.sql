MODEL (
  description "views and amount per day and page; the window bounds prune the unpartitioned input",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(event_date AS @DATE@) AS event_date,
  CAST(page AS @VARCHAR@) AS page,
  CAST(count(*) AS @BIGINT@) AS views,
  CAST(sum(amount) AS @BIGINT@) AS amount
FROM __ref("stg_events")
WHERE event_date >= @partition_start() AND event_date < @partition_end()
GROUP BY event_date, page
