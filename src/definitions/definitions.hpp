// Definitions: the immutable value every later layer consumes — the project it describes, its assets (SQL
// models, seeds, adopted tables, managed sources) with their rendered-ready SQL, the pipelines, the SQL tests
// and audits, the macros, and the graph between the assets. Produced by project/ (SQL-model projects) and by
// sdk/ (C++ code), or built by hand; after it, compile, run and deploy look at nothing else.
//
// Construction validates the graph: unique keys (SLU-GRAPH-004), known upstreams (SLU-GRAPH-002), no cycles
// (SLU-GRAPH-001 naming the cycle, located at the reference that closes it), and that every reference and
// partition-bound span of a SQL model lies inside its body, in text order, none overlapping another
// (SLU-DEFS-001).
// Thread-safety: immutable once built; share freely across threads (by const reference or shared_ptr).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/asset_key.hpp"
#include "core/daily_partitions.hpp"
#include "core/diagnostic.hpp"
#include "definitions/checks.hpp"
#include "sql/clickhouse_ddl.hpp"
#include "sql/reference_scanner.hpp"
#include "sluice/relational.hpp"

namespace sluice {

enum class EdgeType { kDrivingInput, kReference, kMutableReference };
std::string EdgeTypeName(EdgeType type);  // driving_input | reference | mutable_reference

// A daily-partitioned asset: one partition per UTC day of `column` (a DATE column of the output).
struct PartitionSpec {
  std::string column;
  DailyPartitions partitions;
  bool operator==(const PartitionSpec&) const = default;
};

enum class ModelKind { kTable, kView };

// One output column of a SQL model: its name and its cast type as authored (views of its ModelColumns).
struct ModelColumn {
  std::string_view name;
  std::string_view type;
  bool operator==(const ModelColumn&) const = default;
};

// The output columns of a SQL model, in projection order, kept in one string with their end offsets rather
// than two strings each: a large project has hundreds of thousands of columns, and the analysis of one is
// bounded by the memory it touches (docs/performance.md). Iterating yields ModelColumn views.
class ModelColumns {
 public:
  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = ModelColumn;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = ModelColumn;
    Iterator() = default;
    Iterator(const ModelColumns* columns, size_t index) : columns_(columns), index_(index) {}
    ModelColumn operator*() const { return (*columns_)[index_]; }
    Iterator& operator++() {
      ++index_;
      return *this;
    }
    Iterator operator++(int) {
      Iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }

   private:
    const ModelColumns* columns_ = nullptr;
    size_t index_ = 0;
  };

  ModelColumns() = default;
  ModelColumns(std::initializer_list<ModelColumn> columns);

  // Room for `columns` columns whose names and types total `text_bytes`.
  void reserve(size_t columns, size_t text_bytes);
  void push_back(std::string_view name, std::string_view type);

  size_t size() const { return ends_.size() / 2; }
  bool empty() const { return ends_.empty(); }
  ModelColumn operator[](size_t i) const;
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }
  bool operator==(const ModelColumns&) const = default;

 private:
  std::string text_;            // name, type, name, type … one after another
  std::vector<uint32_t> ends_;  // where each name and each type ends in text_
};

// One `__source(...)` / `__ref(...)` occurrence in a model body, resolved to the asset it names.
struct ResolvedReference {
  sql::ReferenceCall call;  // offsets relative to SqlCompute::body
  AssetKey upstream;
  EdgeType edge;
  SourceLocation at;  // where the call is written
};

enum class PartitionBound { kStart, kEnd };

// One `@partition_start()` / `@partition_end()` call in a model body: rendered at run time as a DATE literal of
// the run window's start or end.
struct PartitionBoundCall {
  size_t begin;  // offsets relative to SqlCompute::body
  size_t end;
  PartitionBound bound;
  SourceLocation at;  // where the call is written
};

