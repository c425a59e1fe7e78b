SELECT * FROM orders_demo.tbl__order_items WHERE line_total IS NULL
