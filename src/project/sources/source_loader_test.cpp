// Source declarations (StreamBuild §5): every kind's fields, defaults, restrictions and located errors, on
// sources/*.yml files written into temporary folders.
#include "project/sources/source_loader.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <random>

#include "project/project_loader.hpp"

namespace sluice {
namespace {

class SourceFiles {
 public:
  SourceFiles() {
    std::random_device device;
    root_ = std::filesystem::temp_directory_path() /
            ("sluice_sources_test_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
    std::filesystem::create_directories(root_ / "sources");
    options.project_name = "orders_demo";
    options.target_name = "demo";
    options.database = "orders_demo";
  }
  ~SourceFiles() { std::filesystem::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::trunc) << text;
  }
  // Writes sources/s.yml and loads.
  std::vector<SourceDeclaration> Load(const std::string& yaml) const {
    Write("sources/s.yml", yaml);
    return LoadSources(root_, options);
  }
  // Writes sources/s.yml and returns the one diagnostic it is rejected with.
  Diagnostic Reject(const std::string& yaml) const {
    try {
      Load(yaml);
    } catch (const Error& e) {
      EXPECT_EQ(e.diagnostics().size(), 1u);
      return e.diagnostics().front();
    }
    return Diagnostic{"no error", "", {}, "", ""};
  }
  const std::filesystem::path& root() const { return root_; }

  SourceLoadOptions options;

 private:
  std::filesystem::path root_;
};

// `code` at `line`:`column` of sources/s.yml, with a hint.
void ExpectAt(const Diagnostic& d, const std::string& code, int line, int column) {
  EXPECT_EQ(d.code, code) << d.message;
  EXPECT_EQ(d.location.file, "sources/s.yml");
  EXPECT_EQ(d.location.line, line) << d.message;
  EXPECT_EQ(d.location.column, column) << d.message;
  EXPECT_FALSE(d.hint.empty()) << d.message;
}

const char* kOrderEvents = R"(sources:
  - kind: kafka
    name: order_events
    topic: source.order_events.live
    replay_boundary:
      mode: offsets
)";

TEST(KafkaSources, ConsumerGroupRendersAsInTheOrdersDemo) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "redpanda:9092";
  std::vector<SourceDeclaration> sources = files.Load(kOrderEvents);
  ASSERT_EQ(sources.size(), 1u);
  const SourceDeclaration& source = sources[0];
  EXPECT_EQ(source.name, "order_events");
  EXPECT_EQ(source.kind(), "kafka");
  EXPECT_EQ(source.at.line, 2);
  const auto& kafka = std::get<KafkaSource>(source.compute);
  EXPECT_EQ(kafka.consumer_group, "streambuild_orders_demo_demo_order_events_orders_demo");
  EXPECT_EQ(kafka.topic, "source.order_events.live");
  EXPECT_EQ(kafka.broker_list, "redpanda:9092");
  EXPECT_EQ(kafka.format, "JSONAsString");
  EXPECT_EQ(kafka.replay_mode, "offsets");
  EXPECT_EQ(kafka.name_origin, "declared");
  EXPECT_FALSE(kafka.ttl.has_value());
  EXPECT_TRUE(kafka.settings.empty());
}

TEST(KafkaSources, DeclaredConsumerGroupIsAlwaysScopedToTheDatabase) {
  SourceFiles files;
  files.options.database = "analytics-prod";
  auto group = [&] {
    return std::get<KafkaSource>(files
                                     .Load(R"(sources:
  - kind: kafka
    name: k
    topic: t
    broker_list: b:9092
    consumer_group: shared_group
    replay_boundary: {mode: timestamp}
)")[0]
                                     .compute)
        .consumer_group;
  };
  EXPECT_EQ(group(), "shared_group_analytics_prod");
  files.options.database = "";
  EXPECT_EQ(group(), "shared_group_default");
}

TEST(KafkaSources, BrokerListAndTtlFallBackToProjectDefaults) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "default:9092";
  files.options.default_managed_source_ttl = "_replay_landed_at + INTERVAL 14 DAY";
  const char* declared = R"(sources:
  - kind: kafka
    name: k
    topic: t
    broker_list: own:9092
    ttl: kafka_landed_at + INTERVAL 1 DAY
    replay_boundary: {mode: landed_at}
)";
  auto kafka = std::get<KafkaSource>(files.Load(declared)[0].compute);
  EXPECT_EQ(kafka.broker_list, "own:9092");
  EXPECT_EQ(kafka.ttl, "kafka_landed_at + INTERVAL 1 DAY");
  EXPECT_EQ(kafka.replay_mode, "landed_at");

  kafka = std::get<KafkaSource>(files.Load(kOrderEvents)[0].compute);
  EXPECT_EQ(kafka.broker_list, "default:9092");
  EXPECT_EQ(kafka.ttl, "_replay_landed_at + INTERVAL 14 DAY");

  files.options.default_kafka_broker_list.reset();
  Diagnostic d = files.Reject(kOrderEvents);
  ExpectAt(d, "SLU-SOURCE-009", 2, 5);
  EXPECT_NE(d.hint.find("defaults.kafka_broker_list"), std::string::npos);
}

