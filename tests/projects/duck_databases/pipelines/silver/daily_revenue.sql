MODEL (
  description "Paid revenue per day",
  partitions (daily (column "day", start_date "2026-01-01")),
);

SELECT
  CAST(day AS DATE) AS day,
  CAST(count(*) AS BIGINT) AS orders,
  CAST(sum(amount) AS DOUBLE) AS revenue
FROM __ref("paid_orders")
WHERE day >= @partition_start() AND day < @partition_end()
GROUP BY day
