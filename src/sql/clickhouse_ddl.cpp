#include "sql/clickhouse_ddl.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "core/asset_key.hpp"
#include "sql/dialect.hpp"

namespace sluice::sql {

namespace {

constexpr std::string_view kRedacted = "***";

// StreamBuild writes names bare; a name that is not a plain identifier is quoted so the SQL stays valid.
std::string Name(std::string_view name) {
  if (IsIdentifier(name)) return std::string(name);
  return QuoteIdentifier(Dialect::kClickHouse, name);
}

std::string Qualified(std::string_view database, std::string_view name) { return Name(database) + "." + Name(name); }

std::string Literal(std::string_view value) { return QuoteString(Dialect::kClickHouse, value); }

std::string CreatePrefix(std::string_view object, CreateMode mode) {
  return "CREATE " + std::string(object) + (mode == CreateMode::kCreateIfNotExists ? " IF NOT EXISTS " : " ");
}

std::string Columns(const std::vector<ColumnDefinition>& columns) {
  std::string out;
  for (const ColumnDefinition& column : columns) {
    if (!out.empty()) out += ",\n    ";
    out += Name(column.name) + " " + column.type;
    if (column.default_expression) out += " DEFAULT " + *column.default_expression;
  }
  return out;
}

std::string Joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// `(a, b)`, as StreamBuild writes it; `tuple()` (no sorting key) alone as itself.
std::string OrderBy(const std::vector<std::string>& order_by) {
  if (order_by.size() == 1 && order_by.front() == "tuple()") return order_by.front();
  return "(" + Joined(order_by, ", ") + ")";
}

const std::vector<ColumnDefinition>& RawLandingColumns() {
  static const std::vector<ColumnDefinition> kColumns = {
      {"kafka_key", "String", std::nullopt},
      {"kafka_value", "String", std::nullopt},
      {"kafka_topic", "String", std::nullopt},
      {"kafka_partition", "Int32", std::nullopt},
      {"kafka_offset", "Int64", std::nullopt},
      {"kafka_timestamp", "Nullable(DateTime64(3))", std::nullopt},
      {"_replay_partition", "Int32", std::nullopt},
      {"_replay_offset", "Int64", std::nullopt},
      {"_replay_timestamp", "Nullable(DateTime64(3))", std::nullopt},
      {"kafka_header_keys", "Array(String)", std::nullopt},
      {"kafka_header_values", "Array(String)", std::nullopt},
      {"kafka_landed_at", "DateTime64(3)", std::nullopt},
      {"_replay_landed_at", "DateTime64(3)", std::nullopt},
  };
  return kColumns;
}

std::string LandingQuery(std::string_view kafka_table) {
  return "SELECT\n"
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
         "FROM " +
         Name(kafka_table);
}

std::string KafkaTable(std::string_view database, std::string_view name, const KafkaTableSpec& kafka,
                       SecretHandling secrets, CreateMode mode) {
  bool redact = secrets == SecretHandling::kRedact;
  std::string broker_list =
      redact && kafka.broker_list.find('@') != std::string::npos ? std::string(kRedacted) : kafka.broker_list;
  std::vector<std::string> settings = {
      "kafka_broker_list = " + Literal(broker_list),
      "kafka_topic_list = " + Literal(kafka.topic),
      "kafka_group_name = " + Literal(kafka.consumer_group),
      "kafka_format = " + Literal(kafka.format),
  };
  for (const auto& [key, value] : kafka.settings) {
    settings.push_back(Name(key) + " = " + Literal(redact && IsSecretSettingKey(key) ? kRedacted : value));
  }
  return CreatePrefix("TABLE", mode) + Qualified(database, name) +
         " (\n    message String\n) ENGINE = Kafka\nSETTINGS " + Joined(settings, ", ");
}

}  // namespace

std::string ClickHouseResourceKindName(ClickHouseResourceKind kind) {
  switch (kind) {
    case ClickHouseResourceKind::kManagedSource:
      return "managed_source";
    case ClickHouseResourceKind::kTable:
      return "table";
    case ClickHouseResourceKind::kMaterializedView:
      return "materialized_view";
  }
  return "table";
}

bool IsSecretSettingKey(std::string_view key) {
  static constexpr std::array<std::string_view, 6> kMarkers = {"credential", "password", "private_key",
                                                               "sasl",       "secret",   "token"};
  std::string lower(key);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return std::any_of(kMarkers.begin(), kMarkers.end(),
                     [&](std::string_view marker) { return lower.find(marker) != std::string::npos; });
}

std::vector<ClickHouseResource> RenderKafkaSourceResources(std::string_view database, std::string_view source,
                                                           const KafkaTableSpec& kafka, SecretHandling secrets,
                                                           CreateMode mode) {
  std::string kafka_name = "kafka__" + std::string(source);
  std::string raw_name = "raw__" + std::string(source);
  std::string mv_name = "mv__" + std::string(source);
  ModelStorage raw;
  raw.columns = RawLandingColumns();
  raw.order_by = {"_replay_partition", "_replay_offset"};
  raw.ttl = kafka.ttl;
  return {
      {ClickHouseResourceKind::kManagedSource, kafka_name, KafkaTable(database, kafka_name, kafka, secrets, mode)},
      {ClickHouseResourceKind::kTable, raw_name, RenderModelTable(database, raw_name, raw, secrets, mode)},
      {ClickHouseResourceKind::kMaterializedView, mv_name,
       RenderMaterializedView(database, mv_name, raw_name, LandingQuery(kafka_name), mode)},
  };
}

std::string RenderModelTable(std::string_view database, std::string_view name, const ModelStorage& storage,
                             SecretHandling secrets, CreateMode mode) {
  std::string ddl = CreatePrefix("TABLE", mode) + Qualified(database, name) + " (\n    " + Columns(storage.columns) +
                    "\n) ENGINE = " + storage.engine + "\nORDER BY " + OrderBy(storage.order_by);
  if (storage.partition_by) ddl += "\nPARTITION BY " + *storage.partition_by;
  if (storage.ttl) ddl += "\nTTL " + *storage.ttl;
  if (!storage.settings.empty()) {
    std::vector<std::string> settings;
    for (const auto& [key, value] : storage.settings) {
      bool redact = secrets == SecretHandling::kRedact && IsSecretSettingKey(key);
      settings.push_back(Name(key) + " = " + (redact ? std::string(kRedacted) : value));
    }
    ddl += "\nSETTINGS " + Joined(settings, ", ");
  }
  return ddl;
}

std::string RenderMaterializedView(std::string_view database, std::string_view name, std::string_view target,
                                   std::string_view query, CreateMode mode) {
  return CreatePrefix("MATERIALIZED VIEW", mode) + Qualified(database, name) + "\nTO " + Qualified(database, target) +
         " AS\n" + std::string(query);
}

std::string RenderRefreshableMaterializedView(std::string_view database, std::string_view name, std::string_view target,
                                              std::string_view query, std::string_view refresh, bool append,
                                              CreateMode mode) {
  return CreatePrefix("MATERIALIZED VIEW", mode) + Qualified(database, name) + "\nREFRESH EVERY " +
         std::string(refresh) + (append ? " APPEND" : "") + "\nTO " + Qualified(database, target) + " AS\n" +
         std::string(query) + "\nSETTINGS allow_experimental_refreshable_materialized_view = 1";
}

std::string RenderView(std::string_view database, std::string_view name, std::string_view query, CreateMode mode) {
  return CreatePrefix("VIEW", mode) + Qualified(database, name) + " AS\n" + std::string(query);
}

std::string RenderStableBinding(std::string_view database, std::string_view logical, std::string_view physical) {
  return "CREATE OR REPLACE VIEW " + Qualified(database, logical) + " AS\nSELECT * FROM " +
         Qualified(database, physical);
}

std::string PostgresPasswordPlaceholder(std::string_view env) {
  return "__streambuild_secret__" + std::string(env) + "__";
}

std::string RenderPostgresRelation(const PostgresTableSpec& source) {
  std::string password = source.password_env ? PostgresPasswordPlaceholder(*source.password_env) : "";
  return "postgresql(" + Literal(source.host + ":" + std::to_string(source.port)) + "," + Literal(source.database) +
         "," + Literal(source.table) + "," + Literal(source.user) + "," + Literal(password) + ")";
}

}  // namespace sluice::sql
