MODEL (
  order_by ["_replay_partition", "_replay_offset"],
);

SELECT
  CAST(JSONExtractString(kafka_value, 'order_id') AS String) AS order_id,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset
FROM __source("clicks")
