SELECT
  CAST(session_id AS String) AS session_id,
  CAST(_replay_timestamp AS DateTime64(3)) AS _replay_timestamp
FROM (SELECT *, event_timestamp AS _replay_timestamp FROM clicks_existing)
