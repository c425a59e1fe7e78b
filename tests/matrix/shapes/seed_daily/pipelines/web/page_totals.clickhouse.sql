MODEL (
  description "an unpartitioned table over a partitioned model",
);

SELECT
  CAST(page AS String) AS page,
  CAST(sum(views) AS Int64) AS views,
  CAST(sum(amount) AS Int64) AS amount
FROM __ref("daily_kpis")
GROUP BY page
