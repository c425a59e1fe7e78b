MODEL (
  description "1,000 rows per day of the window",
  partitions (daily (column "event_date", start_date "2026-11-01")),
);

SELECT
  CAST(day AS Date) AS event_date,
  CAST(numbers.n AS UInt64) AS n
FROM __source("numbers") AS numbers
CROSS JOIN (
  SELECT arrayJoin(arrayMap(i -> @partition_start() + i, range(toUInt32(@partition_end() - @partition_start())))) AS day
) AS days
