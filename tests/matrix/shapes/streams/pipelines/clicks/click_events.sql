MODEL (
  description "clicks on a page, one row per event",
);

SELECT
  CAST(c.url AS @VARCHAR@) AS url,
  CAST(user_id AS @BIGINT@) AS user_id,
  CAST(_replay_partition AS @INT@) AS _replay_partition,
  CAST(c._replay_offset AS @BIGINT@) AS _replay_offset,
  CAST(_replay_timestamp AS @TIMESTAMP@) AS _replay_timestamp
FROM __source("clicks") AS c
WHERE c.url <> ''
