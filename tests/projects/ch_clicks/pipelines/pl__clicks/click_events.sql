MODEL (
  description "Clicks on a page, one row per event",
  order_by ["_replay_partition", "_replay_offset"],
);

SELECT
  CAST(c.url AS String) AS url,
  CAST(user_id AS UInt64) AS user_id,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(c._replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS DateTime) AS _replay_timestamp
FROM __source("clicks") AS c
WHERE c.url != ''
