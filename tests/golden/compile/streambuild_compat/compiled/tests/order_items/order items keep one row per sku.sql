WITH
__ref__orders AS (
    SELECT 'o1' AS order_id, '[{"sku":"a","quantity":2,"price":3}]' AS status,
           toDateTime64('2026-01-01 00:00:00', 3) AS event_at,
           0 AS _replay_partition, 1 AS _replay_offset, toDateTime64('2026-01-01 00:00:00', 3) AS _replay_timestamp
),
__expected__order_items AS (
    SELECT 'o1' AS order_id, 'a' AS sku, 6.0 AS line_total
),
__model__order_items AS (
SELECT
  CAST(order_id AS String) AS order_id,
  CAST(JSONExtractString(item, 'sku') AS String) AS sku,
  CAST(coalesce(JSONExtractFloat(item, 'quantity'), 0) * coalesce(JSONExtractFloat(item, 'price'), 0) AS Float64) AS line_total,
  CAST(event_at AS DateTime64(3)) AS event_at,
  CAST(_replay_partition AS Int32) AS _replay_partition,
  CAST(_replay_offset AS Int64) AS _replay_offset,
  CAST(_replay_timestamp AS Nullable(DateTime64(3))) AS _replay_timestamp
FROM __ref__orders
ARRAY JOIN JSONExtractArrayRaw(status) AS item
),
__case_1_expected AS (
SELECT CAST(__case_rows.`order_id` AS String) AS `order_id`, CAST(__case_rows.`sku` AS String) AS `sku`, CAST(__case_rows.`line_total` AS Float64) AS `line_total`
FROM __expected__order_items AS __case_rows
),
__case_1_actual AS (
SELECT __case_rows.`order_id` AS `order_id`, __case_rows.`sku` AS `sku`, __case_rows.`line_total` AS `line_total`
FROM __model__order_items AS __case_rows
),
__case_1_expected_counts AS (
SELECT `order_id`, `sku`, `line_total`, count() AS __case_count
FROM __case_1_expected
GROUP BY `order_id`, `sku`, `line_total`
),
__case_1_actual_counts AS (
SELECT `order_id`, `sku`, `line_total`, count() AS __case_count
FROM __case_1_actual
GROUP BY `order_id`, `sku`, `line_total`
)
SELECT 1 AS _case_index, 'missing' AS _diff_type, [toNullable(toString(l.`order_id`)), toNullable(toString(l.`sku`)), toNullable(toString(l.`line_total`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_expected_counts AS l
ALL LEFT JOIN __case_1_actual_counts AS r ON isNotDistinctFrom(l.`order_id`, r.`order_id`) AND isNotDistinctFrom(l.`sku`, r.`sku`) AND isNotDistinctFrom(l.`line_total`, r.`line_total`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
UNION ALL
SELECT 1 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(l.`order_id`)), toNullable(toString(l.`sku`)), toNullable(toString(l.`line_total`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_actual_counts AS l
ALL LEFT JOIN __case_1_expected_counts AS r ON isNotDistinctFrom(l.`order_id`, r.`order_id`) AND isNotDistinctFrom(l.`sku`, r.`sku`) AND isNotDistinctFrom(l.`line_total`, r.`line_total`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