TEST(KafkaSources, UnnamedSourceTakesItsNameFromTheNamingMacro) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "b:9092";
  const char* unnamed = R"(sources:
  - kind: kafka
    topic: orders.v1
    replay_boundary: {mode: offsets}
)";
  ExpectAt(files.Reject(unnamed), "SLU-SOURCE-009", 2, 5);  // no macro configured

  std::vector<std::string> topics;
  files.options.derive_name = [&](const std::string& topic, const SourceLocation&) -> std::optional<std::string> {
    topics.push_back(topic);
    return std::nullopt;
  };
  ExpectAt(files.Reject(unnamed), "SLU-SOURCE-009", 2, 5);  // the callback says: no macro

  files.options.derive_name = [&](const std::string& topic, const SourceLocation&) -> std::optional<std::string> {
    topics.push_back(topic);
    std::string name = topic;
    std::replace(name.begin(), name.end(), '.', '_');
    return name;
  };
  std::vector<SourceDeclaration> sources = files.Load(unnamed);
  EXPECT_EQ(sources[0].name, "orders_v1");
  const auto& kafka = std::get<KafkaSource>(sources[0].compute);
  EXPECT_EQ(kafka.name_origin, "derived");
  EXPECT_EQ(kafka.consumer_group, "streambuild_orders_demo_demo_orders_v1_orders_demo");
  EXPECT_EQ(topics.back(), "orders.v1");

  files.options.derive_name = [](const std::string& topic, const SourceLocation&) -> std::optional<std::string> { return topic; };
  ExpectAt(files.Reject(unnamed), "SLU-SOURCE-003", 3, 12);  // "orders.v1" is not an identifier

  // A declared name wins; the macro is not consulted.
  size_t calls = topics.size();
  files.options.derive_name = [&](const std::string& topic, const SourceLocation&) -> std::optional<std::string> {
    topics.push_back(topic);
    return "unused";
  };
  EXPECT_EQ(files.Load(kOrderEvents)[0].name, "order_events");
  EXPECT_EQ(topics.size(), calls);
}

TEST(KafkaSources, SettingsAreKeptInOrderAndMayNotRedefineTypedSettings) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "b:9092";
  auto with_settings = [&](const std::string& settings) {
    return std::string(
               "sources:\n  - kind: kafka\n    name: k\n    topic: t\n    replay_boundary: {mode: offsets}\n"
               "    settings:\n") +
           settings;
  };
  auto kafka = std::get<KafkaSource>(
      files.Load(with_settings("      kafka_num_consumers: '2'\n      kafka_sasl_password: hunter2\n"))[0].compute);
  ASSERT_EQ(kafka.settings.size(), 2u);
  EXPECT_EQ(kafka.settings[0], std::make_pair(std::string("kafka_num_consumers"), std::string("2")));
  EXPECT_EQ(kafka.settings[1], std::make_pair(std::string("kafka_sasl_password"), std::string("hunter2")));

  for (const char* typed : {"kafka_broker_list", "kafka_topic_list", "kafka_group_name", "kafka_format"}) {
    Diagnostic d = files.Reject(with_settings("      kafka_num_consumers: '2'\n      " + std::string(typed) + ": x\n"));
    ExpectAt(d, "SLU-SOURCE-008", 8, 7);
    EXPECT_NE(d.message.find(typed), std::string::npos);
  }
  // StreamBuild reads values with PyYAML: an unquoted number is not a string.
  Diagnostic d = files.Reject(with_settings("      kafka_num_consumers: 2\n"));
  ExpectAt(d, "SLU-SOURCE-003", 7, 28);
  EXPECT_NE(d.hint.find("'2'"), std::string::npos);
  ExpectAt(files.Reject(with_settings("      kafka num: '2'\n")), "SLU-SOURCE-003", 7, 7);
  ExpectAt(files.Reject(with_settings("      kafka_num_consumers:\n")), "SLU-SOURCE-003", 7, 7);
  ExpectAt(files.Reject("sources:\n  - kind: kafka\n    name: k\n    topic: t\n    replay_boundary: {mode: offsets}\n"
                        "    settings: [a]\n"),
           "SLU-SOURCE-003", 6, 15);
}

