DROP TABLE IF EXISTS `orders_demo`.`mv__order_items` SYNC;
DROP TABLE IF EXISTS `orders_demo`.`tbl__order_items` SYNC;
