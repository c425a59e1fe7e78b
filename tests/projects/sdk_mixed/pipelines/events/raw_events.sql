MODEL (
  description "Three events a day (bronze), one daily partition per event_date.",
  partitions (daily (column "event_date", start_date "2026-01-01")),
);

SELECT
  CAST(day AS DATE) AS event_date,
  CAST(r.range AS BIGINT) AS id
FROM __source("days") CROSS JOIN range(3) AS r
WHERE day >= @partition_start() AND day < @partition_end()