TEST(KafkaSources, ReplayBoundaryIsRequiredWithAKafkaModeAndNoColumns) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "b:9092";
  const std::string head = "sources:\n  - kind: kafka\n    name: k\n    topic: t\n";
  ExpectAt(files.Reject(head), "SLU-SOURCE-003", 2, 5);
  ExpectAt(files.Reject(head + "    replay_boundary:\n"), "SLU-SOURCE-003", 5, 5);
  ExpectAt(files.Reject(head + "    replay_boundary: {}\n"), "SLU-SOURCE-003", 5, 22);
  ExpectAt(files.Reject(head + "    replay_boundary: {mode: cursor}\n"), "SLU-SOURCE-006", 5, 29);
  ExpectAt(
      files.Reject(head + "    replay_boundary:\n      mode: offsets\n      columns:\n        _replay_offset: o\n"),
      "SLU-SOURCE-006", 7, 7);
  ExpectAt(files.Reject(head + "    replay_boundary:\n      mode: offsets\n      lag: 1\n"), "SLU-SOURCE-002", 7, 7);
  for (const char* mode : {"offsets", "timestamp", "landed_at"}) {
    auto kafka =
        std::get<KafkaSource>(files.Load(head + "    replay_boundary: {mode: " + std::string(mode) + "}\n")[0].compute);
    EXPECT_EQ(kafka.replay_mode, mode);
  }
}

TEST(KafkaSources, FieldsOfOtherKindsUnknownKeysAndFormats) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "b:9092";
  const std::string head =
      "sources:\n  - kind: kafka\n    name: k\n    topic: t\n    replay_boundary: {mode: offsets}\n";
  Diagnostic d = files.Reject(head + "    table_name: existing\n");
  ExpectAt(d, "SLU-SOURCE-007", 6, 5);
  EXPECT_NE(d.hint.find("stream_table"), std::string::npos);
  ExpectAt(files.Reject(head + "    host: db\n"), "SLU-SOURCE-007", 6, 5);
  ExpectAt(files.Reject(head + "    path: seeds/x.csv\n"), "SLU-SOURCE-007", 6, 5);
  ExpectAt(files.Reject(head + "    partitions: 3\n"), "SLU-SOURCE-002", 6, 5);
  ExpectAt(files.Reject(head + "    format: Avro\n"), "SLU-SOURCE-003", 6, 13);
  EXPECT_EQ(std::get<KafkaSource>(files.Load(head + "    format: JSONAsString\n")[0].compute).format, "JSONAsString");
  std::vector<SourceDeclaration> described =
      files.Load(head + "    description: Orders as they happen\n    freshness: {warn_after: 5m}\n");
  EXPECT_EQ(described[0].description, "Orders as they happen");
  ExpectAt(files.Reject("sources:\n  - kind: kafka\n    name: k\n    replay_boundary: {mode: offsets}\n"),
           "SLU-SOURCE-003", 2, 5);  // topic is required
}

const char* kAdopted = R"(sources:
  - kind: stream_table
    name: clicks
    table_name: clicks_existing
    replay_boundary:
      mode: timestamp
      columns:
        _replay_timestamp: event_timestamp
)";

TEST(StreamTableSources, SourcesAdoptingOneTableDeclareIdenticalBoundaries) {
  SourceFiles files;
  files.Write("sources/a.yml", kAdopted);
  std::vector<SourceDeclaration> same = files.Load(R"(sources:
  - kind: stream_table
    name: clicks_again
    table_name: clicks_existing
    replay_boundary: {mode: timestamp, columns: {_replay_timestamp: event_timestamp}}
)");
  ASSERT_EQ(same.size(), 2u);
  EXPECT_EQ(same[0].name, "clicks");
  EXPECT_EQ(same[1].name, "clicks_again");
  EXPECT_EQ(same[1].kind(), "stream_table");

  Diagnostic d = files.Reject(R"(sources:
  - kind: stream_table
    name: clicks_again
    table_name: clicks_existing
    replay_boundary: {mode: timestamp, columns: {_replay_timestamp: inserted_at}}
)");
  ExpectAt(d, "SLU-SOURCE-006", 5, 22);
  EXPECT_NE(d.message.find("clicks_existing"), std::string::npos);
  EXPECT_NE(d.hint.find("sources/a.yml:2"), std::string::npos);

  // Different tables may use different boundaries.
  EXPECT_EQ(files
                .Load(R"(sources:
  - kind: stream_table
    name: views
    table_name: views_existing
    replay_boundary: {mode: cursor, columns: {_replay_cursor: id, _replay_timestamp: ts}}
)")
                .size(),
            2u);
}

