DROP TABLE IF EXISTS `orders_demo`.`mv__legacy_sessions` SYNC;
DROP TABLE IF EXISTS `orders_demo`.`tbl__legacy_sessions` SYNC;
