MODEL (
  description "1,000 rows per day of the window",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(day AS DATE) AS event_date,
  CAST(numbers.n AS INT64) AS n
FROM __source("numbers") AS numbers
CROSS JOIN UNNEST(GENERATE_DATE_ARRAY(@partition_start(), DATE_SUB(@partition_end(), INTERVAL 1 DAY))) AS day
