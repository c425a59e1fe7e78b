MODEL (
  description "sales, one row per event, the total in cents",
);

SELECT
  CAST(s.sale_id AS @BIGINT@) AS sale_id,
  CAST(s.region AS @VARCHAR@) AS region,
  CAST(s.total * 100 AS @BIGINT@) AS total,
  CAST(_replay_partition AS @INT@) AS _replay_partition,
  CAST(s._replay_offset AS @BIGINT@) AS _replay_offset,
  CAST(_replay_timestamp AS @TIMESTAMP@) AS _replay_timestamp
FROM __source("sales") AS s
