// Source declarations: `sources/*.yml` (direct children, sorted), each `{sources: [ … ]}` (StreamBuild §5).
//
// Kinds: `seed` (Sluice: a CSV loaded into a table), `stream_table` (an existing table adopted as a source,
// §5.2), `kafka` (a managed Kafka topic, §5.1) and `postgres` (a scheduled PostgreSQL pull, §5.3). Every
// entry has `kind` and `name` (a Kafka source may derive its name from its topic through the project's
// naming macro) and an optional `description`; the three StreamBuild kinds also take `freshness`
// (`warn_after`/`error_after`, `<int>[smhd]`, at least one, warn ≤ error; else `defaults.freshness`).
// Names match [A-Za-z_][A-Za-z0-9_]* and are unique across files. Values are typed as PyYAML reads them
// (so `topic: 2024` is a number, not a string, and is rejected where a string is required, exactly as
// StreamBuild does). Every string scalar value goes through `SourceLoadOptions::expand` (templating)
// before it is checked; mapping keys may not contain `${`.
//
// Sluice differs from StreamBuild on purpose: it rejects, as located errors, input StreamBuild silently
// ignores (a key that belongs to another kind, e.g. `host` on a Kafka source; a key repeated in one YAML
// mapping; a Kafka setting name that is not an identifier), and it accepts `description` (a Sluice key)
// and reports an unsupported Kafka `format` when loading rather than at build time.
//
// Errors (each a located Diagnostic in the YAML file, with a hint):
//   SLU-SOURCE-001 malformed YAML or wrong shape (not a mapping/list, repeated key)
//   SLU-SOURCE-002 unknown key
//   SLU-SOURCE-003 missing or invalid field (required value absent, wrong YAML type, empty, not an
//                  identifier, bad port/append/refresh/format, seed file missing)
//   SLU-SOURCE-004 duplicate source name
//   SLU-SOURCE-005 unknown kind
//   SLU-SOURCE-006 replay-boundary rule broken (mode, role columns, `columns` on Kafka, or two sources
//                  adopting one table with different boundaries)
//   SLU-SOURCE-007 a field of another kind (Kafka fields on stream_table/postgres, `table_name` on kafka,
//                  streaming fields on postgres, …)
//   SLU-SOURCE-008 Kafka `settings` redefines kafka_broker_list, kafka_topic_list, kafka_group_name or
//                  kafka_format
//   SLU-SOURCE-009 a value with no project default: no `broker_list` and no defaults.kafka_broker_list, or
//                  no `name` and no Kafka naming macro
//   SLU-SOURCE-010 invalid freshness policy
//   SLU-SOURCE-011 a templated (`${…}`) mapping key
//   SLU-SOURCE-012 a seed's `columns` names a column its CSV header does not have (compared ignoring case)
//   SLU-SOURCE-013 a seed column's type is not a DuckDB type (sql/duckdb_type_name.hpp), located at the first
//                  byte that breaks the grammar when the YAML writes the value as is
// A seed's CSV file is read whole and checked against the seed dialect (core/seed_csv.hpp: SLU-SEED-*, located in
// the CSV file). Errors thrown by `expand` or `derive_name` pass through (an `expand` diagnostic located in the
// YAML file without a source line gets that line, for the caret).
// Thread-safety: pure functions over files; the callbacks are called on the calling thread only.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/diagnostic.hpp"
#include "definitions/definitions.hpp"

namespace sluice {

// How stale a source may get before a warning or an error. Each threshold is a duration `<int>[smhd]`.
struct FreshnessPolicy {
  std::optional<std::string> warn_after;
  std::optional<std::string> error_after;
  bool operator==(const FreshnessPolicy&) const = default;
};

// Seconds of a freshness duration such as `15m`, `2h` or `1d` (`<int>[smhd]`, nothing else); nullopt when
// `text` is not such a duration or overflows.
std::optional<int64_t> FreshnessDurationSeconds(std::string_view text);

struct SourceLoadOptions {
  std::string project_name;  // streambuild_project.toml `name`: part of the default Kafka consumer group
  std::string target_name;   // resolved target: part of the default Kafka consumer group
  std::string database;      // target database; scopes the consumer group (empty means `default`)
  std::optional<std::string> default_kafka_broker_list;   // defaults.kafka_broker_list
  std::optional<std::string> default_managed_source_ttl;  // defaults.managed_source_ttl
  std::optional<FreshnessPolicy> default_freshness;       // defaults.freshness, already validated
  // Templating of one string scalar (`${name}`, `${ENV:NAME}`); `at` is where the scalar is written.
  // Returns the expanded text or throws a located Error. Empty: strings are taken as written.
  std::function<std::string(const std::string& text, const SourceLocation& at)> expand;
  // The project's Kafka naming macro (defaults.sources.kafka.naming_macro) applied to a topic. Empty, or
  // returning nullopt, means no macro is configured: an unnamed Kafka source is then SLU-SOURCE-009.
  std::function<std::optional<std::string>(const std::string& topic, const SourceLocation& at)> derive_name;
};

struct SourceDeclaration {
  std::string name;
  SourceLocation at;  // the entry in its YAML file
  std::string description;
  std::optional<FreshnessPolicy> freshness;  // declared, else the default; none for seeds
  std::variant<SeedCompute, ExternalTable, KafkaSource, PostgresSource> compute;

  // seed | stream_table | kafka | postgres
  std::string kind() const;
};

// `streambuild_<project>_<target>_<source>`: the consumer group of a Kafka source that declares none.
std::string DefaultKafkaConsumerGroup(std::string_view project, std::string_view target, std::string_view source);

// `<group>_<database with every '-' replaced by '_'>`: the kafka_group_name ClickHouse uses, so two target
// databases never share a group.
std::string DatabaseScopedConsumerGroup(std::string_view group, std::string_view database);

// Loads and checks every `sources/*.yml` of the project at `root`. Returns the sources sorted by name.
// A Kafka source's `consumer_group` is the rendered `kafka_group_name`: the declared group, else
// `streambuild_<project>_<target>_<source>`, always followed by `_<database with '-' → '_'>`.
// Throws one Error holding the first rejected declaration of each YAML file and the error of each seed CSV file,
// sorted by file (codes above).
std::vector<SourceDeclaration> LoadSources(const std::filesystem::path& root, const SourceLoadOptions& options = {});

}  // namespace sluice
