CREATE TABLE IF NOT EXISTS orders_demo.kafka__order_events (
    message String
) ENGINE = Kafka
SETTINGS kafka_broker_list = 'redpanda:9092', kafka_topic_list = 'source.order_events.live', kafka_group_name = 'streambuild_orders_demo_demo_order_events_orders_demo', kafka_format = 'JSONAsString';
