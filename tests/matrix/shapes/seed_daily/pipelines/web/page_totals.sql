MODEL (
  description "an unpartitioned table over a partitioned model",
);

SELECT
  CAST(page AS @VARCHAR@) AS page,
  CAST(sum(views) AS @BIGINT@) AS views,
  CAST(sum(amount) AS @BIGINT@) AS amount
FROM __ref("daily_kpis")
GROUP BY page
