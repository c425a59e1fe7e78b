MODEL (
  description "1,000 rows per day of the window",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(day AS DATE) AS event_date,
  CAST(numbers.n AS BIGINT) AS n
FROM __source("numbers") AS numbers
CROSS JOIN generate_series(
  CAST(@partition_start() AS TIMESTAMP), CAST(@partition_end() AS TIMESTAMP) - INTERVAL '1 day', INTERVAL '1 day'
) AS day
