MODEL (
  description "Page views, one row per event",
);

SELECT
  CAST(toDate(event_time) AS Date) AS day,
  CAST(user_id AS UInt64) AS user_id,
  CAST(page AS String) AS page
FROM __source("events")
