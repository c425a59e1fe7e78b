#include "deploy/published_definitions.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "deploy/deployment_metadata.hpp"
#include "deploy/virtual_plan.hpp"

namespace sluice {

bool WritesVirtualModels(const Definitions& definitions, const std::vector<AssetKey>& keys) {
  return std::any_of(keys.begin(), keys.end(), [&](const AssetKey& key) {
    const Asset* asset = definitions.Find(key);
    return asset != nullptr && IsVirtualModel(definitions, *asset);
  });
}

Definitions PublishedDefinitions(const Definitions& definitions, Warehouse& warehouse,
                                 const std::vector<AssetKey>& written) {
  DeploymentMetadata metadata(warehouse);
  std::map<std::string, std::map<std::string, LiveBinding>> bindings;  // namespace → logical → binding
  for (const std::string& name_space : VirtualNamespaces(definitions)) {
    for (LiveBinding& binding : metadata.Bindings(name_space)) bindings[name_space][binding.logical] = std::move(binding);
  }
  auto bound = [&](const Asset& asset) -> const LiveBinding* {
    auto in = bindings.find(asset.key.name_space());
    if (in == bindings.end()) return nullptr;
    auto binding = in->second.find(asset.relation_name);
    return binding == in->second.end() || !binding->second.deployment_id ? nullptr : &binding->second;
  };
  for (const AssetKey& key : written) {
    const Asset& asset = *definitions.Find(key);
    if (!IsVirtualModel(definitions, asset) || bound(asset) != nullptr) continue;
    throw Error(Diagnostic{"SLU-DEPLOY-037",
                           "model '" + asset.name() + "' of the virtual pipeline '" + asset.pipeline +
                               "' has no published deployment: there is no table of it to write its days into",
                           asset.defined_at,
                           "deploy it first: `sluice backfill`, `sluice publish` (`sluice doctor` shows what its "
                           "stable view reads)",
                           {}});
  }
  Definitions::Parts parts;
  parts.project = definitions.project();
  for (const Asset& asset : definitions.assets()) {
    Asset copy = asset;
    if (IsVirtualModel(definitions, asset)) {
      if (const LiveBinding* binding = bound(asset)) copy.relation_name = *binding->physical;
    }
    parts.assets.push_back(std::move(copy));
  }
  parts.pipelines = definitions.pipelines();
  parts.audits = definitions.audits();
  parts.tests = definitions.tests();
  parts.macros = definitions.macros();
  return Definitions(std::move(parts));
}

}  // namespace sluice