// ClickHouse storage keys of a table model (kept for the compiler and ClickHouse; ignored on DuckDB).
struct StorageSpec {
  std::string engine = "MergeTree()";
  std::vector<std::string> order_by = {"_replay_timestamp"};
  std::optional<std::string> partition_by;
  std::optional<std::string> ttl;
  std::vector<std::pair<std::string, std::string>> settings;
  bool operator==(const StorageSpec&) const = default;
};

// Whether a ClickHouse table engine merges rows of equal sorting keys into one (Replacing, Summing, Aggregating,
// Collapsing, VersionedCollapsing and Graphite MergeTree, Replicated or not): for such an engine the ORDER BY decides
// which rows become one, so it cannot be chosen for the author.
bool EngineMergesRowsByKey(std::string_view engine);

// A SQL model. `body` is its statement: the author's SELECT after macro expansion, from its first token to its
// last one, without the trailing `;` (comments kept, bytes as written). Compile and run render it the same way
// (definitions/model_sql.hpp): each reference span replaced by a relation, each partition bound by a date.
struct SqlCompute {
  ModelKind kind = ModelKind::kTable;
  std::string body;
  size_t body_offset = 0;                           // where the body starts in the (expanded) model file
  std::vector<ResolvedReference> references;        // in text order
  std::vector<PartitionBoundCall> partition_bounds;  // in text order
  StorageSpec storage;
  // From the SQL body contract: the output columns in projection order, whether the model has aggregate
  // semantics, and whether it can serve as a replay anchor.
  ModelColumns columns;
  bool aggregate = false;
  bool anchor_eligible = false;
  // Where the body names a replay role of an adopted table (`_replay_offset`) that the table keeps in another column
  // (`ofs`): that column, read instead wherever the model runs (definitions/model_sql.hpp, RoleColumns::kPhysical),
  // so the model reads the table itself and never a subquery renaming its columns. Offsets relative to `body`.
  std::vector<sql::SpanReplacement> role_column_reads;
  // The file's text before the body (its MODEL header as written; body_offset long): with `body`, what a run-time
  // error is located and shown in, so no layer reads the model file again after load.
  std::string header;
};

// A CSV file loaded into a table (Sluice's `kind: seed` source).
struct SeedCompute {
  std::string path;                                          // relative to the project root
  std::vector<std::pair<std::string, std::string>> columns;  // name → type; empty: inferred
};

// A table that exists in the warehouse and is never written (StreamBuild's adopted `stream_table`).
struct ExternalTable {
  std::string table_name;
  std::string replay_mode;                            // offsets | timestamp | cursor
  std::map<std::string, std::string> replay_columns;  // _replay_x role → physical column
  // A stand-in the project loader made for a code asset its models read (LoadOptions::code_asset_keys); the SDK puts
  // the code asset in its place (sdk/sdk_definitions.hpp), so it is never run.
  bool defined_in_code = false;
};

// A managed Kafka source (StreamBuild §5.1): a Kafka engine table, a raw landing table and a landing MV, whose
// settings (topic, broker list after defaults.kafka_broker_list, the rendered consumer group, format, landing TTL
// after defaults.managed_source_ttl, extra engine settings) are the DDL's. Runs only on ClickHouse.
struct KafkaSource : sql::KafkaTableSpec {
  std::string replay_mode;               // offsets | timestamp | landed_at
  std::string name_origin = "declared";                       // declared | derived (naming macro)
  // For a derived name: the naming macro that gave it, and that macro's fingerprint (MacroEngine).
  std::optional<std::string> naming_macro;
  std::optional<std::string> naming_macro_fingerprint;
};

// A scheduled PostgreSQL pull (StreamBuild §5.3): the table its `postgresql(…)` relation reads, and how often.
// Runs only on ClickHouse.
struct PostgresSource : sql::PostgresTableSpec {
  std::optional<std::string> refresh;  // "<int> SECOND|MINUTE|HOUR|DAY[S]"
  bool append = true;
};

// What a code asset's compute function is given: the run, the partition keys and the half-open window it owns (both
// empty when unpartitioned), and a logger whose lines become the run's events.
struct CodeContext {
  AssetKey key;
  std::string run_id;
  std::vector<std::string> partition_keys;
  std::optional<DateWindow> window;
  std::function<void(const std::string&)> log;
};

