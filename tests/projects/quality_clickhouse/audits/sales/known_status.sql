AUDIT (
  severity warning,
  description "every order has a status",
);

SELECT id, customer, status FROM __ref("orders") WHERE status IS NULL
