// The JSON artifacts (StreamBuild reference §9): `target/streambuild_dag.json` and `target/manifest.json`,
// with sorted keys, a 2-space indent and a trailing newline (nlohmann-json's rendering, written by
// compile/json_writer.hpp), so the bytes are deterministic. Sluice's own additions live under the manifest key `sluice`, which a StreamBuild reader
// ignores. Rendered from Definitions alone.
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "deploy/desired_objects.hpp"
#include "definitions/definitions.hpp"

namespace sluice {

// The models (assets that are not sources) by name; ties in key order.
std::vector<const Asset*> ModelsByName(const Definitions& definitions);

// The DAG: nodes (sources, models, tests, audits, each kind by name) and edges (a model's dependencies; a
// model to each test expecting it and each audit reading it), sorted by (edge_type, from_id, to_id), each once.
struct DagNode {
  std::string id;  // "<type>:<name>"
  std::string name;
  std::string type;  // source | model | test | audit
};
struct DagEdge {
  std::string edge_type;  // driving_input | reference | mutable_reference | test | audit
  std::string from_id;
  std::string to_id;
};
struct Dag {
  std::vector<DagNode> nodes;
  std::vector<DagEdge> edges;
};
Dag DagOf(const Definitions& definitions);

// `streambuild_dag.json`, and the DAG's identity: the SHA-256 of its nodes and edges as compact JSON.
struct DagFile {
  std::string text;
  std::string identity;
};
DagFile RenderDag(const Definitions& definitions, const Dag& dag);

// What the manifest lists besides the definitions.
struct ManifestInputs {
  std::vector<const Asset*> models;                       // ModelsByName
  std::vector<std::vector<CompiledResource>> resources;  // by model: kind, name and path (the DDL may be gone)
  std::vector<std::string_view> compiled_paths;          // every compiled file, sorted (views of the caller's)
  std::string dag_identity;
};

// `manifest.json`, handed to `sink` in pieces (a large project's manifest is never held whole): the model
// entries are rendered on several threads, a batch at a time.
void StreamManifest(const Definitions& definitions, const ManifestInputs& inputs,
                    const std::function<void(std::string_view)>& sink);

}  // namespace sluice
