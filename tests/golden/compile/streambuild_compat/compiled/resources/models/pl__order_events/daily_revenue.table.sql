CREATE TABLE orders_demo.tbl__daily_revenue (
    event_day Date,
    region LowCardinality(String),
    revenue Float64
) ENGINE = SummingMergeTree()
ORDER BY (event_day, region)
PARTITION BY toYYYYMM(event_day)
SETTINGS index_granularity = 8192
