// Compile: Definitions → `target/` (StreamBuild reference §9): `manifest.json`, `streambuild_dag.json`,
// `compiled/models/<pipeline>/<model>.sql`, on ClickHouse the DDL under `compiled/resources/`, and the compiled
// tests and audits. Publication (artifact_publisher.hpp) is atomic and writes only changed files; `target/run/`
// is never touched. Nothing here connects to a warehouse or reads a project file.
// Thread-safety: pure functions (WriteArtifacts writes files).
#pragma once

#include <filesystem>
#include <string>

#include "compile/artifact_publisher.hpp"
#include "definitions/definitions.hpp"

namespace sluice {

// Every artifact file, keyed by its path under target/.
ArtifactFiles BuildArtifacts(const Definitions& definitions);

struct ArtifactSummary {
  std::string target_dir;
  size_t pipelines = 0;
  size_t models = 0;
  size_t sources = 0;
  PublishSummary published;
};

// Publishes every artifact into `target_dir`; see artifact_publisher.hpp.
ArtifactSummary WriteArtifacts(const Definitions& definitions, const std::filesystem::path& target_dir);

}  // namespace sluice
