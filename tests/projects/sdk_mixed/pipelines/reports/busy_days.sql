MODEL (
  description "The days the code asset silver.event_counts counted at least three events on (a model reading code).",
);

SELECT
  CAST(event_date AS DATE) AS event_date,
  CAST(events AS BIGINT) AS events
FROM __ref("event_counts")
WHERE events >= 3
