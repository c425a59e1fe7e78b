SELECT * FROM orders_demo.tbl__daily_revenue WHERE revenue < 0
