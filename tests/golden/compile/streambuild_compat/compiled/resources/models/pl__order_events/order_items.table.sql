CREATE TABLE orders_demo.tbl__order_items (
    order_id String,
    sku String,
    line_total Float64,
    event_at DateTime64(3),
    _replay_partition Int32,
    _replay_offset Int64,
    _replay_timestamp Nullable(DateTime64(3))
) ENGINE = MergeTree()
ORDER BY (order_id, _replay_partition, _replay_offset)
