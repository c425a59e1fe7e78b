MODEL (
  description "visits, typed",
);

SELECT
  CAST(visit_id AS @BIGINT@) AS visit_id,
  CAST(visit_date AS @DATE@) AS visit_date,
  CAST(user_id AS @BIGINT@) AS user_id,
  CAST(page AS @VARCHAR@) AS page
FROM __source("visits")
