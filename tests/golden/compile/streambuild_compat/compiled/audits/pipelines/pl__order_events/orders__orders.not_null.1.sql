SELECT * FROM orders_demo.tbl__orders WHERE order_id IS NULL
