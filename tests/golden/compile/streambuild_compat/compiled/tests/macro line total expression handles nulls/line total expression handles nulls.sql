WITH
__macro_actual__ AS (
SELECT coalesce(NULL, 0) * coalesce(2, 0) AS total
),
__macro_expected__ AS (
SELECT 0 AS total
),
__case_1_expected AS (
SELECT toNullable(toString(__case_rows.`total`)) AS `total`
FROM __macro_expected__ AS __case_rows
),
__case_1_actual AS (
SELECT toNullable(toString(__case_rows.`total`)) AS `total`
FROM __macro_actual__ AS __case_rows
),
__case_1_expected_counts AS (
SELECT `total`, count() AS __case_count
FROM __case_1_expected
GROUP BY `total`
),
__case_1_actual_counts AS (
SELECT `total`, count() AS __case_count
FROM __case_1_actual
GROUP BY `total`
)
SELECT 1 AS _case_index, 'missing' AS _diff_type, [toNullable(toString(l.`total`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_expected_counts AS l
ALL LEFT JOIN __case_1_actual_counts AS r ON isNotDistinctFrom(l.`total`, r.`total`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
UNION ALL
SELECT 1 AS _case_index, 'unexpected' AS _diff_type, [toNullable(toString(l.`total`))] AS _row_values, CAST(l.__case_count - coalesce(r.__case_count, 0) AS Int64) AS _multiplicity
FROM __case_1_actual_counts AS l
ALL LEFT JOIN __case_1_expected_counts AS r ON isNotDistinctFrom(l.`total`, r.`total`)
WHERE l.__case_count > coalesce(r.__case_count, 0)