// One input of a code asset: the parameter it is passed as, and the upstream asset it reads.
struct CodeInput {
  std::string parameter;
  AssetKey upstream;
};

// The tables a code asset's compute function receives, by parameter name: each upstream as a reference to its
// relation, filtered to the run's window when both are daily-partitioned.
using CodeInputs = std::map<std::string, rel::Table, std::less<>>;
using CodeFunction = std::function<rel::Table(const CodeContext&, const CodeInputs&)>;

// An asset defined in C++ (sdk/): a function returning a relational expression, which the engine prints in the
// warehouse's dialect and writes through the same path as a SQL model's SELECT.
struct CodeCompute {
  std::vector<CodeInput> inputs;  // in declaration order
  CodeFunction function;
  std::vector<std::string> kinds;                               // e.g. {"ibis"}, sorted
  std::vector<std::pair<std::string, std::string>> metadata;    // as declared, sorted by key
  std::string io_manager_key;
};

using AssetCompute = std::variant<SqlCompute, SeedCompute, ExternalTable, KafkaSource, PostgresSource, CodeCompute>;

// Dagster's backfill policy: how many partitions one run of a ranged run (a backfill) may own. A single run owns each
// contiguous range whole.
struct BackfillPolicy {
  std::optional<int> max_partitions_per_run;  // nullopt: single run
  static BackfillPolicy SingleRun() { return {}; }
  static BackfillPolicy MultiRun(int max_partitions_per_run) { return {max_partitions_per_run}; }
  bool operator==(const BackfillPolicy&) const = default;
};

struct AssetDependency {
  AssetKey upstream;
  EdgeType edge;
  bool operator==(const AssetDependency&) const = default;
};

struct Asset {
  AssetKey key;               // [namespace, model or source name]
  std::string relation_name;  // physical relation inside the namespace
  std::string pipeline;       // owning pipeline; empty for sources
  std::string description;
  std::optional<PartitionSpec> partitions;
  std::vector<AssetDependency> deps;  // distinct upstreams, in first-reference order
  AssetCompute compute;
  SourceLocation defined_at;  // the model file / source entry; for a code asset, the C++ file and line
  // SQL models and code assets without one run each contiguous range as one run.
  BackfillPolicy backfill_policy;

  bool is_source() const {
    return !std::holds_alternative<SqlCompute>(compute) && !std::holds_alternative<CodeCompute>(compute);
  }
  // The name users select it by: model name or source name.
  const std::string& name() const { return key.name(); }
};

// The manifest's kinds.
std::string AssetKindName(const Asset& asset);  // table | view | seed | stream_table | kafka | postgres | code

// One replay_on_change rule (StreamBuild reference §8): `full`, or `bounded-<N><d|h|m|s>` (lookback_seconds = N in
// seconds).
struct ReplayRule {
  bool bounded = false;
  int64_t lookback_seconds = 0;
  bool operator==(const ReplayRule&) const = default;
};

struct ReplayOnChange {
  std::optional<ReplayRule> breaking;
  std::optional<ReplayRule> non_breaking;
  bool operator==(const ReplayOnChange&) const = default;
};

// What a seeded bounded replay becomes when the active table cannot give its history (it lacks the lineage columns).
enum class BoundedReplayFallback { kFull, kBoundedWithoutHistory };

struct Pipeline {
  std::string name;
  std::string directory;              // relative to the project root, e.g. "pipelines/orders"
  std::string name_space;             // where its models live
  std::vector<std::string> models;    // model names, sorted
  std::optional<std::string> source;  // the one source its table models reach; none for view-only
  bool virtual_mode = false;          // deployed through staged (virtual) deployments; else direct
  // A protected direct pipeline: `build` runs it only with this token (`--confirm`), showing the warning.
  std::optional<std::string> confirmation;
  std::string protection_warning;
  std::vector<std::pair<std::string, std::string>> replay_settings;  // applied to its replay INSERTs only
  // Virtual pipelines: the effective replay policy (pipeline.toml, else the project's [defaults]).
  std::optional<ReplayOnChange> replay_on_change;
  BoundedReplayFallback bounded_replay_fallback = BoundedReplayFallback::kFull;
};

