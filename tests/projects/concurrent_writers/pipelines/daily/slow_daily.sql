MODEL (
  description "1,000 rows per day of the window",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(d.day AS @DATE@) AS event_date,
  CAST(numbers.n AS @BIGINT@) AS n
FROM __source("numbers") AS numbers
CROSS JOIN __ref("days", ref_type='reference') AS d
WHERE d.day >= @partition_start() AND d.day < @partition_end()
