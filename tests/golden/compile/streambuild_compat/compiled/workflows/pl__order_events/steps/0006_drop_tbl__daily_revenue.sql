DROP TABLE IF EXISTS `orders_demo`.`mv__daily_revenue` SYNC;
DROP TABLE IF EXISTS `orders_demo`.`tbl__daily_revenue` SYNC;
