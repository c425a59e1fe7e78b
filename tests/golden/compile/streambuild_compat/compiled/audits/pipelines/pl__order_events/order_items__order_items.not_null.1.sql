SELECT * FROM orders_demo.tbl__order_items WHERE sku IS NULL
