-- 1 prepare create_schema_core
CREATE SCHEMA IF NOT EXISTS "core";

-- 2 realization replace_table_clean_events
CREATE OR REPLACE TABLE "core"."clean_events" AS
SELECT
  CAST(event_id AS BIGINT) AS event_id,
  CAST(user_id AS BIGINT) AS user_id,
  CAST(event_date AS DATE) AS event_date,
  CAST(amount AS BIGINT) AS amount
FROM raw.events -- a comment with __ref("not_a_ref");

-- 3 realization replace_table_daily_totals
CREATE OR REPLACE TABLE "core"."daily_totals" AS
/* No filter on purpose: the engine restricts the output to the run's window. */
SELECT
  CAST(event_date AS DATE) AS event_date,
  CAST(count(*) AS BIGINT) AS events,
  CAST(sum(amount) AS BIGINT) AS amount
FROM core.clean_events
GROUP BY event_date;

-- 4 realization replace_table_user_totals_table
CREATE OR REPLACE TABLE "core"."user_totals_table" AS
SELECT
  CAST(e.user_id AS BIGINT) AS user_id,
  CAST(u.user_name AS VARCHAR) AS user_name,
  CAST(sum(e.amount) AS BIGINT) AS amount
FROM core.clean_events AS e
JOIN raw.dim_users AS u ON u.user_id = e.user_id
GROUP BY e.user_id, u.user_name;

-- 5 realization replace_view_top_users
CREATE OR REPLACE VIEW "core"."top_users" AS
SELECT
  CAST(user_name AS VARCHAR) AS user_name,
  CAST(amount AS BIGINT) AS amount
FROM core.user_totals_table
ORDER BY amount DESC
LIMIT 2;
