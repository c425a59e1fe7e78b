AUDIT (
  severity error,
  description "an order has a positive amount",
);

SELECT id, amount FROM __ref("orders") WHERE amount <= 0
