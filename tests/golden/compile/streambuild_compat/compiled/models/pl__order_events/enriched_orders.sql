SELECT
  CAST(o.order_id AS String) AS order_id,
  CAST(o.status AS String) AS status,
  CAST(r.region AS String) AS region
FROM tbl__orders AS o
LEFT JOIN tbl__region_lookup AS r ON r.order_id = o.order_id
