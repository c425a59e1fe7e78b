AUDIT (
  name "paid amounts are positive",
  severity error,
);

SELECT order_id, amount FROM __ref("paid_orders") WHERE amount <= 0