TEST(StreamTableSources, RoleColumnsPerModeAndNoKafkaFields) {
  SourceFiles files;
  std::vector<SourceDeclaration> sources = files.Load(kAdopted);
  const auto& table = std::get<ExternalTable>(sources[0].compute);
  EXPECT_EQ(table.table_name, "clicks_existing");
  EXPECT_EQ(table.replay_mode, "timestamp");
  EXPECT_EQ(table.replay_columns.at("_replay_timestamp"), "event_timestamp");

  const std::string head = "sources:\n  - kind: stream_table\n    name: t\n    table_name: x\n";
  ExpectAt(files.Reject(head + "    replay_boundary:\n      mode: timestamp\n      columns:\n"
                               "        _replay_timestamp: ts\n        _replay_offset: o\n"),
           "SLU-SOURCE-006", 6, 7);
  ExpectAt(files.Reject(head + "    replay_boundary:\n      mode: offsets\n      columns:\n"
                               "        _replay_partition: p\n        _replay_offset: o\n"),
           "SLU-SOURCE-006", 6, 7);
  EXPECT_EQ(files
                .Load(head + "    replay_boundary:\n      mode: offsets\n      columns:\n"
                             "        _replay_partition: p\n        _replay_offset: o\n        _replay_timestamp: ts\n")
                .size(),
            1u);
  ExpectAt(files.Reject(head + "    replay_boundary: {mode: landed_at}\n"), "SLU-SOURCE-006", 5, 29);
  for (const char* field :
       {"topic: t", "broker_list: b", "consumer_group: g", "format: JSONAsString", "ttl: x", "settings: {a: b}"}) {
    ExpectAt(files.Reject(head + "    replay_boundary: {mode: timestamp, columns: {_replay_timestamp: ts}}\n    " +
                          field + "\n"),
             "SLU-SOURCE-007", 6, 5);
  }
  ExpectAt(files.Reject("sources:\n  - kind: stream_table\n    name: t\n    table_name: db.x\n"
                        "    replay_boundary: {mode: timestamp, columns: {_replay_timestamp: ts}}\n"),
           "SLU-SOURCE-003", 4, 17);
}

const char* kPostgres = R"(sources:
  - kind: postgres
    name: customers
    host: pg.internal
    database: crm
    table: customers
    user: reader
    refresh: 5 MINUTE
)";

TEST(PostgresSources, RequiredFieldsAndDefaults) {
  SourceFiles files;
  std::vector<SourceDeclaration> sources = files.Load(kPostgres);
  EXPECT_EQ(sources[0].kind(), "postgres");
  const auto& pg = std::get<PostgresSource>(sources[0].compute);
  EXPECT_EQ(pg.host, "pg.internal");
  EXPECT_EQ(pg.database, "crm");
  EXPECT_EQ(pg.table, "customers");
  EXPECT_EQ(pg.user, "reader");
  EXPECT_EQ(pg.refresh, "5 MINUTE");
  EXPECT_EQ(pg.port, 5432);
  EXPECT_TRUE(pg.append);
  EXPECT_FALSE(pg.password_env.has_value());

  for (const char* field : {"host", "database", "table", "user", "refresh"}) {
    std::string yaml = kPostgres;
    size_t at = yaml.find(std::string("    ") + field + ":");
    yaml.erase(at, yaml.find('\n', at) - at + 1);
    Diagnostic d = files.Reject(yaml);
    ExpectAt(d, "SLU-SOURCE-003", 2, 5);
    EXPECT_NE(d.message.find(field), std::string::npos);
  }
  for (const char* refresh : {"1 SECOND", "10 minutes", "2 hour", "1 DAYS", "3  HOURS"}) {
    auto pg_refresh =
        std::get<PostgresSource>(files.Load(std::string(kPostgres) + "    append: false\n").at(0).compute);
    EXPECT_FALSE(pg_refresh.append);
    std::string yaml = kPostgres;
    yaml.replace(yaml.find("5 MINUTE"), 8, refresh);
    EXPECT_EQ(std::get<PostgresSource>(files.Load(yaml)[0].compute).refresh, refresh);
  }
  for (const char* refresh : {"5", "MINUTE", "5 WEEKS", "five MINUTE", "5MINUTE"}) {
    std::string yaml = kPostgres;
    yaml.replace(yaml.find("5 MINUTE"), 8, refresh);
    ExpectAt(files.Reject(yaml), "SLU-SOURCE-003", 8, 14);
  }
}

