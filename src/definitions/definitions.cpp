#include "definitions/definitions.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>

namespace sluice {

ModelColumns::ModelColumns(std::initializer_list<ModelColumn> columns) {
  for (const ModelColumn& column : columns) push_back(column.name, column.type);
}

void ModelColumns::reserve(size_t columns, size_t text_bytes) {
  text_.reserve(text_bytes);
  ends_.reserve(2 * columns);
}

void ModelColumns::push_back(std::string_view name, std::string_view type) {
  if (text_.size() + name.size() + type.size() > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error("a model's column names and types exceed 4 GiB");
  }
  text_.append(name);
  ends_.push_back(static_cast<uint32_t>(text_.size()));
  text_.append(type);
  ends_.push_back(static_cast<uint32_t>(text_.size()));
}

ModelColumn ModelColumns::operator[](size_t i) const {
  const size_t name_begin = i == 0 ? 0 : ends_[2 * i - 1];
  const size_t name_end = ends_[2 * i];
  const std::string_view text = text_;
  return {text.substr(name_begin, name_end - name_begin), text.substr(name_end, ends_[2 * i + 1] - name_end)};
}

bool EngineMergesRowsByKey(std::string_view engine) {
  for (std::string_view kind : {"ReplacingMergeTree", "SummingMergeTree", "AggregatingMergeTree",
                                "CollapsingMergeTree", "VersionedCollapsingMergeTree", "GraphiteMergeTree"}) {
    if (engine.find(kind) != std::string_view::npos) return true;
  }
  return false;
}

std::string EdgeTypeName(EdgeType type) {
  switch (type) {
    case EdgeType::kDrivingInput:
      return "driving_input";
    case EdgeType::kReference:
      return "reference";
    case EdgeType::kMutableReference:
      return "mutable_reference";
  }
  return "unknown";
}

std::string AssetKindName(const Asset& asset) {
  return std::visit(
      [](const auto& compute) -> std::string {
        using T = std::decay_t<decltype(compute)>;
        if constexpr (std::is_same_v<T, SqlCompute>)
          return compute.kind == ModelKind::kView ? "view" : "table";
        else if constexpr (std::is_same_v<T, SeedCompute>)
          return "seed";
        else if constexpr (std::is_same_v<T, ExternalTable>)
          return "stream_table";
        else if constexpr (std::is_same_v<T, KafkaSource>)
          return "kafka";
        else if constexpr (std::is_same_v<T, PostgresSource>)
          return "postgres";
        else
          return "code";
      },
      asset.compute);
}

namespace {

// The reference occurrence in `asset` that names `upstream`, for locating graph errors.
SourceLocation LocateReference(const Asset& asset, const AssetKey& upstream) {
  if (const auto* sql = std::get_if<SqlCompute>(&asset.compute)) {
    for (const ResolvedReference& ref : sql->references) {
      if (ref.upstream == upstream) return ref.at;
    }
  }
  return asset.defined_at;
}

// A cycle `a -> b -> … -> a` for a message: in full up to kMaxShownCycle names, else its first and last
// names around a count of the elided ones, so a cycle through thousands of models stays one readable line.
std::string ShownCycle(const std::vector<std::string>& path) {
  constexpr size_t kMaxShownCycle = 12;
  constexpr size_t kShownEachEnd = 5;
  std::string shown;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path.size() > kMaxShownCycle && i == kShownEachEnd) {
      shown += " -> … " + std::to_string(path.size() - 2 * kShownEachEnd) + " more …";
      i = path.size() - kShownEachEnd - 1;
      continue;
    }
    shown += (shown.empty() ? "" : " -> ") + path[i];
  }
  return shown;
}

// Every reference and partition-bound span of a SQL model lies inside its body, each list in text order and no two
// spans overlapping: what rendering its SQL relies on.
void CheckSpans(const Asset& asset) {
  const auto* sql = std::get_if<SqlCompute>(&asset.compute);
  if (sql == nullptr) return;
  // The two lists merged in text order: each span must start at or after the end of the one before it, which a
  // list out of order, or overlapping spans, do not.
  size_t r = 0;
  size_t b = 0;
  size_t previous_end = 0;
  while (r < sql->references.size() || b < sql->partition_bounds.size()) {
    const bool reference = b == sql->partition_bounds.size() ||
                           (r < sql->references.size() && sql->references[r].call.begin < sql->partition_bounds[b].begin);
    const size_t begin = reference ? sql->references[r].call.begin : sql->partition_bounds[b].begin;
    const size_t end = reference ? sql->references[r++].call.end : sql->partition_bounds[b++].end;
    if (begin >= previous_end && begin <= end && end <= sql->body.size()) {
      previous_end = end;
      continue;
    }
    throw Error(Diagnostic{"SLU-DEFS-001",
                           asset.key.ToString() + ": the reference or partition bound at [" + std::to_string(begin) +
                               ", " + std::to_string(end) + ") is not a span of its " +
                               std::to_string(sql->body.size()) + "-byte body after the one before it",
                           asset.defined_at,
                           "spans are byte offsets into SqlCompute::body, in text order, not overlapping",
                           {}});
  }
}

