CREATE MATERIALIZED VIEW IF NOT EXISTS orders_demo.mv__order_events
TO orders_demo.raw__order_events AS
SELECT
    _key AS kafka_key,
    message AS kafka_value,
    _topic AS kafka_topic,
    _partition AS kafka_partition,
    _offset AS kafka_offset,
    _timestamp AS kafka_timestamp,
    _partition AS _replay_partition,
    _offset AS _replay_offset,
    _timestamp AS _replay_timestamp,
    _headers.name AS kafka_header_keys,
    _headers.value AS kafka_header_values,
    now64(3) AS kafka_landed_at,
    now64(3) AS _replay_landed_at
FROM kafka__order_events;
