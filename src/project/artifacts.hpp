// Compile artifacts (StreamBuild reference §9, for what this build knows): `target/manifest.json`,
// `target/streambuild_dag.json` and `target/compiled/...`; JSON with sorted keys, 2-space indent and a
// trailing newline, so the bytes are deterministic. Sluice's own additions live under the manifest key
// `sluice`, which a StreamBuild reader ignores. Publication (artifact_publisher.hpp) is atomic and writes only
// changed files; `target/run/` is never touched.
// Thread-safety: pure functions (WriteArtifacts writes files).
#pragma once

#include <string>
#include <vector>

#include "project/artifact_publisher.hpp"
#include "project/project_loader.hpp"

namespace sluice {

// A model's canonical SQL: the author's body (after macro expansion) with each reference replaced by the
// unqualified upstream relation, trimmed, ending in exactly one newline.
std::string CanonicalSql(const Definitions& definitions, const Asset& asset);

// Every artifact file, keyed by its path under target/: per model its canonical SQL and DDL (rendered on
// several threads), the audits and tests, `streambuild_dag.json` and `manifest.json` (which lists the
// others). JSON is streamed with sorted keys and a 2-space indent (core/json_writer.hpp).
ArtifactFiles BuildArtifacts(const Project& project);

struct ArtifactSummary {
  std::string target_dir;
  size_t pipelines = 0;
  size_t models = 0;
  size_t sources = 0;
  PublishSummary published;
};

// Publishes every artifact under `<root>/target` (or `target_dir` when not empty); see artifact_publisher.hpp.
ArtifactSummary WriteArtifacts(const Project& project, const std::string& target_dir = {});

}  // namespace sluice