template <typename T>
void SortByName(std::vector<T>& items) {
  std::stable_sort(items.begin(), items.end(), [](const T& a, const T& b) { return a.name < b.name; });
}

}  // namespace

size_t Definitions::KeyHash::operator()(const AssetKey& key) const {
  return std::hash<std::string>()(key.name_space()) * 31 + std::hash<std::string>()(key.name());
}

Definitions::Definitions(std::vector<Asset> assets, std::vector<Pipeline> pipelines)
    : Definitions(Parts{{}, std::move(assets), std::move(pipelines), {}, {}, {}}) {}

Definitions::Definitions(Parts parts)
    : project_(std::move(parts.project)),
      pipelines_(std::move(parts.pipelines)),
      tests_(std::move(parts.tests)),
      audits_(std::move(parts.audits)),
      macros_(std::move(parts.macros)) {
  // Key order, sorted in place: the positions are sorted, then each asset moves along its permutation's cycle
  // (no second array of assets).
  assets_ = std::move(parts.assets);
  std::vector<size_t> order(assets_.size());  // order[k]: the asset that goes to position k
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return assets_[a].key < assets_[b].key; });
  std::vector<bool> placed(assets_.size(), false);
  for (size_t start = 0; start < assets_.size(); ++start) {
    if (placed[start] || order[start] == start) continue;
    Asset held = std::move(assets_[start]);
    size_t at = start;
    for (; order[at] != start; at = order[at]) {
      assets_[at] = std::move(assets_[order[at]]);
      placed[at] = true;
    }
    assets_[at] = std::move(held);
    placed[at] = true;
  }
  SortByName(pipelines_);
  SortByName(tests_);
  SortByName(audits_);
  SortByName(macros_);

  index_.reserve(assets_.size());
  by_name_.reserve(assets_.size());
  for (size_t i = 0; i < assets_.size(); ++i) {
    CheckSpans(assets_[i]);
    if (!index_.emplace(assets_[i].key, i).second) {
      throw Error(Diagnostic{"SLU-GRAPH-004",
                             "two assets share the key " + assets_[i].key.ToString(),
                             assets_[i].defined_at,
                             "rename one of them",
                             {}});
    }
    by_name_.emplace(assets_[i].name(), i);
  }
  // Each asset's upstreams by index; the first asset in key order with an unknown upstream is the one reported.
  edge_begin_.assign(assets_.size() + 1, 0);
  for (size_t i = 0; i < assets_.size(); ++i) edge_begin_[i + 1] = edge_begin_[i] + assets_[i].deps.size();
  upstreams_.reserve(edge_begin_.back());
  downstream_begin_.assign(assets_.size() + 1, 0);
  for (size_t i = 0; i < assets_.size(); ++i) {
    for (const AssetDependency& dep : assets_[i].deps) {
      auto found = index_.find(dep.upstream);
      if (found == index_.end()) {
        throw Error(Diagnostic{"SLU-GRAPH-002",
                               assets_[i].key.ToString() + " depends on unknown asset " + dep.upstream.ToString(),
                               LocateReference(assets_[i], dep.upstream),
                               "define the upstream asset",
                               {}});
      }
      upstreams_.push_back(found->second);
      ++downstream_begin_[found->second + 1];
    }
  }
  // The same edges the other way: counted above, placed here, each asset's readers in ascending order.
  for (size_t i = 0; i < assets_.size(); ++i) downstream_begin_[i + 1] += downstream_begin_[i];
  downstreams_.resize(upstreams_.size());
  std::vector<size_t> filled(downstream_begin_.begin(), downstream_begin_.end() - 1);
  for (size_t i = 0; i < assets_.size(); ++i) {
    for (size_t upstream : UpstreamsOf(i)) downstreams_[filled[upstream]++] = i;
  }
  // Cycle detection: iterative DFS with colors; report the first cycle found in key order.
  enum class Color { kWhite, kGray, kBlack };
  std::vector<Color> color(assets_.size(), Color::kWhite);
  std::vector<size_t> parent(assets_.size(), SIZE_MAX);
  for (size_t root = 0; root < assets_.size(); ++root) {
    if (color[root] != Color::kWhite) continue;
    std::vector<std::pair<size_t, size_t>> stack{{root, 0}};
    color[root] = Color::kGray;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < UpstreamsOf(node).size()) {
        size_t up = UpstreamsOf(node)[next++];
        if (color[up] == Color::kGray) {
          std::vector<std::string> path{assets_[up].key.ToString()};
          for (size_t at = node; at != up && at != SIZE_MAX; at = parent[at]) {
            path.push_back(assets_[at].key.ToString());
          }
          path.push_back(assets_[up].key.ToString());
          throw Error(Diagnostic{"SLU-GRAPH-001",
                                 "dependency cycle: " + ShownCycle(path),
                                 LocateReference(assets_[node], assets_[up].key),
                                 "break the cycle: a model cannot depend on itself, directly or through others",
                                 {}});
        }
        if (color[up] == Color::kWhite) {
          color[up] = Color::kGray;
          parent[up] = node;
          stack.emplace_back(up, 0);
        }
      } else {
        color[node] = Color::kBlack;
        stack.pop_back();
      }
    }
  }
}