// A macro the project defines (the manifest lists them).
struct MacroSource {
  std::string name;
  std::string file;    // relative to the project root, e.g. "macros/common.py"
  std::string source;  // the function's source text; may be empty
};

// What the definitions describe: the project's name, the target it was resolved for and that target's
// adapter (duckdb, clickhouse, …), which is also the dialect its SQL is written in.
struct ProjectInfo {
  std::string name;
  std::string target;
  std::string adapter = "duckdb";
};

// The graph and its queries.
class Definitions {
 public:
  struct Parts {
    ProjectInfo project;
    std::vector<Asset> assets;
    std::vector<Pipeline> pipelines;
    std::vector<TestSpec> tests;
    std::vector<AuditSpec> audits;
    std::vector<MacroSource> macros;
  };

  Definitions() = default;
  explicit Definitions(Parts parts);
  Definitions(std::vector<Asset> assets, std::vector<Pipeline> pipelines);
  Definitions(const Definitions&) = delete;
  Definitions& operator=(const Definitions&) = delete;
  Definitions(Definitions&&) = default;
  Definitions& operator=(Definitions&&) = default;

  const ProjectInfo& project() const { return project_; }
  // Sorted by key.
  const std::vector<Asset>& assets() const { return assets_; }
  // Sorted by name.
  const std::vector<Pipeline>& pipelines() const { return pipelines_; }
  // Each sorted by name.
  const std::vector<TestSpec>& tests() const { return tests_; }
  const std::vector<AuditSpec>& audits() const { return audits_; }
  const std::vector<MacroSource>& macros() const { return macros_; }

  const Asset* Find(const AssetKey& key) const;
  // By model or source name (names are unique across a project; the first in key order otherwise).
  const Asset* FindByName(const std::string& name) const;
  const Pipeline* FindPipeline(const std::string& name) const;

  // Every asset in dependency order (upstream first); ties broken by key, so the order is stable.
  std::vector<AssetKey> TopologicalOrder() const;
  // `keys` plus everything upstream (downstream) of them.
  std::vector<AssetKey> UpstreamClosure(const std::vector<AssetKey>& keys) const;
  std::vector<AssetKey> DownstreamClosure(const std::vector<AssetKey>& keys) const;
  // Direct downstreams of one asset.
  std::vector<AssetKey> Downstream(const AssetKey& key) const;

 private:
  struct KeyHash {
    size_t operator()(const AssetKey& key) const;
  };
  size_t IndexOf(const AssetKey& key) const;
  std::vector<AssetKey> Closure(const std::vector<AssetKey>& keys, bool upstream) const;

  ProjectInfo project_;
  std::vector<Asset> assets_;
  std::vector<Pipeline> pipelines_;
  std::vector<TestSpec> tests_;
  std::vector<AuditSpec> audits_;
  std::vector<MacroSource> macros_;
  std::unordered_map<AssetKey, size_t, KeyHash> index_;  // by key
  std::unordered_map<std::string_view, size_t> by_name_;  // the first asset (in key order) of each name, viewing it
  // The edges by asset index, each asset's run of a flat array: asset i's upstreams (in deps order) are
  // upstreams_[edge_begin_[i], edge_begin_[i + 1]); the assets reading it (ascending) downstreams_ from
  // downstream_begin_[i] to downstream_begin_[i + 1].
  std::span<const size_t> UpstreamsOf(size_t i) const;
  std::span<const size_t> DownstreamsOf(size_t i) const;
  std::vector<size_t> edge_begin_;
  std::vector<size_t> upstreams_;
  std::vector<size_t> downstream_begin_;
  std::vector<size_t> downstreams_;
};

}  // namespace sluice
