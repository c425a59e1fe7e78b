MODEL (
  description "visits and visitors per day, the unpartitioned input pruned to the window",
  partitions (daily (column "visit_date", start_date "2026-11-01")),
);

SELECT
  CAST(visit_date AS @DATE@) AS visit_date,
  CAST(count(*) AS @BIGINT@) AS visits,
  CAST(count(DISTINCT user_id) AS @BIGINT@) AS visitors
FROM __ref("stg_visits")
WHERE visit_date >= @partition_start() AND visit_date < @partition_end()
GROUP BY visit_date
