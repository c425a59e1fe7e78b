CREATE OR REPLACE TABLE "core"."clean_events" AS
SELECT
  CAST(event_id AS BIGINT) AS event_id,
  CAST(user_id AS BIGINT) AS user_id,
  CAST(event_date AS DATE) AS event_date,
  CAST(amount AS BIGINT) AS amount
FROM raw.events -- a comment with __ref("not_a_ref");
