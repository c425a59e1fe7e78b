// ClickHouse DDL shapes (StreamBuild §5.1, §9): golden strings for every resource, and secret redaction.
#include "sql/clickhouse_ddl.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

namespace sluice::sql {
namespace {

KafkaTableSpec OrderEvents() {
  KafkaTableSpec kafka;
  kafka.topic = "source.order_events.live";
  kafka.broker_list = "redpanda:9092";
  kafka.consumer_group = "streambuild_orders_demo_demo_order_events_orders_demo";
  return kafka;
}

const char* kRawColumns =
    " (\n"
    "    kafka_key String,\n"
    "    kafka_value String,\n"
    "    kafka_topic String,\n"
    "    kafka_partition Int32,\n"
    "    kafka_offset Int64,\n"
    "    kafka_timestamp Nullable(DateTime64(3)),\n"
    "    _replay_partition Int32,\n"
    "    _replay_offset Int64,\n"
    "    _replay_timestamp Nullable(DateTime64(3)),\n"
    "    kafka_header_keys Array(String),\n"
    "    kafka_header_values Array(String),\n"
    "    kafka_landed_at DateTime64(3),\n"
    "    _replay_landed_at DateTime64(3)\n"
    ") ENGINE = MergeTree()\n"
    "ORDER BY (_replay_partition, _replay_offset)";

const char* kLandingMv =
    "CREATE MATERIALIZED VIEW orders_demo.mv__order_events\n"
    "TO orders_demo.raw__order_events AS\n"
    "SELECT\n"
    "    _key AS kafka_key,\n"
    "    message AS kafka_value,\n"
    "    _topic AS kafka_topic,\n"
    "    _partition AS kafka_partition,\n"
    "    _offset AS kafka_offset,\n"
    "    _timestamp AS kafka_timestamp,\n"
    "    _partition AS _replay_partition,\n"
    "    _offset AS _replay_offset,\n"
    "    _timestamp AS _replay_timestamp,\n"
    "    _headers.name AS kafka_header_keys,\n"
    "    _headers.value AS kafka_header_values,\n"
    "    now64(3) AS kafka_landed_at,\n"
    "    now64(3) AS _replay_landed_at\n"
    "FROM kafka__order_events";

TEST(KafkaSourceResources, TheOrdersDemoSourceRendersThreeObjects) {
  std::vector<ClickHouseResource> resources =
      RenderKafkaSourceResources("orders_demo", "order_events", OrderEvents(), SecretHandling::kRedact);
  ASSERT_EQ(resources.size(), 3u);
  EXPECT_EQ(resources[0].kind, ClickHouseResourceKind::kManagedSource);
  EXPECT_EQ(resources[0].name, "kafka__order_events");
  EXPECT_EQ(resources[0].sql,
            "CREATE TABLE orders_demo.kafka__order_events (\n"
            "    message String\n"
            ") ENGINE = Kafka\n"
            "SETTINGS kafka_broker_list = 'redpanda:9092', kafka_topic_list = 'source.order_events.live', "
            "kafka_group_name = 'streambuild_orders_demo_demo_order_events_orders_demo', "
            "kafka_format = 'JSONAsString'");
  EXPECT_EQ(resources[1].kind, ClickHouseResourceKind::kTable);
  EXPECT_EQ(resources[1].name, "raw__order_events");
  EXPECT_EQ(resources[1].sql, std::string("CREATE TABLE orders_demo.raw__order_events") + kRawColumns);
  EXPECT_EQ(resources[2].kind, ClickHouseResourceKind::kMaterializedView);
  EXPECT_EQ(resources[2].name, "mv__order_events");
  EXPECT_EQ(resources[2].sql, kLandingMv);
}

TEST(KafkaSourceResources, ExtraSettingsTtlAndIfNotExists) {
  KafkaTableSpec kafka = OrderEvents();
  kafka.settings = {{"kafka_num_consumers", "2"}, {"kafka_handle_error_mode", "stream"}};
  kafka.ttl = "_replay_landed_at + INTERVAL 14 DAY";
  std::vector<ClickHouseResource> resources = RenderKafkaSourceResources(
      "orders_demo", "order_events", kafka, SecretHandling::kKeep, CreateMode::kCreateIfNotExists);
  EXPECT_EQ(resources[0].sql,
            "CREATE TABLE IF NOT EXISTS orders_demo.kafka__order_events (\n"
            "    message String\n"
            ") ENGINE = Kafka\n"
            "SETTINGS kafka_broker_list = 'redpanda:9092', kafka_topic_list = 'source.order_events.live', "
            "kafka_group_name = 'streambuild_orders_demo_demo_order_events_orders_demo', "
            "kafka_format = 'JSONAsString', kafka_num_consumers = '2', kafka_handle_error_mode = 'stream'");
  EXPECT_EQ(resources[1].sql, std::string("CREATE TABLE IF NOT EXISTS orders_demo.raw__order_events") + kRawColumns +
                                  "\nTTL _replay_landed_at + INTERVAL 14 DAY");
  EXPECT_EQ(resources[2].sql.rfind("CREATE MATERIALIZED VIEW IF NOT EXISTS orders_demo.mv__order_events\n", 0), 0u);
}

TEST(KafkaSourceResources, ValuesAreEscapedStringLiterals) {
  KafkaTableSpec kafka = OrderEvents();
  kafka.topic = "it's";
  kafka.settings = {{"kafka_schema", "a\\b"}};
  std::string sql = RenderKafkaSourceResources("db", "s", kafka, SecretHandling::kKeep)[0].sql;
  EXPECT_NE(sql.find("kafka_topic_list = 'it\\'s'"), std::string::npos);
  EXPECT_NE(sql.find("kafka_schema = 'a\\\\b'"), std::string::npos);
}

TEST(SecretRedaction, BrokerListsWithCredentialsAndSecretSettings) {
  KafkaTableSpec kafka = OrderEvents();
  kafka.broker_list = "user:pass@broker:9092";
  kafka.settings = {{"kafka_sasl_password", "hunter2"},
                    {"kafka_sasl_mechanism", "PLAIN"},
                    {"kafka_num_consumers", "2"},
                    {"ssl_Private_Key", "k"},
                    {"api_TOKEN", "t"},
                    {"client_secret_id", "s"},
                    {"kafka_credential_file", "/etc/c"}};
  std::string redacted = RenderKafkaSourceResources("db", "s", kafka, SecretHandling::kRedact)[0].sql;
  EXPECT_NE(redacted.find("SETTINGS kafka_broker_list = '***', kafka_topic_list"), std::string::npos);
  EXPECT_NE(redacted.find("kafka_sasl_password = '***', kafka_sasl_mechanism = '***', kafka_num_consumers = '2', "
                          "ssl_Private_Key = '***', api_TOKEN = '***', client_secret_id = '***', "
                          "kafka_credential_file = '***'"),
            std::string::npos)
      << redacted;
  for (const char* secret : {"hunter2", "pass@", "PLAIN", "/etc/c"}) {
    EXPECT_EQ(redacted.find(secret), std::string::npos) << secret;
  }
  std::string kept = RenderKafkaSourceResources("db", "s", kafka, SecretHandling::kKeep)[0].sql;
  EXPECT_NE(kept.find("kafka_broker_list = 'user:pass@broker:9092'"), std::string::npos);
  EXPECT_NE(kept.find("kafka_sasl_password = 'hunter2'"), std::string::npos);

  kafka.broker_list = "broker-1:9092,broker-2:9092";  // no credentials: shown
  EXPECT_NE(RenderKafkaSourceResources("db", "s", kafka, SecretHandling::kRedact)[0].sql.find(
                "kafka_broker_list = 'broker-1:9092,broker-2:9092'"),
            std::string::npos);

  EXPECT_TRUE(IsSecretSettingKey("PASSWORD"));
  EXPECT_FALSE(IsSecretSettingKey("kafka_max_block_size"));
  EXPECT_FALSE(IsSecretSettingKey("index_granularity"));
}

TEST(ModelResources, TableDdlShape) {
  ModelStorage storage;
  storage.columns = {{"order_id", "String", std::nullopt},
                     {"event_day", "Date", std::nullopt},
                     {"revenue", "Decimal(18, 2)", std::string("0")},
                     {"_replay_timestamp", "Nullable(DateTime64(3))", std::nullopt}};
  storage.engine = "SummingMergeTree()";
  storage.order_by = {"event_day", "order_id"};
  storage.partition_by = "toYYYYMM(event_day)";
  storage.ttl = "event_day + INTERVAL 1 YEAR";
  storage.settings = {{"index_granularity", "8192"}, {"storage_policy", "'hot'"}};
  EXPECT_EQ(RenderModelTable("orders_demo", "tbl__daily_revenue", storage),
            "CREATE TABLE orders_demo.tbl__daily_revenue (\n"
            "    order_id String,\n"
            "    event_day Date,\n"
            "    revenue Decimal(18, 2) DEFAULT 0,\n"
            "    _replay_timestamp Nullable(DateTime64(3))\n"
            ") ENGINE = SummingMergeTree()\n"
            "ORDER BY (event_day, order_id)\n"
            "PARTITION BY toYYYYMM(event_day)\n"
            "TTL event_day + INTERVAL 1 YEAR\n"
            "SETTINGS index_granularity = 8192, storage_policy = 'hot'");

  ModelStorage minimal;
  minimal.columns = {{"_replay_timestamp", "Nullable(DateTime64(3))", std::nullopt}};
  EXPECT_EQ(RenderModelTable("db", "tbl__m", minimal, SecretHandling::kKeep, CreateMode::kCreateIfNotExists),
            "CREATE TABLE IF NOT EXISTS db.tbl__m (\n"
            "    _replay_timestamp Nullable(DateTime64(3))\n"
            ") ENGINE = MergeTree()\n"
            "ORDER BY (_replay_timestamp)");
}

TEST(ModelResources, SecretSettingsOfATableAreRedacted) {
  ModelStorage storage;
  storage.columns = {{"id", "UInt64", std::nullopt}, {"updated_at", "DateTime", std::nullopt}};
  storage.engine = "ReplacingMergeTree(updated_at)";
  storage.order_by = {"id"};
  storage.ttl = "updated_at + INTERVAL 30 DAY";
  storage.settings = {{"s3_secret_access_key", "abc"}};
  EXPECT_EQ(RenderModelTable("db", "tbl__x", storage, SecretHandling::kRedact),
            "CREATE TABLE db.tbl__x (\n"
            "    id UInt64,\n"
            "    updated_at DateTime\n"
            ") ENGINE = ReplacingMergeTree(updated_at)\n"
            "ORDER BY (id)\n"
            "TTL updated_at + INTERVAL 30 DAY\n"
            "SETTINGS s3_secret_access_key = ***");
  EXPECT_NE(RenderModelTable("db", "tbl__x", storage).find("s3_secret_access_key = abc"), std::string::npos);
}

TEST(ModelResources, ViewMaterializedViewAndStableBindingShapes) {
  const std::string query = "SELECT\n    CAST(id AS UInt64) AS id\nFROM orders_demo.raw__order_events";
  EXPECT_EQ(RenderMaterializedView("orders_demo", "mv__orders", "tbl__orders", query),
            "CREATE MATERIALIZED VIEW orders_demo.mv__orders\n"
            "TO orders_demo.tbl__orders AS\n" +
                query);
  EXPECT_EQ(RenderMaterializedView("db", "mv__a", "tbl__a__20260101T000000Z_abc123", "SELECT 1",
                                   CreateMode::kCreateIfNotExists),
            "CREATE MATERIALIZED VIEW IF NOT EXISTS db.mv__a\nTO db.tbl__a__20260101T000000Z_abc123 AS\nSELECT 1");
  EXPECT_EQ(RenderView("orders_demo", "view__summary", query), "CREATE VIEW orders_demo.view__summary AS\n" + query);
  EXPECT_EQ(RenderStableBinding("orders_demo", "tbl__orders", "tbl__orders__20260101T000000Z_abc123"),
            "CREATE OR REPLACE VIEW orders_demo.tbl__orders AS\n"
            "SELECT * FROM orders_demo.tbl__orders__20260101T000000Z_abc123");
}

TEST(ModelResources, RefreshableMaterializedViewForPostgresSources) {
  EXPECT_EQ(RenderRefreshableMaterializedView("crm", "mv__customers", "tbl__customers", "SELECT 1", "5 MINUTE", true),
            "CREATE MATERIALIZED VIEW crm.mv__customers\n"
            "REFRESH EVERY 5 MINUTE APPEND\n"
            "TO crm.tbl__customers AS\n"
            "SELECT 1\n"
            "SETTINGS allow_experimental_refreshable_materialized_view = 1");
  EXPECT_EQ(RenderRefreshableMaterializedView("crm", "mv__c", "tbl__c", "SELECT 1", "1 HOUR", false),
            "CREATE MATERIALIZED VIEW crm.mv__c\n"
            "REFRESH EVERY 1 HOUR\n"
            "TO crm.tbl__c AS\n"
            "SELECT 1\n"
            "SETTINGS allow_experimental_refreshable_materialized_view = 1");
}

TEST(ModelResources, NamesThatAreNotIdentifiersAreQuoted) {
  EXPECT_EQ(RenderView("analytics-prod", "view__x", "SELECT 1"), "CREATE VIEW `analytics-prod`.view__x AS\nSELECT 1");
  ModelStorage storage;
  storage.columns = {{"order id", "String", std::nullopt}};
  storage.order_by = {"`order id`"};
  EXPECT_EQ(RenderModelTable("db", "t", storage),
            "CREATE TABLE db.t (\n    `order id` String\n) ENGINE = MergeTree()\nORDER BY (`order id`)");
}

TEST(PostgresRelation, PasswordIsNeverResolved) {
  PostgresTableSpec pg;
  pg.host = "pg.internal";
  pg.database = "crm";
  pg.table = "customers";
  pg.user = "reader";
  pg.password_env = "SLUICE_TEST_PG_PASSWORD";
  ::setenv("SLUICE_TEST_PG_PASSWORD", "s3cr3t-value", 1);
  std::string relation = RenderPostgresRelation(pg);
  EXPECT_EQ(
      relation,
      "postgresql('pg.internal:5432','crm','customers','reader','__streambuild_secret__SLUICE_TEST_PG_PASSWORD__')");
  EXPECT_EQ(relation.find("s3cr3t"), std::string::npos);
  ::unsetenv("SLUICE_TEST_PG_PASSWORD");
  EXPECT_EQ(RenderPostgresRelation(pg), relation);  // set or not, the same text

  pg.password_env.reset();
  pg.port = 6543;
  pg.table = "o'brien";
  EXPECT_EQ(RenderPostgresRelation(pg), "postgresql('pg.internal:6543','crm','o\\'brien','reader','')");
  EXPECT_EQ(PostgresPasswordPlaceholder("PG_PASSWORD"), "__streambuild_secret__PG_PASSWORD__");
}

TEST(ModelResources, ResourceKindNamesMatchTheManifest) {
  EXPECT_EQ(ClickHouseResourceKindName(ClickHouseResourceKind::kManagedSource), "managed_source");
  EXPECT_EQ(ClickHouseResourceKindName(ClickHouseResourceKind::kTable), "table");
  EXPECT_EQ(ClickHouseResourceKindName(ClickHouseResourceKind::kMaterializedView), "materialized_view");
}

}  // namespace
}  // namespace sluice::sql
