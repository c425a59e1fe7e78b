MODEL (
  description "Clicks per page",
  engine "SummingMergeTree()",
  order_by ["url"],
);

SELECT
  CAST(url AS String) AS url,
  CAST(count() AS UInt64) AS clicks
FROM __ref("click_events")
GROUP BY url
