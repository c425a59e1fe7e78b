// Compile from Definitions alone: a Definitions value built by hand in C++ (no project files, as the SDK builds
// one) compiles to the same kind of target/ a loaded project does, deterministically and atomically.
#include "compile/artifacts.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "deploy/desired_objects.hpp"
#include "definitions/definitions_test_support.hpp"

namespace sluice {
namespace {

using nlohmann::json;
using testing::HandBuiltModel;
using testing::HandBuiltSeed;

Definitions HandBuilt(const std::string& adapter) {
  Definitions::Parts parts;
  parts.project = ProjectInfo{"hand_built", "dev", adapter};
  parts.assets.push_back(HandBuiltSeed("raw", "events", "seeds/events.csv"));
  parts.assets.push_back(HandBuiltModel("core", "core", "clean",
                                        "SELECT CAST(id AS BIGINT) AS id\nFROM __ref(\"events\") -- the events",
                                        {{"events", AssetKey::Of("raw", "events")}}, {{"id", "BIGINT"}}));
  parts.assets.push_back(HandBuiltModel("core", "core", "totals",
                                        "SELECT CAST(count(*) AS BIGINT) AS n FROM __ref(\"clean\") AS c",
                                        {{"clean", AssetKey::Of("core", "clean")}}, {{"n", "BIGINT"}}));
  parts.pipelines.push_back(Pipeline{"core", "pipelines/core", "core", {"clean", "totals"}, "events"});
  parts.macros.push_back(MacroSource{"cents", "macros/money.py", "def cents(x):\n    return x\n"});
  return Definitions(std::move(parts));
}

class ScratchTarget {
 public:
  ScratchTarget() : path_(std::filesystem::temp_directory_path() / ("sluice_artifacts_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
  }
  ~ScratchTarget() { std::filesystem::remove_all(path_); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

TEST(CompileFromDefinitions, AHandBuiltDefinitionsCompilesDeterministically) {
  const Definitions definitions = HandBuilt("duckdb");
  const ArtifactFiles files = BuildArtifacts(definitions);
  EXPECT_EQ(files, BuildArtifacts(HandBuilt("duckdb")));
  EXPECT_EQ(files.at("compiled/models/core/clean.sql"), "SELECT CAST(id AS BIGINT) AS id\nFROM events -- the events\n");
  EXPECT_EQ(files.at("compiled/models/core/totals.sql"), "SELECT CAST(count(*) AS BIGINT) AS n FROM clean AS c\n");

  const json manifest = json::parse(files.at("manifest.json"));
  EXPECT_EQ(manifest["artifacts"], json::array({"manifest.json", "streambuild_dag.json",
                                                "compiled/models/core/clean.sql", "compiled/models/core/totals.sql",
                         "compiled/workflows/core/steps/0001_create_schema_core.sql",
                         "compiled/workflows/core/steps/0002_replace_table_clean.sql",
                         "compiled/workflows/core/steps/0003_replace_table_totals.sql",
                         "compiled/workflows/core/workflow.json", "compiled/workflows/core/workflow.sql"}));
  EXPECT_EQ(manifest["models"]["totals"]["refs"][0]["edge_type"], "driving_input");
  EXPECT_EQ(manifest["models"]["clean"]["source"], "events");
  EXPECT_EQ(manifest["models"]["clean"]["spec"]["columns"][0], (json{{"default", nullptr}, {"name", "id"}, {"type", "BIGINT"}}));
  EXPECT_EQ(manifest["macros"]["cents"]["file"], "macros/money.py");
  EXPECT_EQ(manifest["sluice"]["project"], "hand_built");
  EXPECT_EQ(manifest["sluice"]["assets"]["raw.events"]["kind"], "seed");
  EXPECT_EQ(manifest["sluice"]["seeds"]["events"]["path"], "seeds/events.csv");

  const json dag = json::parse(files.at("streambuild_dag.json"));
  EXPECT_EQ(dag["edges"], json::array({{{"edge_type", "driving_input"}, {"from_id", "model:clean"}, {"to_id", "model:totals"}},
                                       {{"edge_type", "driving_input"}, {"from_id", "source:events"}, {"to_id", "model:clean"}}}));
  EXPECT_EQ(dag["macros"], json::array({"cents"}));
  EXPECT_EQ(manifest["sluice"]["dag_identity"].get<std::string>().size(), 64u);
}

TEST(CompileFromDefinitions, AClickHouseTargetGetsQualifiedDdlWithItsColumns) {
  const ArtifactFiles files = BuildArtifacts(HandBuilt("clickhouse"));
  EXPECT_EQ(files.at("compiled/resources/models/core/clean.table.sql"),
            "CREATE TABLE core.clean (\n    id BIGINT\n) ENGINE = MergeTree()\nORDER BY (_replay_timestamp)\n");
  EXPECT_EQ(files.at("compiled/resources/models/core/clean.mv.sql"),
            "CREATE MATERIALIZED VIEW core.mv__clean\nTO core.clean AS\nSELECT CAST(id AS BIGINT) AS id\n"
            "FROM raw.events -- the events\n");
  EXPECT_EQ(files.count("compiled/resources/models/core/clean.table.sql"), 1u);
  EXPECT_EQ(BuildArtifacts(HandBuilt("duckdb")).count("compiled/resources/models/core/clean.table.sql"), 0u);
}

TEST(CompileFromDefinitions, PublicationReplacesOnlyTheStaticOwners) {
  ScratchTarget target;
  const Definitions definitions = HandBuilt("duckdb");
  const ArtifactSummary summary = WriteArtifacts(definitions, target.path());
  EXPECT_EQ(summary.models, 2u);
  EXPECT_EQ(summary.sources, 1u);
  EXPECT_EQ(summary.pipelines, 1u);
  EXPECT_TRUE(std::filesystem::exists(target.path() / "manifest.json"));
  for (const auto& item : std::filesystem::directory_iterator(target.path())) {
    const bool staging = item.is_directory() && item.path().filename().string().rfind(".sluice-", 0) == 0;
    EXPECT_FALSE(staging) << "no staging left behind: " << item.path();
  }
  // target/run is never touched; a second compile replaces the static owners only, and writes nothing unchanged.
  std::filesystem::create_directories(target.path() / "run" / "tests");
  std::ofstream(target.path() / "run" / "tests" / "keep.txt") << "runtime evidence";
  std::ofstream(target.path() / "compiled" / "models" / "core" / "stale.sql") << "old";
  const ArtifactSummary again = WriteArtifacts(definitions, target.path());
  EXPECT_EQ(again.published.written, 0u);
  EXPECT_EQ(again.published.removed, 1u);
  EXPECT_TRUE(std::filesystem::exists(target.path() / "run" / "tests" / "keep.txt"));
  EXPECT_FALSE(std::filesystem::exists(target.path() / "compiled" / "models" / "core" / "stale.sql"));
  EXPECT_TRUE(std::filesystem::exists(target.path() / "compiled" / "models" / "core" / "clean.sql"));
}

}  // namespace
}  // namespace sluice
