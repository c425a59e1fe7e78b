CREATE TABLE orders_demo.kafka__refunds (
    message String
) ENGINE = Kafka
SETTINGS kafka_broker_list = 'redpanda:9092', kafka_topic_list = 'source.refunds.created', kafka_group_name = 'streambuild_orders_demo_demo_refunds_orders_demo', kafka_format = 'JSONAsString'
