CREATE TABLE orders_demo.tbl__daily_revenue (
    event_day Date,
    region LowCardinality(String),
    revenue Float64
) ENGINE = SummingMergeTree()
ORDER BY (event_day, region)
PARTITION BY toYYYYMM(event_day)
SETTINGS index_granularity = 8192;
CREATE MATERIALIZED VIEW orders_demo.mv__daily_revenue
TO orders_demo.tbl__daily_revenue AS
SELECT
  CAST(toDate(i.event_at) AS Date) AS event_day,
  CAST(r.region AS LowCardinality(String)) AS region,
  CAST(sum(i.line_total) AS Float64) AS revenue
FROM orders_demo.tbl__order_items AS i
LEFT JOIN orders_demo.tbl__region_lookup AS r ON r.order_id = i.order_id
GROUP BY event_day, region;
