MODEL (
  description "The tier of each customer",
);

SELECT
  CAST(customer AS VARCHAR) AS customer,
  CAST(max(tier) AS VARCHAR) AS tier
FROM __source("events")
WHERE status = 'tier'
GROUP BY customer
