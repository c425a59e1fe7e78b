MODEL (
  description "events, typed",
);

SELECT
  CAST(event_id AS @BIGINT@) AS event_id,
  CAST(event_date AS @DATE@) AS event_date,
  CAST(page AS @VARCHAR@) AS page,
  CAST(amount AS @BIGINT@) AS amount
FROM __source("events")
