MODEL (
  description "unpartitioned: runs once, after the partitioned chunks",
);

SELECT
  CAST(count(*) AS BIGINT) AS days,
  CAST(sum(events) AS BIGINT) AS events
FROM __ref("daily_summary")
