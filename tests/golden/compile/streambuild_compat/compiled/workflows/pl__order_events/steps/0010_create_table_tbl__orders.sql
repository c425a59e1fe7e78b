CREATE TABLE orders_demo.tbl__orders (
    order_id String,
    status String,
    region String,
    event_at DateTime64(3),
    _replay_partition Int32,
    _replay_offset Int64,
    _replay_timestamp Nullable(DateTime64(3))
) ENGINE = MergeTree()
ORDER BY (order_id, _replay_partition, _replay_offset)
PARTITION BY toYYYYMM(event_at);
