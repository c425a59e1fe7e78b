SELECT * FROM orders_demo.tbl__orders WHERE status NOT IN ('created', 'paid', 'cancelled')
