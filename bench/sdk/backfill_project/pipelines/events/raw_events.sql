MODEL (
  description "The benchmark's rows: 100,000 a day of the seed's days.",
  partitions (daily (column "event_date", start_date "2025-01-01")),
);

SELECT
  CAST(day AS DATE) AS event_date,
  CAST(r.range AS BIGINT) AS id,
  CAST(r.range % 97 AS DOUBLE) AS amount
FROM __source("days") CROSS JOIN range(100000) AS r
WHERE day >= @partition_start() AND day < @partition_end()
