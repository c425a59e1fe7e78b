SELECT
  CAST(toDate(i.event_at) AS Date) AS event_day,
  CAST(r.region AS LowCardinality(String)) AS region,
  CAST(sum(i.line_total) AS Float64) AS revenue
FROM tbl__order_items AS i
LEFT JOIN tbl__region_lookup AS r ON r.order_id = i.order_id
GROUP BY event_day, region
