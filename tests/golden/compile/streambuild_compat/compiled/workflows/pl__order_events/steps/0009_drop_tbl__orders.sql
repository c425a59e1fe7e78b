DROP TABLE IF EXISTS `orders_demo`.`mv__orders` SYNC;
DROP TABLE IF EXISTS `orders_demo`.`tbl__orders` SYNC;
