MODEL (
  description "events, typed",
);

SELECT
  CAST(event_id AS Int64) AS event_id,
  CAST(event_date AS Date) AS event_date,
  CAST(page AS String) AS page,
  CAST(amount AS Int64) AS amount
FROM __source("events")
