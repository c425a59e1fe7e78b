AUDIT (
  name "sale totals are positive",
  severity error,
);

SELECT sale_id, total FROM __ref("sale_events") WHERE total <= 0
