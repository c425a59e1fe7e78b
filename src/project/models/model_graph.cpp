#include "project/models/model_graph.hpp"

#include <string>
#include <unordered_map>

namespace sluice {

void CheckRelationNames(const std::vector<Asset>& assets) {
  std::unordered_map<std::string, size_t> claimed;  // namespace '\0' relation → the asset claiming it
  auto claim = [&](size_t a, const std::string& relation) {
    const Asset& asset = assets[a];
    auto [holder, added] = claimed.emplace(asset.key.name_space() + '\0' + relation, a);
    if (added) return;
    const Asset& other = assets[holder->second];
    if (std::holds_alternative<ExternalTable>(asset.compute) && std::holds_alternative<ExternalTable>(other.compute)) {
      return;
    }
    throw Error(Diagnostic{"SLU-PROJECT-005",
                           "relation " + asset.key.name_space() + "." + relation + " is used by both " +
                               other.key.ToString() + " and " + asset.key.ToString(),
                           asset.defined_at,
                           "set relation_name on one of them",
                           {}});
  };
  claimed.reserve(assets.size() * 2);
  for (size_t a = 0; a < assets.size(); ++a) {
    const Asset& asset = assets[a];
    claim(a, asset.relation_name);
    if (const auto* sql = std::get_if<SqlCompute>(&asset.compute); sql && sql->kind == ModelKind::kTable) {
      claim(a, "mv__" + asset.name());
    }
    if (std::holds_alternative<KafkaSource>(asset.compute)) {
      claim(a, "kafka__" + asset.name());
      claim(a, "mv__" + asset.name());
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
