MODEL (
  description "The latest tier of each customer",
  engine "ReplacingMergeTree()",
  order_by ["customer"],
);

SELECT
  CAST(customer AS String) AS customer,
  CAST(tier AS String) AS tier,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset
FROM __source("events")
WHERE status = 'tier'
