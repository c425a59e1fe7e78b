AUDIT (
  severity error,
  description "totals are checked once late orders have settled, a day after the last run",
  warmup "1d",
);

SELECT customer, total FROM __ref("customer_totals") WHERE total < 0
