CREATE TABLE IF NOT EXISTS orders_demo.raw__order_events (
    kafka_key String,
    kafka_value String,
    kafka_topic String,
    kafka_partition Int32,
    kafka_offset Int64,
    kafka_timestamp Nullable(DateTime64(3)),
    _replay_partition Int32,
    _replay_offset Int64,
    _replay_timestamp Nullable(DateTime64(3)),
    kafka_header_keys Array(String),
    kafka_header_values Array(String),
    kafka_landed_at DateTime64(3),
    _replay_landed_at DateTime64(3)
) ENGINE = MergeTree()
ORDER BY (_replay_partition, _replay_offset)
TTL _replay_landed_at + INTERVAL 14 DAY;
