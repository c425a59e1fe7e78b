MODEL (
  description "clicks on the checkout page, filled from click_events",
);

SELECT
  CAST(user_id AS @BIGINT@) AS user_id,
  CAST(_replay_partition AS @INT@) AS _replay_partition,
  CAST(_replay_offset AS @BIGINT@) AS _replay_offset
FROM __ref("click_events")
WHERE url = '/checkout'
