CREATE TABLE orders_demo.tbl__region_lookup (
    order_id String,
    region LowCardinality(String),
    _replay_partition Int32,
    _replay_offset Int64
) ENGINE = ReplacingMergeTree()
ORDER BY (order_id)