TEST(PostgresSources, PortAppendAndPasswordEnv) {
  SourceFiles files;
  auto load = [&](const std::string& extra) {
    return std::get<PostgresSource>(files.Load(std::string(kPostgres) + extra)[0].compute);
  };
  EXPECT_EQ(load("    port: 5433\n").port, 5433);
  EXPECT_EQ(load("    port: '6543'\n").port, 6543);
  EXPECT_EQ(load("    port: 0x1538\n").port, 5432);  // PyYAML reads hexadecimal ints
  EXPECT_EQ(load("    password_env: PG_PASSWORD\n").password_env, "PG_PASSWORD");
  EXPECT_FALSE(load("    append: no\n").append);
  EXPECT_TRUE(load("    append: 'Yes'\n").append);
  EXPECT_FALSE(load("    append: '0'\n").append);
  EXPECT_TRUE(load("    append: on\n").append);
  ExpectAt(files.Reject(std::string(kPostgres) + "    port: abc\n"), "SLU-SOURCE-003", 9, 11);
  ExpectAt(files.Reject(std::string(kPostgres) + "    port: true\n"), "SLU-SOURCE-003", 9, 11);
  ExpectAt(files.Reject(std::string(kPostgres) + "    port: 54.32\n"), "SLU-SOURCE-003", 9, 11);
  ExpectAt(files.Reject(std::string(kPostgres) + "    port: 99999999999\n"), "SLU-SOURCE-003", 9, 11);
  ExpectAt(files.Reject(std::string(kPostgres) + "    append: 1\n"), "SLU-SOURCE-003", 9, 13);  // an int
  ExpectAt(files.Reject(std::string(kPostgres) + "    append: maybe\n"), "SLU-SOURCE-003", 9, 13);
}

TEST(PostgresSources, StreamingFieldsAreForbidden) {
  SourceFiles files;
  for (const char* field : {"topic: t", "broker_list: b", "consumer_group: g", "format: JSONAsString", "ttl: x",
                            "settings: {a: b}", "table_name: x", "replay_boundary: {mode: offsets}"}) {
    Diagnostic d = files.Reject(std::string(kPostgres) + "    " + field + "\n");
    ExpectAt(d, "SLU-SOURCE-007", 9, 5);
  }
}

TEST(SourceNames, IdentifiersUniqueAcrossFilesAndKnownKinds) {
  SourceFiles files;
  ExpectAt(files.Reject("sources:\n  - kind: postgres\n    name: 2fast\n"), "SLU-SOURCE-003", 3, 11);
  ExpectAt(files.Reject("sources:\n  - kind: postgres\n    name: my-source\n"), "SLU-SOURCE-003", 3, 11);
  ExpectAt(files.Reject("sources:\n  - kind: kinesis\n    name: k\n"), "SLU-SOURCE-005", 2, 11);
  ExpectAt(files.Reject("sources:\n  - name: k\n"), "SLU-SOURCE-003", 2, 5);
  ExpectAt(files.Reject("sources:\n  - kind: postgres\n    host: h\n"), "SLU-SOURCE-003", 2, 5);

  files.Write("sources/a.yml", kPostgres);
  Diagnostic d = files.Reject(kAdopted + std::string("  - kind: stream_table\n    name: customers\n"
                                                     "    table_name: clicks_existing\n"
                                                     "    replay_boundary: {mode: timestamp, columns: "
                                                     "{_replay_timestamp: event_timestamp}}\n"));
  ExpectAt(d, "SLU-SOURCE-004", 10, 11);
  EXPECT_NE(d.message.find("sources/a.yml:2"), std::string::npos);

  // Sorted by name across files.
  std::filesystem::remove(files.root() / "sources/a.yml");
  files.Write("sources/z.yml", kPostgres);
  std::vector<SourceDeclaration> sources = files.Load(kAdopted);
  ASSERT_EQ(sources.size(), 2u);
  EXPECT_EQ(sources[0].name, "clicks");
  EXPECT_EQ(sources[1].name, "customers");
  EXPECT_EQ(sources[1].at.file, "sources/z.yml");
}

TEST(SourceFreshness, DeclaredPolicyElseProjectDefault) {
  SourceFiles files;
  EXPECT_FALSE(files.Load(kAdopted)[0].freshness.has_value());
  files.options.default_freshness = FreshnessPolicy{"30m", "2h"};
  EXPECT_EQ(files.Load(kAdopted)[0].freshness, (FreshnessPolicy{"30m", "2h"}));
  EXPECT_EQ(files.Load(std::string(kPostgres) + "    freshness: {error_after: 1d}\n")[0].freshness,
            (FreshnessPolicy{std::nullopt, "1d"}));
  EXPECT_EQ(files.Load(std::string(kPostgres) + "    freshness:\n")[0].freshness, (FreshnessPolicy{"30m", "2h"}));
  EXPECT_EQ(files.Load(std::string(kPostgres) + "    freshness: {warn_after: 60m, error_after: 1h}\n")[0].freshness,
            (FreshnessPolicy{"60m", "1h"}));

  const std::string head = std::string(kPostgres) + "    freshness:\n";
  ExpectAt(files.Reject(head + "      warn_after: 2h\n      error_after: 1h\n"), "SLU-SOURCE-010", 10, 19);
  ExpectAt(files.Reject(head + "      warn_after: 15 minutes\n"), "SLU-SOURCE-010", 10, 19);
  ExpectAt(files.Reject(head + "      warn_after: 15\n"), "SLU-SOURCE-010", 10, 19);
  ExpectAt(files.Reject(head + "      warn_after: 1w\n"), "SLU-SOURCE-010", 10, 19);
  ExpectAt(files.Reject(head + "      stale_after: 1h\n"), "SLU-SOURCE-002", 10, 7);
  ExpectAt(files.Reject(std::string(kPostgres) + "    freshness: {}\n"), "SLU-SOURCE-010", 9, 16);
  ExpectAt(files.Reject(std::string(kPostgres) + "    freshness: 1h\n"), "SLU-SOURCE-010", 9, 16);
}

