#include "project/models/model_graph.hpp"

#include <string>
#include <unordered_map>

namespace sluice {

namespace {

// A physical relation an asset claims: its namespace and its name, written as a prefix ("", "mv__", "kafka__") and
// the rest, both viewed in the asset. Two claims are equal when their namespaces and whole names are.
struct RelationClaim {
  std::string_view name_space;
  std::string_view prefix;
  std::string_view name;

  std::string Relation() const { return std::string(prefix) + std::string(name); }
  bool operator==(const RelationClaim& other) const {
    if (name_space != other.name_space || prefix.size() + name.size() != other.prefix.size() + other.name.size()) {
      return false;
    }
    auto at = [](const RelationClaim& claim, size_t i) {
      return i < claim.prefix.size() ? claim.prefix[i] : claim.name[i - claim.prefix.size()];
    };
    for (size_t i = 0; i < prefix.size() + name.size(); ++i) {
      if (at(*this, i) != at(other, i)) return false;
    }
    return true;
  }
};

// FNV-1a over the namespace, a separator and the whole name.
struct RelationClaimHash {
  size_t operator()(const RelationClaim& claim) const {
    uint64_t hash = 14695981039346656037ull;
    auto add = [&](std::string_view part) {
      for (char c : part) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    };
    add(claim.name_space);
    add(std::string_view("\0", 1));
    add(claim.prefix);
    add(claim.name);
    return static_cast<size_t>(hash);
  }
};

}  // namespace

void CheckRelationNames(const std::vector<Asset>& assets) {
  std::unordered_map<RelationClaim, size_t, RelationClaimHash> claimed;  // → the asset claiming it
  claimed.reserve(assets.size() * 2);
  auto claim = [&](size_t a, std::string_view prefix, std::string_view name) {
    const Asset& asset = assets[a];
    const RelationClaim relation{asset.key.name_space(), prefix, name};
    auto [holder, added] = claimed.emplace(relation, a);
    if (added) return;
    const Asset& other = assets[holder->second];
    if (std::holds_alternative<ExternalTable>(asset.compute) && std::holds_alternative<ExternalTable>(other.compute)) {
      return;
    }
    throw Error(Diagnostic{"SLU-PROJECT-005",
                           "relation " + asset.key.name_space() + "." + relation.Relation() + " is used by both " +
                               other.key.ToString() + " and " + asset.key.ToString(),
                           asset.defined_at,
                           "set relation_name on one of them",
                           {}});
  };
  for (size_t a = 0; a < assets.size(); ++a) {
    const Asset& asset = assets[a];
    claim(a, "", asset.relation_name);
    if (const auto* sql = std::get_if<SqlCompute>(&asset.compute); sql && sql->kind == ModelKind::kTable) {
      claim(a, "mv__", asset.name());
    }
    if (std::holds_alternative<KafkaSource>(asset.compute)) {
      claim(a, "kafka__", asset.name());
      claim(a, "mv__", asset.name());
    }
  }
}

std::vector<size_t> DrivingSources(const std::vector<Asset>& assets, const std::vector<size_t>& driving_upstream) {
  constexpr size_t kNotWalked = kNoAsset - 1;
  std::vector<size_t> sources(assets.size(), kNotWalked);
  std::vector<size_t> walked;
  for (size_t start = 0; start < assets.size(); ++start) {
    walked.clear();
    size_t source = kNoAsset;
    size_t at = start;
    for (size_t steps = 0; steps <= assets.size(); ++steps) {
      if (sources[at] != kNotWalked) {
        source = sources[at];
        break;
      }
      walked.push_back(at);
      if (assets[at].is_source()) {
        source = at;
        break;
      }
      at = driving_upstream[at];
      if (at == kNoAsset) break;
    }
    for (size_t asset : walked) sources[asset] = source;
  }
  return sources;
}

}  // namespace sluice
