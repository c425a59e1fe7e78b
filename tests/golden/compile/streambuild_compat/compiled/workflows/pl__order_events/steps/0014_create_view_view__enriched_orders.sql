CREATE VIEW orders_demo.view__enriched_orders AS
SELECT
  CAST(o.order_id AS String) AS order_id,
  CAST(o.status AS String) AS status,
  CAST(r.region AS String) AS region
FROM orders_demo.tbl__orders AS o
LEFT JOIN orders_demo.tbl__region_lookup AS r ON r.order_id = o.order_id;
