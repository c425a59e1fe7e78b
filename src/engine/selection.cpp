#include "engine/selection.hpp"

#include <set>
#include <sstream>

namespace sluice {

namespace {

[[noreturn]] void Unknown(const std::string& item, const std::string& what, const Definitions& definitions) {
  std::string hint = "known pipelines: ";
  bool first = true;
  for (const Pipeline& pipeline : definitions.pipelines()) {
    hint += (first ? "" : ", ") + pipeline.name;
    first = false;
  }
  if (first) hint += "(none)";
  throw Error(Diagnostic{"SLU-SELECT-001", "--select " + item + ": no " + what + " of that name", {}, hint, {}});
}

std::vector<AssetKey> SelectName(const Definitions& definitions, const std::string& item, std::string name) {
  std::string prefix;
  if (size_t colon = name.find(':'); colon != std::string::npos) {
    prefix = name.substr(0, colon);
    name = name.substr(colon + 1);
    if (prefix != "pipeline" && prefix != "model") {
      throw Error(Diagnostic{"SLU-SELECT-002", "--select " + item + ": unknown prefix '" + prefix + ":'", {},
                             "use pipeline:<name> or model:<name>", {}});
    }
  }
  if (name.empty()) {
    throw Error(Diagnostic{"SLU-SELECT-002", "--select " + item + ": empty name", {}, "e.g. --select orders", {}});
  }
  auto pipeline_assets = [&](const Pipeline& pipeline) {
    std::vector<AssetKey> keys;
    for (const std::string& model : pipeline.models) keys.push_back(definitions.FindByName(model)->key);
    if (pipeline.source) keys.push_back(definitions.FindByName(*pipeline.source)->key);
    return keys;
  };
  if (prefix == "pipeline") {
    if (const Pipeline* pipeline = definitions.FindPipeline(name)) return pipeline_assets(*pipeline);
    Unknown(item, "pipeline", definitions);
  }
  if (prefix == "model") {
    const Asset* asset = definitions.FindByName(name);
    if (asset && !asset->is_source()) return {asset->key};
    Unknown(item, "model", definitions);
  }
  if (name.find('.') != std::string::npos) {
    for (const Asset& asset : definitions.assets()) {
      if (asset.key.ToString() == name) return {asset.key};
    }
    Unknown(item, "asset", definitions);
  }
  if (const Pipeline* pipeline = definitions.FindPipeline(name)) return pipeline_assets(*pipeline);
  if (const Asset* asset = definitions.FindByName(name)) return {asset->key};
  Unknown(item, "pipeline, model or source", definitions);
}

}  // namespace

std::vector<AssetKey> ResolveSelection(const Definitions& definitions, const std::vector<std::string>& items) {
  std::set<AssetKey> selected;
  bool any = false;
  for (const std::string& raw : items) {
    if (raw.find_first_not_of(" \t\n\r\f\v") == std::string::npos) {
      throw Error(Diagnostic{"SLU-SELECT-002",
                             "--select \"" + raw + "\": no name given",
                             {},
                             "name what to run, e.g. --select orders; without --select everything runs",
                             {}});
    }
    std::istringstream words(raw);
    std::string item;
    while (words >> item) {
      any = true;
      std::string name = item;
      bool upstream = false, downstream = false;
      if (!name.empty() && name.front() == '+') upstream = true, name.erase(0, 1);
      if (!name.empty() && name.back() == '+') downstream = true, name.pop_back();
      std::vector<AssetKey> keys = SelectName(definitions, item, name);
      selected.insert(keys.begin(), keys.end());
      if (upstream) {
        for (const AssetKey& key : definitions.UpstreamClosure(keys)) selected.insert(key);
      }
      if (downstream) {
        for (const AssetKey& key : definitions.DownstreamClosure(keys)) selected.insert(key);
      }
    }
  }
  if (!any) {
    for (const Asset& asset : definitions.assets()) selected.insert(asset.key);
  }
  return {selected.begin(), selected.end()};
}

}  // namespace sluice