TEST(SourceFreshness, DurationsInSecondsOrNothing) {
  EXPECT_EQ(FreshnessDurationSeconds("45s"), 45);
  EXPECT_EQ(FreshnessDurationSeconds("15m"), 900);
  EXPECT_EQ(FreshnessDurationSeconds("2h"), 7200);
  EXPECT_EQ(FreshnessDurationSeconds("1d"), 86400);
  EXPECT_EQ(FreshnessDurationSeconds("0m"), 0);
  for (const char* bad : {"", "m", "1", "1w", "1.5h", "-1h", " 1h", "1h ", "1H", "99999999999999999999d"}) {
    EXPECT_FALSE(FreshnessDurationSeconds(bad).has_value()) << bad;
  }
}

TEST(SourceTemplating, EveryStringScalarIsExpandedWhereItIsWritten) {
  SourceFiles files;
  std::vector<std::pair<std::string, SourceLocation>> calls;
  files.options.expand = [&](const std::string& text, const SourceLocation& at) {
    calls.emplace_back(text, at);
    std::string out = text;
    for (auto [token, value] :
         {std::pair{"${env}", "prod"}, {"${brokers}", "kafka-1:9092"}, {"${mode}", "offsets"}, {"${consumers}", "4"}}) {
      for (size_t i = out.find(token); i != std::string::npos; i = out.find(token))
        out.replace(i, strlen(token), value);
    }
    return out;
  };
  std::vector<SourceDeclaration> sources = files.Load(R"(sources:
  - kind: kafka
    name: events_${env}
    topic: "events.${env}"
    broker_list: ${brokers}
    consumer_group: group_${env}
    description: Events of ${env}
    settings:
      kafka_num_consumers: ${consumers}
    replay_boundary:
      mode: ${mode}
)");
  const auto& kafka = std::get<KafkaSource>(sources[0].compute);
  EXPECT_EQ(sources[0].name, "events_prod");
  EXPECT_EQ(sources[0].description, "Events of prod");
  EXPECT_EQ(kafka.topic, "events.prod");
  EXPECT_EQ(kafka.broker_list, "kafka-1:9092");
  EXPECT_EQ(kafka.consumer_group, "group_prod_orders_demo");
  EXPECT_EQ(kafka.settings.at(0).second, "4");
  EXPECT_EQ(kafka.replay_mode, "offsets");
  bool saw_kind = false;
  for (const auto& [text, at] : calls) {
    EXPECT_EQ(at.file, "sources/s.yml");
    if (text == "kafka") saw_kind = (at.line == 2 && at.column == 11);
    if (text == "events.${env}") {
      EXPECT_EQ(at.line, 4);
      EXPECT_EQ(at.column, 12);
    }
    if (text == "${consumers}") {
      EXPECT_EQ(at.line, 9);
    }
  }
  EXPECT_TRUE(saw_kind);
  EXPECT_EQ(calls.size(), 8u);  // kind, description, topic, name, mode, setting, broker_list, consumer_group

  // An expansion to nothing is an empty value; a templated key is rejected.
  files.options.expand = [](const std::string& text, const SourceLocation&) {
    return text == "${empty}" ? std::string() : text;
  };
  ExpectAt(files.Reject("sources:\n  - kind: postgres\n    name: ${empty}\n"), "SLU-SOURCE-003", 3, 11);
  ExpectAt(files.Reject(std::string(kPostgres) + "    ${key}: x\n"), "SLU-SOURCE-011", 9, 5);

  // The callback's own located errors pass through, with this file's line for the caret.
  files.options.expand = [](const std::string& text, const SourceLocation& at) -> std::string {
    if (text.find("${ENV:") != std::string::npos) {
      throw Error(Diagnostic{"SLU-TEMPLATE-003", "environment variable PG_HOST is not set", at, "export it", {}});
    }
    return text;
  };
  Diagnostic d = files.Reject("sources:\n  - kind: postgres\n    name: c\n    host: ${ENV:PG_HOST}\n");
  EXPECT_EQ(d.code, "SLU-TEMPLATE-003");
  EXPECT_EQ(d.location.line, 4);
  EXPECT_EQ(d.location.column, 11);
  EXPECT_EQ(d.source_line, "    host: ${ENV:PG_HOST}");
}

