MODEL (
  kind view,
  description "sales per region, summed when read",
);

SELECT
  CAST(region AS @VARCHAR@) AS region,
  CAST(count(*) AS @BIGINT@) AS sales,
  CAST(sum(total) AS @BIGINT@) AS total
FROM __ref("sale_events")
GROUP BY region