std::span<const size_t> Definitions::UpstreamsOf(size_t i) const {
  return {upstreams_.data() + edge_begin_[i], edge_begin_[i + 1] - edge_begin_[i]};
}

std::span<const size_t> Definitions::DownstreamsOf(size_t i) const {
  return {downstreams_.data() + downstream_begin_[i], downstream_begin_[i + 1] - downstream_begin_[i]};
}

size_t Definitions::IndexOf(const AssetKey& key) const {
  auto found = index_.find(key);
  if (found == index_.end()) throw std::out_of_range("Definitions: no asset " + key.ToString());
  return found->second;
}

const Asset* Definitions::Find(const AssetKey& key) const {
  auto found = index_.find(key);
  return found == index_.end() ? nullptr : &assets_[found->second];
}

const Asset* Definitions::FindByName(const std::string& name) const {
  auto found = by_name_.find(name);
  return found == by_name_.end() ? nullptr : &assets_[found->second];
}

const Pipeline* Definitions::FindPipeline(const std::string& name) const {
  for (const Pipeline& pipeline : pipelines_) {
    if (pipeline.name == name) return &pipeline;
  }
  return nullptr;
}

std::vector<AssetKey> Definitions::TopologicalOrder() const {
  // Kahn's algorithm with a min-heap on the index (assets_ is sorted by key): stable and O(E log V).
  std::vector<size_t> pending(assets_.size(), 0);
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < assets_.size(); ++i) {
    pending[i] = UpstreamsOf(i).size();
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<AssetKey> order;
  order.reserve(assets_.size());
  while (!ready.empty()) {
    size_t next = ready.top();
    ready.pop();
    order.push_back(assets_[next].key);
    for (size_t down : DownstreamsOf(next)) {
      if (--pending[down] == 0) ready.push(down);
    }
  }
  return order;
}

std::vector<AssetKey> Definitions::Closure(const std::vector<AssetKey>& keys, bool upstream) const {
  std::vector<bool> seen(assets_.size(), false);
  std::vector<size_t> stack;
  for (const AssetKey& key : keys) stack.push_back(IndexOf(key));
  while (!stack.empty()) {
    size_t at = stack.back();
    stack.pop_back();
    if (seen[at]) continue;
    seen[at] = true;
    const std::span<const size_t> next = upstream ? UpstreamsOf(at) : DownstreamsOf(at);
    stack.insert(stack.end(), next.begin(), next.end());
  }
  std::vector<AssetKey> result;
  for (size_t i = 0; i < assets_.size(); ++i) {
    if (seen[i]) result.push_back(assets_[i].key);
  }
  return result;
}

std::vector<AssetKey> Definitions::UpstreamClosure(const std::vector<AssetKey>& keys) const {
  return Closure(keys, true);
}

std::vector<AssetKey> Definitions::DownstreamClosure(const std::vector<AssetKey>& keys) const {
  return Closure(keys, false);
}

std::vector<AssetKey> Definitions::Downstream(const AssetKey& key) const {
  std::vector<AssetKey> result;
  for (size_t down : DownstreamsOf(IndexOf(key))) result.push_back(assets_[down].key);
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace sluice
