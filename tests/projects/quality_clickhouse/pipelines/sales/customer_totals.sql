MODEL (
  description "what each customer spent, refunds left out",
  order_by ["customer"],
);

SELECT
  CAST(customer AS String) AS customer,
  CAST(sum(amount) AS Int64) AS total,
  CAST(count() AS Int64) AS orders
FROM __ref("orders")
WHERE isNull(status) OR status != 'refunded'
GROUP BY customer
