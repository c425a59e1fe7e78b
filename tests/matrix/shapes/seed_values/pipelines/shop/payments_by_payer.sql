MODEL (
  description "amount paid per payer",
);

SELECT
  CAST(payer AS @VARCHAR@) AS payer,
  CAST(sum(amount) AS @BIGINT@) AS amount
FROM __source("payments")
GROUP BY payer
