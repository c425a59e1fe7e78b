MODEL (
  description "Clicks per page",
);

SELECT
  CAST(url AS VARCHAR) AS url,
  CAST(count(*) AS BIGINT) AS clicks
FROM __ref("click_events")
GROUP BY url
