CREATE OR REPLACE TABLE "core"."daily_totals" AS
/* No filter on purpose: the engine restricts the output to the run's window. */
SELECT
  CAST(event_date AS DATE) AS event_date,
  CAST(count(*) AS BIGINT) AS events,
  CAST(sum(amount) AS BIGINT) AS amount
FROM core.clean_events
GROUP BY event_date;
