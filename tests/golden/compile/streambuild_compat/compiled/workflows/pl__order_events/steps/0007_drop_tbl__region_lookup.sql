DROP TABLE IF EXISTS `orders_demo`.`mv__region_lookup` SYNC;
DROP TABLE IF EXISTS `orders_demo`.`tbl__region_lookup` SYNC;
