// ClickHouse DDL for the objects a StreamBuild project owns (reference §5.1 and §9 "DDL shapes"): the three
// objects of a managed Kafka source, table models (table + `MATERIALIZED VIEW … TO`), view models, stable
// bindings, and the `postgresql(…)` relation of a Postgres source. Pure rendering from structured input;
// nothing here connects to a server.
//
// Text is byte-for-byte StreamBuild's, so compile artifacts compare equal with StreamBuild's:
//   - identifiers are written bare when they match [A-Za-z_][A-Za-z0-9_]* (as StreamBuild writes them) and
//     quoted by the ClickHouse dialect otherwise (StreamBuild would emit broken SQL there);
//   - values StreamBuild quotes (Kafka settings, `postgresql()` arguments) are ClickHouse string literals
//     escaped by the dialect; engine, ORDER BY, PARTITION BY, TTL, model settings and queries are written
//     as given (they are SQL expressions, validated where they are parsed).
// The landing MV of a Kafka source reads `FROM kafka__<source>` unqualified, as StreamBuild does: execute it
// with `database` as the session's current database.
//
// Secrets: with SecretHandling::kRedact (static artifacts) a Kafka broker list containing `@` renders as
// `***`, and a setting whose key contains credential, password, private_key, sasl, secret or token (any
// case) renders its value as `***`. A Postgres password is never resolved, in either mode: the relation
// names the password's environment variable through a placeholder the executor substitutes at run time.
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice::sql {

enum class ClickHouseResourceKind { kManagedSource, kTable, kMaterializedView };

// managed_source | table | materialized_view (the manifest's resource kinds).
std::string ClickHouseResourceKindName(ClickHouseResourceKind kind);

struct ClickHouseResource {
  ClickHouseResourceKind kind;
  std::string name;  // relation name, e.g. raw__orders
  std::string sql;   // one statement, no trailing semicolon or newline
  bool operator==(const ClickHouseResource&) const = default;
};

enum class SecretHandling { kKeep, kRedact };

// Creation form: plain `CREATE …` (compile artifacts) or `CREATE … IF NOT EXISTS` (sources at build time).
enum class CreateMode { kCreate, kCreateIfNotExists };

// True when a setting key names a credential (contains credential, password, private_key, sasl, secret or
// token, case-insensitively).
bool IsSecretSettingKey(std::string_view key);

// A managed Kafka source's engine settings.
struct KafkaTableSpec {
  std::string topic;
  std::string broker_list;     // secrets redacted only when rendered with SecretHandling::kRedact
  std::string consumer_group;  // the kafka_group_name, as rendered (database suffix included)
  std::string format = "JSONAsString";
  std::optional<std::string> ttl;                             // of the raw landing table
  std::vector<std::pair<std::string, std::string>> settings;  // extra engine settings
};

// `kafka__<source>` (Kafka engine, `message String`), `raw__<source>` (MergeTree landing table with the 13
// raw columns, ORDER BY (_replay_partition, _replay_offset), TTL when `kafka.ttl` is set) and `mv__<source>`
// (the landing MV), in that order, in `database`. `kafka.consumer_group` is used as given: it is already the
// database-scoped group (see DatabaseScopedConsumerGroup). Throws Error SLU-SQL-020 for an empty name.
std::vector<ClickHouseResource> RenderKafkaSourceResources(std::string_view database, std::string_view source,
                                                           const KafkaTableSpec& kafka, SecretHandling secrets,
                                                           CreateMode mode = CreateMode::kCreate);

// One column of a model table: `name Type[ DEFAULT expr]`.
struct ColumnDefinition {
  std::string name;
  std::string type;  // ClickHouse type text as authored, e.g. Nullable(DateTime64(3))
  std::optional<std::string> default_expression;
  bool operator==(const ColumnDefinition&) const = default;
};

// The physical shape of a table model: its output columns plus the MODEL header's storage keys.
struct ModelStorage {
  std::vector<ColumnDefinition> columns;  // in output order; at least one
  std::string engine = "MergeTree()";
  std::vector<std::string> order_by = {"_replay_timestamp"};  // expressions; at least one
  std::optional<std::string> partition_by;
  std::optional<std::string> ttl;
  std::vector<std::pair<std::string, std::string>> settings;  // rendered `k = v`, values unquoted
};

// CREATE TABLE db.name (\n    col Type,\n    …\n) ENGINE = <engine>\nORDER BY (<a, b>)[\nPARTITION BY …]
// [\nTTL …][\nSETTINGS k = v, …]. With kRedact, secret-named settings render `k = ***`.
std::string RenderModelTable(std::string_view database, std::string_view name, const ModelStorage& storage,
                             SecretHandling secrets = SecretHandling::kKeep, CreateMode mode = CreateMode::kCreate);

// CREATE MATERIALIZED VIEW db.mv\nTO db.target AS\n<query>. `query` is the model's resolved SELECT, kept
// byte for byte.
std::string RenderMaterializedView(std::string_view database, std::string_view name, std::string_view target,
                                   std::string_view query, CreateMode mode = CreateMode::kCreate);

// The MV of a model driven by a Postgres source (§5.3):
// CREATE MATERIALIZED VIEW db.mv\nREFRESH EVERY <refresh>[ APPEND]\nTO db.target AS\n<query>
// \nSETTINGS allow_experimental_refreshable_materialized_view = 1
std::string RenderRefreshableMaterializedView(std::string_view database, std::string_view name, std::string_view target,
                                              std::string_view query, std::string_view refresh, bool append,
                                              CreateMode mode = CreateMode::kCreate);

// CREATE VIEW db.v AS\n<query>
std::string RenderView(std::string_view database, std::string_view name, std::string_view query,
                       CreateMode mode = CreateMode::kCreate);

// CREATE OR REPLACE VIEW db.logical AS\nSELECT * FROM db.physical
std::string RenderStableBinding(std::string_view database, std::string_view logical, std::string_view physical);

// `__streambuild_secret__<ENV>__`: what a Postgres relation writes in place of the password kept in the
// environment variable `env`. The executor replaces it, at run time only, with the variable's value.
std::string PostgresPasswordPlaceholder(std::string_view env);

// What a Postgres source's table function reads.
struct PostgresTableSpec {
  std::string host;
  int port = 5432;
  std::string database;
  std::string table;
  std::string user;
  std::optional<std::string> password_env;
};

// postgresql('host:port','database','table','user','<placeholder>') — the relation a model reading a
// Postgres source selects from. The password is the placeholder of `password_env`, or '' without one;
// never the password itself.
std::string RenderPostgresRelation(const PostgresTableSpec& source);

}  // namespace sluice::sql
