// Definitions: the immutable value every later layer consumes — assets, sources, pipelines and the graph
// between them. Produced by project/ (SQL-model projects) and later by sdk/ (C++ code); after it, nothing
// looks at files or SDK objects again.
//
// Thread-safety: immutable once built; share freely across threads (by const reference or shared_ptr).
#pragma once

#include <cstdint>
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
#include "core/name_index.hpp"
#include "sql/reference_scanner.hpp"

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

// The output columns of a SQL model — name → cast type as authored, in projection order — stored compactly:
// every name and type in one string with their end offsets, ~20 bytes a column instead of two strings' 64
// (a 10,000-model project has 250,000 columns). Iterating yields (name, type) views of the list.
class ColumnList {
 public:
  using value_type = std::pair<std::string_view, std::string_view>;

  class Iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = ColumnList::value_type;
    using difference_type = std::ptrdiff_t;
    using pointer = void;
    using reference = value_type;
    Iterator() = default;
    Iterator(const ColumnList* list, size_t index) : list_(list), index_(index) {}
    value_type operator*() const { return (*list_)[index_]; }
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
    const ColumnList* list_ = nullptr;
    size_t index_ = 0;
  };

  ColumnList() = default;
  ColumnList(std::initializer_list<value_type> columns);

  // Room for `columns` columns whose names and types total `text_bytes`.
  void reserve(size_t columns, size_t text_bytes);
  void push_back(std::string_view name, std::string_view type);

  size_t size() const { return ends_.size() / 2; }
  bool empty() const { return ends_.empty(); }
  value_type operator[](size_t i) const;
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, size()); }
  bool operator==(const ColumnList&) const = default;

  // The packed form — every name and type with no separator, and the offset where each ends — for storing the
  // list as is (the parse cache).
  std::string_view packed_text() const { return text_; }
  const std::vector<uint32_t>& packed_ends() const { return ends_; }
  // The list with this packed form; nullopt when `ends` is not one for `text` (an odd count, a decreasing
  // offset, or a last offset other than text's size).
  static std::optional<ColumnList> FromPacked(std::string text, std::vector<uint32_t> ends);

 private:
  std::string text_;            // name, type, name, type … with no separator
  std::vector<uint32_t> ends_;  // where each name and type ends in text_
};

// One `__source(...)` / `__ref(...)` occurrence in a model body, resolved to the asset it names.
struct ResolvedReference {
  sql::ReferenceCall call;  // offsets relative to SqlCompute::body
  AssetKey upstream;
  EdgeType edge;
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

// A SQL model: its body is the author's SELECT (bytes kept as written), rendered at run time by replacing
// each reference span with the upstream's relation and `@partition_start()` / `@partition_end()` with the
// run window's bounds.
struct SqlCompute {
  ModelKind kind = ModelKind::kTable;
  std::string body;
  size_t body_offset = 0;                     // where the body starts in the file (for locating diagnostics)
  std::vector<ResolvedReference> references;  // in text order
  StorageSpec storage;
  // From the SQL body contract: the output columns with their cast types as authored, whether the model has
  // aggregate semantics, and whether it can serve as a replay anchor.
  ColumnList columns;
  bool aggregate = false;
  bool anchor_eligible = false;
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
};

// A managed Kafka source (StreamBuild §5.1): a Kafka engine table, a raw landing table and a landing MV.
// Runs only on ClickHouse.
struct KafkaSource {
  std::string topic;
  std::string broker_list;     // after defaults.kafka_broker_list; secrets redacted only in artifacts
  std::string consumer_group;  // as rendered into kafka_group_name (database suffix included)
  std::string format = "JSONAsString";
  std::optional<std::string> ttl;                             // landing TTL after defaults.managed_source_ttl
  std::vector<std::pair<std::string, std::string>> settings;  // extra engine settings
  std::string replay_mode;                                    // offsets | timestamp | landed_at
  std::string name_origin = "declared";                       // declared | derived (naming macro)
};

// A scheduled PostgreSQL pull (StreamBuild §5.3). Runs only on ClickHouse.
struct PostgresSource {
  std::string host;
  int port = 5432;
  std::string database;
  std::string table;
  std::string user;
  std::optional<std::string> password_env;
  std::optional<std::string> refresh;  // "<int> SECOND|MINUTE|HOUR|DAY[S]"
  bool append = true;
};

using AssetCompute = std::variant<SqlCompute, SeedCompute, ExternalTable, KafkaSource, PostgresSource>;

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
  SourceLocation defined_at;  // the model file / source entry

  bool is_source() const { return !std::holds_alternative<SqlCompute>(compute); }
  // The name users select it by: model name or source name.
  const std::string& name() const { return key.name(); }
};

struct Pipeline {
  std::string name;
  std::string directory;              // relative to the project root, e.g. "pipelines/orders"
  std::string name_space;             // where its models live
  std::vector<std::string> models;    // model names, sorted
  std::optional<std::string> source;  // the one source its table models reach; none for view-only
};

// The graph and its queries. Construction validates: unique keys, known upstreams, no cycles
// (SLU-GRAPH-001 naming the cycle, located at the reference that closes it).
class Definitions {
 public:
  Definitions() = default;
  Definitions(std::vector<Asset> assets, std::vector<Pipeline> pipelines);
  // The same for a caller that resolved the dependencies already (the project loader) and gives the assets in
  // key order: resolved_upstreams[k] is the index in `assets` of the k-th dependency's upstream, counting asset
  // by asset in deps order. Then the assets are neither sorted nor moved and no upstream is looked up. Assets
  // not in key order are sorted and their upstreams looked up, as by the constructor above.
  Definitions(std::vector<Asset> assets, std::vector<Pipeline> pipelines, std::vector<size_t> resolved_upstreams);
  Definitions(const Definitions&) = delete;
  Definitions& operator=(const Definitions&) = delete;
  Definitions(Definitions&&) = default;
  Definitions& operator=(Definitions&&) = default;

  // Sorted by key.
  const std::vector<Asset>& assets() const { return assets_; }
  // Sorted by name.
  const std::vector<Pipeline>& pipelines() const { return pipelines_; }

  const Asset* Find(const AssetKey& key) const;
  // By model or source name (names are unique across the project).
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
  size_t IndexOf(const AssetKey& key) const;
  std::vector<AssetKey> Closure(const std::vector<AssetKey>& keys, bool upstream) const;
  std::vector<Asset> assets_;
  std::vector<Pipeline> pipelines_;
  // The indexes confirm keys against assets_ and view its names; the assets stay in place once constructed
  // (moving a Definitions moves the vector's buffer, not the assets; copying is deleted).
  static uint64_t HashOf(const AssetKey& key);
  // The index of the asset with this key; HashedIndex::kNone when there is none.
  size_t Lookup(const AssetKey& key) const;
  HashedIndex index_;  // by key
  NameIndex by_name_;  // the first asset (in key order) of each name
  // The assets reading each asset, by index: asset i's are downstream_[downstream_begin_[i], downstream_begin_[i + 1]).
  std::span<const size_t> DownstreamOf(size_t i) const {
    return {downstream_.data() + downstream_begin_[i], downstream_begin_[i + 1] - downstream_begin_[i]};
  }
  std::vector<size_t> downstream_begin_;
  std::vector<size_t> downstream_;
};

}  // namespace sluice
