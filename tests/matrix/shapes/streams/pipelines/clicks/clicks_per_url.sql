MODEL (
  kind view,
  description "clicks per page, counted when read",
);

SELECT
  CAST(url AS @VARCHAR@) AS url,
  CAST(count(*) AS @BIGINT@) AS clicks
FROM __ref("click_events")
GROUP BY url