TEST(SourceYaml, ValuesAreTypedAsPyYamlReadsThem) {
  SourceFiles files;
  files.options.default_kafka_broker_list = "b:9092";
  const std::string tail = "    replay_boundary: {mode: offsets}\n";
  auto topic = [&](const std::string& value) {
    return "sources:\n  - kind: kafka\n    name: k\n    topic: " + value + "\n" + tail;
  };
  for (const char* typed : {"2024", "1_000", "0x1F", "3.5", ".inf", "yes", "Off", "2024-01-31", "[a]", "{a: b}"}) {
    Diagnostic d = files.Reject(topic(typed));
    ExpectAt(d, "SLU-SOURCE-003", 4, 12);
    EXPECT_NE(d.message.find("must be a string"), std::string::npos) << typed;
  }
  for (const char* text : {"'2024'", "\"yes\"", "!!str 2024", "orders.2024", "08", "0o17", "1e5", "~x", "y"}) {
    EXPECT_EQ(files.Reject(topic(text)).code, "no error") << text;
  }
}

TEST(SourceYaml, MalformedFilesAndShapes) {
  SourceFiles files;
  ExpectAt(files.Reject("sources: [\n"), "SLU-SOURCE-001", 2, 1);
  EXPECT_EQ(files.Reject("").code, "SLU-SOURCE-001");
  ExpectAt(files.Reject("- kind: seed\n"), "SLU-SOURCE-001", 1, 1);
  ExpectAt(files.Reject("sources:\n"), "SLU-SOURCE-001", 1, 1);
  ExpectAt(files.Reject("sources: {a: b}\n"), "SLU-SOURCE-001", 1, 10);
  ExpectAt(files.Reject("sources: []\nmodels: []\n"), "SLU-SOURCE-002", 2, 1);
  ExpectAt(files.Reject("sources:\n  - just a string\n"), "SLU-SOURCE-001", 2, 5);
  ExpectAt(files.Reject(std::string(kPostgres) + "    host: again\n"), "SLU-SOURCE-001", 9, 5);
  EXPECT_TRUE(files.Load("sources: []\n").empty());
}

TEST(SeedSources, PathAndColumns) {
  SourceFiles files;
  files.Write("seeds/orders.csv", "id,Amount\n1,2.50\n");
  std::vector<SourceDeclaration> sources = files.Load(R"(sources:
  - kind: seed
    name: orders
    path: seeds/orders.csv
    columns:
      id: BIGINT
      amount: DECIMAL(12,2)
)");
  EXPECT_EQ(sources[0].kind(), "seed");
  const auto& seed = std::get<SeedCompute>(sources[0].compute);
  EXPECT_EQ(seed.path, "seeds/orders.csv");
  ASSERT_EQ(seed.columns.size(), 2u);
  EXPECT_EQ(seed.columns[1], std::make_pair(std::string("amount"), std::string("DECIMAL(12,2)")));
  ExpectAt(files.Reject("sources:\n  - kind: seed\n    name: o\n    path: ../x.csv\n"), "SLU-SOURCE-003", 4, 11);
  ExpectAt(files.Reject("sources:\n  - kind: seed\n    name: o\n    path: seeds/none.csv\n"), "SLU-SOURCE-003", 4, 11);
  ExpectAt(files.Reject("sources:\n  - kind: seed\n    name: o\n    path: seeds/orders.csv\n    columns: {1x: INT}\n"),
           "SLU-SOURCE-003", 5, 15);
  ExpectAt(files.Reject("sources:\n  - kind: seed\n    name: o\n    path: seeds/orders.csv\n    topic: t\n"),
           "SLU-SOURCE-007", 5, 5);
  // Freshness is a property of the streaming kinds; a seed is loaded once.
  ExpectAt(files.Reject(
               "sources:\n  - kind: seed\n    name: o\n    path: seeds/orders.csv\n    freshness: {warn_after: 1h}\n"),
           "SLU-SOURCE-007", 5, 5);
  ExpectAt(files.Reject("sources:\n  - kind: seed\n    name: o\n    path: seeds/orders.csv\n    delimiter: ';'\n"),
           "SLU-SOURCE-002", 5, 5);
  files.options.default_freshness = FreshnessPolicy{"1h", std::nullopt};
  EXPECT_FALSE(files.Load("sources:\n  - kind: seed\n    name: o\n    path: seeds/orders.csv\n")[0].freshness);
}

