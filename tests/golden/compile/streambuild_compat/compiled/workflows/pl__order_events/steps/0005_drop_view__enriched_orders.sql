DROP TABLE IF EXISTS `orders_demo`.`view__enriched_orders` SYNC;
