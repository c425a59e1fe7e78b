#include "definitions/definitions.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>

#include "core/parallel_for.hpp"

namespace sluice {

ColumnList::ColumnList(std::initializer_list<value_type> columns) {
  for (const auto& [name, type] : columns) push_back(name, type);
}

void ColumnList::reserve(size_t columns, size_t text_bytes) {
  text_.reserve(text_bytes);
  ends_.reserve(2 * columns);
}

void ColumnList::push_back(std::string_view name, std::string_view type) {
  if (text_.size() + name.size() + type.size() > std::numeric_limits<uint32_t>::max()) {
    throw std::length_error("a model's column names and types exceed 4 GiB");
  }
  text_.append(name);
  ends_.push_back(static_cast<uint32_t>(text_.size()));
  text_.append(type);
  ends_.push_back(static_cast<uint32_t>(text_.size()));
}

std::optional<ColumnList> ColumnList::FromPacked(std::string text, std::vector<uint32_t> ends) {
  if (ends.size() % 2 != 0 || (ends.empty() ? !text.empty() : ends.back() != text.size())) return std::nullopt;
  for (size_t i = 1; i < ends.size(); ++i) {
    if (ends[i] < ends[i - 1]) return std::nullopt;
  }
  ColumnList list;
  list.text_ = std::move(text);
  list.ends_ = std::move(ends);
  return list;
}

ColumnList::value_type ColumnList::operator[](size_t i) const {
  size_t name_begin = i == 0 ? 0 : ends_[2 * i - 1];
  size_t name_end = ends_[2 * i];
  std::string_view text = text_;
  return {text.substr(name_begin, name_end - name_begin), text.substr(name_end, ends_[2 * i + 1] - name_end)};
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

}  // namespace

Definitions::Definitions(std::vector<Asset> assets, std::vector<Pipeline> pipelines)
    : Definitions(std::move(assets), std::move(pipelines), {}) {}

Definitions::Definitions(std::vector<Asset> assets, std::vector<Pipeline> pipelines,
                         std::vector<size_t> resolved_upstreams)
    : pipelines_(std::move(pipelines)) {
  assets_ = std::move(assets);
  auto key_less = [&](size_t a, size_t b) { return assets_[a].key < assets_[b].key; };
  bool in_key_order = true;
  for (size_t i = 1; i < assets_.size() && in_key_order; ++i) in_key_order = !key_less(i, i - 1);
  if (!in_key_order) {
    // Key order: sort positions, then move each asset into place along the permutation's cycles (sorting the
    // ~500-byte assets themselves moved each one log n times; a second array would be 50 MB at 100,000
    // assets). The caller's upstream indexes name the old places: they are looked up instead.
    resolved_upstreams.clear();
    std::vector<size_t> order(assets_.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    ParallelStableSort(order.begin(), order.end(), key_less);
    std::vector<bool> placed(order.size(), false);
    for (size_t start = 0; start < order.size(); ++start) {
      if (placed[start] || order[start] == start) continue;
      Asset held = std::move(assets_[start]);
      size_t at = start;
      while (order[at] != start) {
        assets_[at] = std::move(assets_[order[at]]);
        placed[at] = true;
        at = order[at];
      }
      assets_[at] = std::move(held);
      placed[at] = true;
    }
  }
  std::sort(pipelines_.begin(), pipelines_.end(), [](const Pipeline& a, const Pipeline& b) { return a.name < b.name; });
  index_ = HashedIndex(assets_.size());
  by_name_ = NameIndex(assets_.size());
  for (size_t i = 0; i < assets_.size(); ++i) {
    const AssetKey& key = assets_[i].key;
    if (!index_.Insert(HashOf(key), i, [&](size_t other) { return assets_[other].key == key; }).second) {
      throw Error(Diagnostic{"SLU-GRAPH-004",
                             "two assets share the key " + assets_[i].key.ToString(),
                             assets_[i].defined_at,
                             "rename one of them",
                             {}});
    }
    by_name_.Insert(assets_[i].name(), i);
  }
  // Each asset's upstreams by index (deps order, asset i's at upstreams[upstream_begin[i], upstream_begin[i + 1])):
  // the caller's, or looked up in parallel; the first asset in key order with an unknown upstream is the one
  // reported.
  std::vector<size_t> upstream_begin(assets_.size() + 1, 0);
  for (size_t i = 0; i < assets_.size(); ++i) upstream_begin[i + 1] = upstream_begin[i] + assets_[i].deps.size();
  if (!resolved_upstreams.empty() && resolved_upstreams.size() != upstream_begin.back()) {
    throw std::invalid_argument("Definitions: " + std::to_string(resolved_upstreams.size()) +
                                " resolved upstreams for " + std::to_string(upstream_begin.back()) + " dependencies");
  }
  const bool look_up = resolved_upstreams.empty();
  std::vector<size_t> upstreams = std::move(resolved_upstreams);
  upstreams.resize(upstream_begin.back());
  ParallelFor(look_up ? assets_.size() : 0, [&](size_t i) {
    size_t at = upstream_begin[i];
    for (const AssetDependency& dep : assets_[i].deps) {
      const size_t upstream = Lookup(dep.upstream);
      if (upstream == HashedIndex::kNone) {
        throw Error(Diagnostic{"SLU-GRAPH-002",
                               assets_[i].key.ToString() + " depends on unknown asset " + dep.upstream.ToString(),
                               LocateReference(assets_[i], dep.upstream),
                               "define the upstream asset",
                               {}});
      }
      upstreams[at++] = upstream;
    }
  });
  // The downstreams: the same edges the other way (each asset's in ascending index order).
  downstream_begin_.assign(assets_.size() + 1, 0);
  for (size_t up : upstreams) ++downstream_begin_[up + 1];
  for (size_t i = 0; i < assets_.size(); ++i) downstream_begin_[i + 1] += downstream_begin_[i];
  downstream_.resize(upstreams.size());
  std::vector<size_t> filled(downstream_begin_.begin(), downstream_begin_.end() - 1);
  for (size_t i = 0; i < assets_.size(); ++i) {
    for (size_t e = upstream_begin[i]; e < upstream_begin[i + 1]; ++e) downstream_[filled[upstreams[e]]++] = i;
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
      if (upstream_begin[node] + next < upstream_begin[node + 1]) {
        size_t up = upstreams[upstream_begin[node] + next++];
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

uint64_t Definitions::HashOf(const AssetKey& key) {
  return std::hash<std::string_view>()(key.name_space()) * 31 + std::hash<std::string_view>()(key.name());
}

size_t Definitions::Lookup(const AssetKey& key) const {
  return index_.Find(HashOf(key), [&](size_t i) { return assets_[i].key == key; });
}

size_t Definitions::IndexOf(const AssetKey& key) const {
  const size_t i = Lookup(key);
  if (i == HashedIndex::kNone) throw std::out_of_range("Definitions: no asset " + key.ToString());
  return i;
}

const Asset* Definitions::Find(const AssetKey& key) const {
  const size_t i = Lookup(key);
  return i == HashedIndex::kNone ? nullptr : &assets_[i];
}

const Asset* Definitions::FindByName(const std::string& name) const {
  const size_t i = by_name_.Find(name);
  return i == NameIndex::kNone ? nullptr : &assets_[i];
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
  for (size_t i = 0; i < assets_.size(); ++i) pending[i] = assets_[i].deps.size();
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t i = 0; i < assets_.size(); ++i) {
    if (pending[i] == 0) ready.push(i);
  }
  std::vector<AssetKey> order;
  order.reserve(assets_.size());
  while (!ready.empty()) {
    size_t next = ready.top();
    ready.pop();
    order.push_back(assets_[next].key);
    for (size_t down : DownstreamOf(next)) {
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
    if (upstream) {
      for (const AssetDependency& dep : assets_[at].deps) stack.push_back(IndexOf(dep.upstream));
    } else {
      std::span<const size_t> downstream = DownstreamOf(at);
      stack.insert(stack.end(), downstream.begin(), downstream.end());
    }
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
  for (size_t down : DownstreamOf(IndexOf(key))) result.push_back(assets_[down].key);
  std::sort(result.begin(), result.end());
  return result;
}

}  // namespace sluice