// `columns` are checked against the CSV header (ignoring case, as DuckDB names columns) and its types against
// DuckDB's type grammar, each located where the YAML writes it.
TEST(SeedSources, ColumnsAreHeaderNamesWithDuckDbTypes) {
  SourceFiles files;
  files.Write("seeds/orders.csv", "id,Amount\n1,2.50\n");
  const std::string head = "sources:\n  - kind: seed\n    name: o\n    path: seeds/orders.csv\n    columns:\n";
  Diagnostic missing = files.Reject(head + "      id: BIGINT\n      amount_due: DECIMAL(12,2)\n");
  ExpectAt(missing, "SLU-SOURCE-012", 7, 7);
  EXPECT_EQ(missing.message, "seed column amount_due is not in the header of seeds/orders.csv");
  EXPECT_EQ(missing.hint, "list only columns of the header (id, Amount); names are compared ignoring case");
  // The value reaches the warehouse only as a type: the first byte past one is located in the YAML.
  Diagnostic injected = files.Reject(head + "      amount: \"DECIMAL(12,2)'); DROP TABLE x; --\"\n");
  ExpectAt(injected, "SLU-SOURCE-013", 6, 29);
  EXPECT_EQ(injected.message,
            "the type of seed column amount is not a DuckDB type: unexpected `'` after `DECIMAL(12,2)`: expected the "
            "end of the type");
  ExpectAt(files.Reject(head + "      amount: DECIMAL(12,2)); DROP TABLE x\n"), "SLU-SOURCE-013", 6, 28);
  ExpectAt(files.Reject(head + "      amount: BIGNT\n"), "SLU-SOURCE-013", 6, 15);
  // Written with escapes, the value is located at its start.
  ExpectAt(files.Reject(head + "      amount: \"BIG\\x49NT x\"\n"), "SLU-SOURCE-013", 6, 15);
}

// A seed CSV file's own error is located in it; the YAML's other entries are still loaded and checked.
TEST(SeedSources, CsvErrorsAreLocatedInTheCsvFileAndReportedWithTheOthers) {
  SourceFiles files;
  files.Write("seeds/a.csv", "id,name\n1,ann,x\n");
  files.Write("seeds/b.csv", "id\n\"2\n");
  files.Write("sources/t.yml", "sources:\n  - kind: seed\n    name: t\n    path: seeds/missing.csv\n");
  try {
    files.Load(
        "sources:\n  - kind: seed\n    name: b\n    path: seeds/b.csv\n"
        "  - kind: seed\n    name: a\n    path: seeds/a.csv\n");
    ADD_FAILURE() << "loaded";
  } catch (const Error& error) {
    std::string located;
    for (const Diagnostic& d : error.diagnostics()) {
      located += d.location.file + ":" + std::to_string(d.location.line) + ":" + std::to_string(d.location.column) +
                 " " + d.code + "\n";
    }
    EXPECT_EQ(located,
              "seeds/a.csv:2:6 SLU-SEED-002\n"
              "seeds/b.csv:2:1 SLU-SEED-001\n"
              "sources/t.yml:4:11 SLU-SOURCE-003\n");
  }
}

TEST(SourceLoading, TheProjectLoaderPassesProjectTargetAndDatabase) {
  SourceFiles files;
  files.Write("streambuild_project.toml",
              "name = \"orders_demo\"\ndefault_target = \"demo\"\n[targets.demo]\ndatabase = \"orders_demo\"\n");
  files.Write("sources/order_events.yml",
              "sources:\n  - kind: kafka\n    name: order_events\n    topic: source.order_events.live\n"
              "    broker_list: redpanda:9092\n    replay_boundary:\n      mode: offsets\n");
  Project project = LoadProject(files.root(), LoadOptions{});
  const Asset* source = project.definitions.FindByName("order_events");
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(std::get<KafkaSource>(source->compute).consumer_group,
            "streambuild_orders_demo_demo_order_events_orders_demo");
}

TEST(ConsumerGroups, DefaultAndDatabaseScopedNames) {
  std::string group = DefaultKafkaConsumerGroup("orders_demo", "demo", "order_events");
  EXPECT_EQ(group, "streambuild_orders_demo_demo_order_events");
  EXPECT_EQ(DatabaseScopedConsumerGroup(group, "orders_demo"), "streambuild_orders_demo_demo_order_events_orders_demo");
  EXPECT_EQ(DatabaseScopedConsumerGroup("g", "a-b-c"), "g_a_b_c");
}

}  // namespace
}  // namespace sluice
