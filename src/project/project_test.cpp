// Project loading: config precedence, sources, model rules and graph resolution, on projects written into
// temporary folders.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <random>

#include "core/build_id.hpp"
#include "core/content_hash.hpp"
#include "core/file_system.hpp"
#include "project/artifacts.hpp"
#include "project/parse_cache.hpp"
#include "project/project_loader.hpp"

namespace sluice {
namespace {

class TempProject {
 public:
  TempProject() {
    std::random_device device;
    root_ = std::filesystem::temp_directory_path() /
            ("sluice_project_test_" + std::to_string(::getpid()) + "_" + std::to_string(device()));
    std::filesystem::create_directories(root_);
    Write("streambuild_project.toml",
          "name = \"p\"\nadapter = \"duckdb\"\ndefault_target = \"dev\"\n[targets.dev]\ndatabase = \"analytics\"\n"
          "[targets.prod]\ndatabase = \"prod_db\"\n");
    Write("sources/s.yml", "sources:\n  - kind: seed\n    name: src\n    path: seeds/src.csv\n");
    Write("seeds/src.csv", "id\n1\n");
    Write("pipelines/main/a.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __source(\"src\")\n");
  }
  ~TempProject() { std::filesystem::remove_all(root_); }

  void Write(const std::string& relative, const std::string& text) const {
    std::filesystem::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative, std::ios::trunc) << text;
  }
  Project Load(std::optional<std::string> target = std::nullopt) const {
    return LoadProject(root_, LoadOptions{target});
  }
  const std::filesystem::path& root() const { return root_; }
  // Replaces the project with a copy of tests/projects/<fixture>.
  void CopyFixture(const std::string& fixture) const {
    std::filesystem::remove_all(root_);
    std::filesystem::copy(std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / fixture, root_,
                          std::filesystem::copy_options::recursive);
  }

 private:
  std::filesystem::path root_;
};

Diagnostic ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().size(), 1u);
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", ""};
}

TEST(ProjectConfig, TargetSelectionCliThenLocalThenDefault) {
  TempProject project;
  EXPECT_EQ(project.Load().target.database, "analytics");
  EXPECT_EQ(project.Load("prod").target.database, "prod_db");
  project.Write("streambuild_local.toml",
                "target = \"prod\"\n[targets.prod]\ndatabase = \"mine\"\n[connection]\npath = \"x.duckdb\"\n");
  Project local = project.Load();
  EXPECT_EQ(local.target.name, "prod");
  EXPECT_EQ(local.target.database, "mine");
  EXPECT_EQ(ExpandConnection(local.target).at("path"), "x.duckdb");
  EXPECT_EQ(project.Load("dev").target.database, "analytics");
  EXPECT_EQ(ErrorOf([&] { project.Load("staging"); }).code, "SLU-CONFIG-005");
}

TEST(ProjectConfig, UnknownKeysAreLocatedAtEveryLevel) {
  TempProject project;
  project.Write("streambuild_project.toml",
                "name = \"p\"\ndefault_target = \"dev\"\n[targets.dev]\ndatabase = \"a\"\nflavour = 1\n");
  Diagnostic d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-002");
  EXPECT_EQ(d.location.line, 5);
  EXPECT_NE(d.message.find("targets.dev.flavour"), std::string::npos);

  TempProject pipeline;
  pipeline.Write("pipelines/main/pipeline.toml", "mode = \"direct\"\n[naming]\nschema_prefix = \"x\"\n");
  d = ErrorOf([&] { pipeline.Load(); });
  EXPECT_EQ(d.code, "SLU-CONFIG-002");
  EXPECT_EQ(d.location.file, "pipelines/main/pipeline.toml");
  EXPECT_EQ(d.location.line, 3);

  TempProject missing;
  missing.Write("streambuild_project.toml", "adapter = \"duckdb\"\ndefault_target = \"dev\"\n");
  EXPECT_EQ(ErrorOf([&] { missing.Load(); }).code, "SLU-CONFIG-004");

  TempProject bad_mode;
  bad_mode.Write("pipelines/main/pipeline.toml", "mode = \"sideways\"\n");
  EXPECT_EQ(ErrorOf([&] { bad_mode.Load(); }).code, "SLU-CONFIG-007");
}

// Model discovery: `.sql` files at any depth of a pipeline folder; a symlink to a file counts as that file;
// a symlinked folder is not entered; other names (`.sql` alone, `x.SQL`, `x.sql.bak`) are not models.
TEST(ProjectLayout, ModelFilesAtAnyDepthAndSymlinkedFiles) {
  TempProject project;
  project.Write("pipelines/main/deep/er/b.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __ref(\"a\")\n");
  project.Write("elsewhere/c.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __ref(\"b\")\n");
  project.Write("elsewhere/folder/d.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __ref(\"b\")\n");
  std::filesystem::create_symlink(project.root() / "elsewhere/c.sql", project.root() / "pipelines/main/c.sql");
  std::filesystem::create_symlink(project.root() / "elsewhere/folder", project.root() / "pipelines/main/linked");
  for (const char* ignored : {"pipelines/main/.sql", "pipelines/main/x.SQL", "pipelines/main/y.sql.bak"}) {
    project.Write(ignored, "not a model");
  }
  Project loaded = project.Load();
  const Pipeline* main = loaded.definitions.FindPipeline("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->models, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(loaded.definitions.FindByName("d"), nullptr);
}

TEST(ProjectConfig, PipelineDatabaseAndPrefixesNameRelations) {
  TempProject project;
  project.Write("pipelines/main/pipeline.toml", "database = \"silver\"\n[naming]\ntable_prefix = \"t_\"\n");
  project.Write("pipelines/main/v.sql", "MODEL (kind view);\nSELECT CAST(id AS INT) AS id FROM __ref(\"a\")\n");
  Project loaded = project.Load();
  const Asset* a = loaded.definitions.FindByName("a");
  EXPECT_EQ(a->key.ToString(), "silver.a");
  EXPECT_EQ(a->relation_name, "t_a");
  EXPECT_EQ(loaded.definitions.FindByName("v")->relation_name, "view__v");
  EXPECT_EQ(loaded.definitions.FindByName("src")->key.ToString(), "analytics.src");
  EXPECT_EQ(loaded.definitions.FindPipeline("main")->source, "src");
}

TEST(Sources, StreamTableReplayBoundaryRules) {
  TempProject project;
  auto with_boundary = [&](const std::string& boundary) {
    project.Write("sources/t.yml",
                  "sources:\n  - kind: stream_table\n    name: adopted\n    table_name: existing\n"
                  "    replay_boundary:\n" +
                      boundary);
    return ErrorOf([&] { project.Load(); });
  };
  EXPECT_EQ(with_boundary("      mode: timestamp\n      columns:\n        _replay_timestamp: ts\n").code, "no error");
  EXPECT_EQ(with_boundary("      mode: offsets\n      columns:\n        _replay_timestamp: ts\n").code,
            "SLU-SOURCE-006");
  EXPECT_EQ(
      with_boundary("      mode: cursor\n      columns:\n        _replay_cursor: c\n        _replay_timestamp: ts\n"
                    "        _replay_offset: o\n")
          .code,
      "SLU-SOURCE-006");
  EXPECT_EQ(with_boundary("      mode: landed_at\n").code, "SLU-SOURCE-006");
  EXPECT_EQ(with_boundary("      mode: timestamp\n      columns:\n        _replay_time: ts\n").code, "SLU-SOURCE-002");
}

// Generated objects claim their names too: a source adopting `mv__a` collides with the view table model `a`
// gets, whichever spelling the name has; the message names the relation and both assets. Two sources may adopt
// one table.
TEST(Sources, AdoptedTablesCollideWithGeneratedObjects) {
  TempProject project;
  const std::string boundary =
      "    replay_boundary:\n      mode: timestamp\n      columns:\n        _replay_timestamp: ts\n";
  project.Write("sources/t.yml",
                "sources:\n  - kind: stream_table\n    name: adopted\n    table_name: mv__a\n" + boundary);
  Diagnostic d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-PROJECT-005");
  EXPECT_NE(d.message.find("relation analytics.mv__a is used by both analytics.adopted and analytics.a"),
            std::string::npos)
      << d.message;
  project.Write("sources/t.yml", "sources:\n  - kind: stream_table\n    name: adopted\n    table_name: shared\n" +
                                     boundary + "  - kind: stream_table\n    name: again\n    table_name: shared\n" +
                                     boundary);
  EXPECT_EQ(ErrorOf([&] { project.Load(); }).code, "no error");
  project.Write("pipelines/main/b.sql",
                "MODEL (relation_name \"shared\");\nSELECT CAST(id AS INT) AS id FROM __ref(\"a\")\n");
  d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-PROJECT-005");
  EXPECT_NE(d.message.find("relation analytics.shared is used by both"), std::string::npos) << d.message;
}

TEST(Sources, SeedRulesAndDuplicates) {
  TempProject project;
  project.Write("sources/t.yml", "sources:\n  - kind: seed\n    name: other\n    path: seeds/missing.csv\n");
  EXPECT_EQ(ErrorOf([&] { project.Load(); }).code, "SLU-SOURCE-003");
  project.Write("sources/t.yml", "sources:\n  - kind: seed\n    name: src\n    path: seeds/src.csv\n");
  Diagnostic d = ErrorOf([&] { project.Load(); });
  EXPECT_EQ(d.code, "SLU-SOURCE-004");
  EXPECT_EQ(d.location.file, "sources/t.yml");
  project.Write("sources/t.yml", "sources:\n  - kind: kinesis\n    name: k\n    topic: t\n");
  EXPECT_EQ(ErrorOf([&] { project.Load(); }).code, "SLU-SOURCE-005");
  project.Write("sources/t.yml", "sources: [\n");
  EXPECT_EQ(ErrorOf([&] { project.Load(); }).code, "SLU-SOURCE-001");
}

TEST(Models, ReferenceRules) {
  TempProject project;
  auto model = [&](const std::string& text) {
    project.Write("pipelines/main/b.sql", text);
    return ErrorOf([&] { project.Load(); });
  };
  EXPECT_EQ(
      model("MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\") JOIN __ref(\"a\", ref_type='reference') ON true\n")
          .code,
      "SLU-MODEL-012");
  EXPECT_EQ(model("MODEL (kind view);\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\", ref_type='reference')\n").code,
            "SLU-MODEL-013");
  EXPECT_EQ(model("MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\", ref_type='reference')\n").code,
            "SLU-MODEL-010");
  EXPECT_EQ(model("MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __source(\"src\") JOIN __ref(\"a\") ON true\n").code,
            "SLU-MODEL-011");
  EXPECT_EQ(model("MODEL (kind view, engine \"MergeTree()\");\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-MODEL-003");
  EXPECT_EQ(model("MODEL ();\n  \n").code, "SLU-MODEL-002");
  EXPECT_EQ(model("MODEL (relation_name \"raw__x\");\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-MODEL-004");
  EXPECT_EQ(model("MODEL (relation_name \"a\");\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code, "no error");
  EXPECT_EQ(model("MODEL (relation_name \"tbl__a\");\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-PROJECT-005");
  EXPECT_EQ(model("MODEL (partitions (daily (column \"d\")));\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-MODEL-005");
  EXPECT_EQ(model("MODEL (partitions (hourly (column \"d\")));\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-MODEL-005");
  EXPECT_EQ(model("MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __source(\"a\")\n").code, "SLU-GRAPH-002");
  project.Write("pipelines/other/a.sql", "MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __source(\"src\")\n");
  EXPECT_EQ(model("MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code, "SLU-PROJECT-003");
}

// Pipeline folders are listed and model assets resolved in parallel: the error reported is still the first in
// (pipeline, file) order, on every run.
TEST(Models, TheFirstUnknownReferenceInFileOrderIsReported) {
  TempProject project;
  for (const char* pipeline : {"p1", "p2", "p3"}) {
    for (int m = 0; m < 100; ++m) {
      project.Write(std::string("pipelines/") + pipeline + "/" + pipeline + "_m" + std::to_string(1000 + m) + ".sql",
                    "MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n");
    }
  }
  project.Write("pipelines/p2/p2_m1050.sql", "MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"nope_1\")\n");
  project.Write("pipelines/p2/p2_m1090.sql", "MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"nope_2\")\n");
  project.Write("pipelines/p3/p3_m1001.sql", "MODEL ();\nSELECT CAST(1 AS INT) AS x FROM __ref(\"nope_3\")\n");
  for (int run = 0; run < 5; ++run) {
    Diagnostic error = ErrorOf([&] { project.Load(); });
    EXPECT_EQ(error.code, "SLU-GRAPH-002");
    EXPECT_NE(error.message.find("'nope_1'"), std::string::npos) << error.message;
    EXPECT_EQ(error.location.file, "pipelines/p2/p2_m1050.sql");
  }
}

TEST(Models, KeepsEveryHeaderKeyAndPartitions) {
  TempProject project;
  project.Write("pipelines/main/b.sql", R"sql(MODEL (
  kind table,
  description "daily things",
  engine "SummingMergeTree()",
  order_by ["d", "x"],
  partition_by "toYYYYMM(d)",
  ttl "d + INTERVAL 30 DAY",
  settings (index_granularity 8192),
  replay_anchor never,
  partitions (daily (column "d", start_date "2026-01-01")),
);
SELECT CAST(1 AS INT) AS x, CAST(now() AS DATE) AS d FROM __ref("a")
)sql");
  Project loaded = project.Load();
  const Asset* b = loaded.definitions.FindByName("b");
  ASSERT_TRUE(b->partitions);
  EXPECT_EQ(b->partitions->column, "d");
  EXPECT_EQ(b->partitions->partitions.start_date().ToString(), "2026-01-01");
  const auto& sql = std::get<SqlCompute>(b->compute);
  EXPECT_EQ(sql.storage.engine, "SummingMergeTree()");
  EXPECT_EQ(sql.storage.order_by, (std::vector<std::string>{"d", "x"}));
  EXPECT_EQ(sql.storage.settings.at(0).second, "8192");
  EXPECT_EQ(b->description, "daily things");
  EXPECT_EQ(sql.references.at(0).at.line, 12);
}

TEST(Artifacts, ManifestIsDeterministicAndAtomic) {
  TempProject project;
  Project loaded = project.Load();
  EXPECT_EQ(BuildArtifacts(loaded), BuildArtifacts(project.Load()));
  EXPECT_EQ(BuildArtifacts(loaded).at("compiled/models/main/a.sql"), "SELECT CAST(id AS INT) AS id FROM src\n");
  ArtifactSummary summary = WriteArtifacts(loaded);
  EXPECT_EQ(summary.models, 1u);
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target" / "manifest.json"));
  for (const auto& item : std::filesystem::directory_iterator(project.root() / "target")) {
    bool staging = item.is_directory() && item.path().filename().string().rfind(".sluice-", 0) == 0;
    EXPECT_FALSE(staging) << "no staging left behind: " << item.path();
  }
  // target/run is never touched; a second compile replaces the static owners only.
  std::filesystem::create_directories(project.root() / "target" / "run" / "tests");
  project.Write("target/run/tests/keep.txt", "runtime evidence");
  project.Write("target/compiled/models/main/stale.sql", "old");
  WriteArtifacts(project.Load());
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target" / "run" / "tests" / "keep.txt"));
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target" / "compiled" / "models" / "main" / "stale.sql"));
  EXPECT_TRUE(std::filesystem::exists(project.root() / "target" / "compiled" / "models" / "main" / "a.sql"));
}

// ---- the parse cache (parse_cache.hpp) ---------------------------------------------------------------------

// `contents` (a parse cache file) with its trailing checksum recomputed, as if the cache had been written so.
std::string WithChecksum(std::string contents) {
  contents.resize(contents.size() - 8);
  uint64_t hash = ContentHash(contents);
  for (int shift = 0; shift < 64; shift += 8) contents.push_back(static_cast<char>(hash >> shift));
  return contents;
}

// Models covering what a cache entry holds: typed side refs, a mutable ref, a view, a partitioned model using
// the built-in @partition_start(), header audits, an aggregate, lineage columns and storage keys.
void WriteCacheCoverage(const TempProject& project) {
  project.Write("audits/generic/not_null.sql", "AUDIT ();\nSELECT * FROM __ref(\"@model\") WHERE @column IS NULL\n");
  project.Write("pipelines/main/b.sql", R"sql(MODEL (
  order_by ["id"],
  columns (id (audits [not_null])),
);
SELECT CAST(a.id AS INT) AS id, CAST(c.id AS BIGINT) AS wide
FROM __ref("a") AS a
JOIN __ref("c", ref_type='reference') AS c ON a.id = c.id
LEFT JOIN __ref("d", ref_type='mutable') AS d ON a.id = d.id
)sql");
  project.Write("pipelines/main/c.sql", "MODEL ();\nSELECT CAST(count() AS BIGINT) AS id FROM __ref(\"a\")\n");
  project.Write("pipelines/main/d.sql",
                "MODEL ();\nSELECT CAST(id AS INT) AS id, CAST(id AS INT) AS _replay_partition, "
                "CAST(id AS INT) AS _replay_offset FROM __ref(\"a\")\n");
  project.Write("pipelines/main/v.sql", "MODEL (kind view);\nSELECT CAST(id AS INT) AS id FROM __ref(\"b\")\n");
  project.Write("pipelines/main/p.sql", R"sql(MODEL (partitions (daily (column "d", start_date "2026-01-01")));
SELECT CAST(@partition_start() AS DATE) AS d, CAST(id AS INT) AS id FROM __ref("a")
)sql");
}

TEST(ParseCache, AWarmLoadBuildsWhatAColdLoadBuilds) {
  TempProject project;
  WriteCacheCoverage(project);
  Project cold = project.Load();
  EXPECT_EQ(cold.models_from_parse_cache, 0u);
  ASSERT_TRUE(std::filesystem::is_regular_file(ParseCachePath(project.root())));
  Project warm = project.Load();
  EXPECT_EQ(warm.models_from_parse_cache, 6u);
  EXPECT_EQ(BuildArtifacts(warm), BuildArtifacts(cold));
  EXPECT_EQ(std::get<SqlCompute>(warm.definitions.FindByName("b")->compute).references.at(2).at.line, 8);

  // A project whose models call project macros: those are parsed every time, the others come from the cache.
  project.CopyFixture("streambuild_compat");
  Project fixture_cold = project.Load();
  Project fixture_warm = project.Load();
  EXPECT_EQ(fixture_warm.models_from_parse_cache, 4u);  // orders and order_items call @replay_columns()
  EXPECT_EQ(BuildArtifacts(fixture_warm), BuildArtifacts(fixture_cold));
}

TEST(ParseCache, AnEditedModelIsParsedAgainAndAnUnchangedOneIsReadFromTheCache) {
  TempProject project;
  WriteCacheCoverage(project);
  project.Load();
  const std::filesystem::path path = ParseCachePath(project.root());
  const std::string whole = ReadFile(path);
  project.Write("pipelines/main/c.sql", "MODEL ();\nSELECT CAST(count() AS BIGINT) AS renamed FROM __ref(\"a\")\n");
  Project edited = project.Load();
  EXPECT_EQ(edited.models_from_parse_cache, 5u);
  EXPECT_EQ((*std::get<SqlCompute>(edited.definitions.FindByName("c")->compute).columns.begin()).first, "renamed");
  EXPECT_EQ(project.Load().models_from_parse_cache, 6u);  // the edit was cached
  // ... appended to the file, after the entries written whole (c's older entry stays until a rewrite).
  const std::string appended = ReadFile(path);
  EXPECT_EQ(appended.substr(0, whole.size()), whole);
  EXPECT_GT(appended.size(), whole.size());
  EXPECT_EQ(ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size(), 7u);

  // What a warm load reads is the cache: an entry altered in place (checksum recomputed) is believed.
  std::filesystem::remove(path);
  project.Load();  // written whole again
  std::string cache = ReadFile(path);
  size_t at = cache.find("renamed");
  ASSERT_NE(at, std::string::npos);
  cache.replace(at, 7, "RENAMED");
  WriteFileAtomic(path, WithChecksum(cache));
  Project believed = project.Load();
  EXPECT_EQ((*std::get<SqlCompute>(believed.definitions.FindByName("c")->compute).columns.begin()).first, "RENAMED");

  // A removed model's entry stays (unused) until the file is rewritten; the others are read as before.
  std::filesystem::remove(project.root() / "pipelines/main/v.sql");
  EXPECT_EQ(project.Load().models_from_parse_cache, 5u);
  EXPECT_EQ(ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size(), 6u);

  // A model added before others moves their entries from the positions they were written at: found by name.
  project.Write("pipelines/main/b0.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __ref(\"a\")\n");
  EXPECT_EQ(project.Load().models_from_parse_cache, 5u);
  EXPECT_EQ(project.Load().models_from_parse_cache, 6u);
}

// Appending: a torn record (a writer killed mid-append) is ignored and makes the next load rewrite the file;
// entries no load uses are dropped by a rewrite once there are many; nothing is appended to another build's
// or dialect's file.
TEST(ParseCache, AppendedRecordsAreCheckedAndTheFileIsRewrittenWhenTheyGrow) {
  TempProject project;
  WriteCacheCoverage(project);
  project.Load();
  const std::filesystem::path path = ParseCachePath(project.root());
  const std::string whole = ReadFile(path);
  auto edit_c = [&](int version) {
    project.Write("pipelines/main/c.sql",
                  "MODEL ();\nSELECT CAST(count() AS BIGINT) AS v" + std::to_string(version) + " FROM __ref(\"a\")\n");
  };
  edit_c(1);
  project.Load();
  std::string appended = ReadFile(path);
  ASSERT_GT(appended.size(), whole.size());
  WriteFileAtomic(path, appended.substr(0, appended.size() - 1));                 // the record torn
  EXPECT_EQ(ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size(), 6u);  // the whole part still counts
  EXPECT_EQ(project.Load().models_from_parse_cache, 5u);  // c parsed again, and the file written whole: a record
  EXPECT_EQ(project.Load().models_from_parse_cache, 6u);  // appended after the torn one could not have been read
  EXPECT_EQ(ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size(), 6u);

  // Each edit of c appends a record and leaves one more unused entry; past 64 the file is rewritten whole.
  size_t largest = 0;
  for (int version = 2; version < 80; ++version) {
    edit_c(version);
    ASSERT_EQ(project.Load().models_from_parse_cache, 5u) << version;
    size_t entries = ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size();
    largest = std::max(largest, entries);
    EXPECT_LE(entries, 6u + 65u) << version;
  }
  EXPECT_GT(largest, 6u + 60u);
  EXPECT_LT(ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size(), largest);
  EXPECT_EQ(project.Load().models_from_parse_cache, 6u);

  const std::string before = ReadFile(path);
  EXPECT_FALSE(AppendParseCache(project.root(), sql::Dialect::kClickHouse, {"an entry"}));
  EXPECT_EQ(ReadFile(path), before);
  std::filesystem::remove(path);
  EXPECT_FALSE(AppendParseCache(project.root(), sql::Dialect::kDuckDb, {"an entry"}));
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ParseCache, AnEntryIsFoundAtItsPositionOrByNameAndOnlyForItsFile) {
  TempProject project;
  WriteCacheCoverage(project);
  project.Load();
  ParseCache cache = ParseCache::Read(project.root(), sql::Dialect::kDuckDb);
  const std::vector<std::string> files = {"pipelines/main/a.sql", "pipelines/main/b.sql", "pipelines/main/c.sql",
                                          "pipelines/main/d.sql", "pipelines/main/p.sql", "pipelines/main/v.sql"};
  ASSERT_EQ(cache.size(), files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    ModelFileKey key = ModelFileKey::Of(ReadFile(project.root() / files[f]));
    std::optional<CachedBodyAnalysis> at_position = cache.Find(files[f], key, f);
    ASSERT_TRUE(at_position.has_value()) << files[f];
    for (size_t position : {(f + 1) % files.size(), files.size(), SIZE_MAX}) {
      std::optional<CachedBodyAnalysis> by_name = cache.Find(files[f], key, position);
      ASSERT_TRUE(by_name.has_value()) << files[f] << " at " << position;
      EXPECT_EQ(by_name->entry, at_position->entry);
    }
    EXPECT_FALSE(cache.Find("pipelines/main/other.sql", key, f).has_value());
  }
}

TEST(ParseCache, ACacheThatDoesNotApplyIsIgnoredWhole) {
  TempProject project;
  WriteCacheCoverage(project);
  Project cold = project.Load();
  const std::filesystem::path path = ParseCachePath(project.root());
  const std::string good = ReadFile(path);
  EXPECT_EQ(ParseCache::Read(project.root(), sql::Dialect::kDuckDb).size(), 6u);
  EXPECT_EQ(ParseCache::Read(project.root(), sql::Dialect::kClickHouse).size(), 0u);  // another dialect

  auto load_with = [&](const std::string& contents) {
    WriteFileAtomic(path, contents);
    Project loaded = project.Load();
    EXPECT_EQ(BuildArtifacts(loaded), BuildArtifacts(cold));
    return loaded.models_from_parse_cache;
  };
  EXPECT_EQ(load_with(good.substr(0, good.size() / 2)), 0u);  // truncated
  std::string flipped = good;
  flipped[flipped.size() / 2] ^= 0x20;
  EXPECT_EQ(load_with(flipped), 0u);  // corrupt
  std::string other_build = good;
  size_t id = other_build.find(ExecutableBuildId());
  ASSERT_NE(id, std::string::npos);
  other_build[id] = other_build[id] == '0' ? '1' : '0';
  EXPECT_EQ(load_with(WithChecksum(other_build)), 0u);  // another build wrote it
  EXPECT_EQ(load_with(""), 0u);
  EXPECT_EQ(ReadFile(path), good);  // each of those loads wrote the cache again
  EXPECT_EQ(project.Load().models_from_parse_cache, 6u);
}

// A cache whose checksum matches but whose entries are malformed (every byte of every entry altered in turn)
// must be decoded without reading out of bounds (this test runs under the sanitizers in sanitize_check) and
// must never make a load fail with anything but a sluice::Error.
TEST(ParseCache, MalformedEntriesAreRefusedOrDecodedWithinBounds) {
  TempProject project;
  project.Write("pipelines/main/b.sql",
                "MODEL ();\nSELECT CAST(a.id AS INT) AS id FROM __ref(\"a\") AS a JOIN __ref(\"c\", "
                "ref_type='reference') AS c ON true\n");
  project.Write("pipelines/main/c.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __ref(\"a\")\n");
  project.Load();
  const std::filesystem::path path = ParseCachePath(project.root());
  const std::string good = ReadFile(path);
  std::vector<std::string> files = {"pipelines/main/a.sql", "pipelines/main/b.sql", "pipelines/main/c.sql"};
  std::vector<ModelFileKey> keys;
  for (const std::string& file : files) keys.push_back(ModelFileKey::Of(ReadFile(project.root() / file)));
  size_t decoded = 0;
  for (size_t at = 0; at + 8 < good.size(); ++at) {
    for (unsigned char change : {0x01, 0x80, 0xFF}) {
      std::string altered = good;
      altered[at] = static_cast<char>(altered[at] ^ change);
      WriteFileAtomic(path, WithChecksum(altered), Durability::kUnsynced);
      ParseCache cache = ParseCache::Read(project.root(), sql::Dialect::kDuckDb);
      for (size_t f = 0; f < files.size(); ++f) decoded += cache.Find(files[f], keys[f]).has_value();
    }
    if (at % 16 == 0) {  // a whole load now and then: it succeeds, or fails with a located error
      try {
        project.Load();
      } catch (const Error& error) {
        EXPECT_FALSE(error.diagnostics().empty());
      }
    }
  }
  EXPECT_GT(decoded, 0u);  // the alterations that keep an entry readable (a column's name) are decoded
}

TEST(ParseCache, OnlyASuccessfulLoadWritesItAndAnUnwritableOneIsNoError) {
  TempProject project;
  WriteCacheCoverage(project);
  project.Load();
  const std::filesystem::path path = ParseCachePath(project.root());
  const std::string before = ReadFile(path);
  project.Write("pipelines/main/e.sql", "MODEL ();\nSELECT CAST(id AS INT) AS id FROM __ref(\"missing\")\n");
  EXPECT_EQ(ErrorOf([&] { project.Load(); }).code, "SLU-GRAPH-002");
  EXPECT_EQ(ReadFile(path), before);
  std::filesystem::remove(project.root() / "pipelines/main/e.sql");

  // Temporaries of writers that were killed before renaming are removed by the next write; a live writer's stay.
  pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_GT(dead, 0);
  ::waitpid(dead, nullptr, 0);
  const std::string dead_temporary = path.string() + ".tmp." + std::to_string(dead);
  const std::string live_temporary = path.string() + ".tmp.1";
  project.Write(".sluice/" + std::filesystem::path(dead_temporary).filename().string(), "partial");
  project.Write(".sluice/" + std::filesystem::path(live_temporary).filename().string(), "partial");
  std::filesystem::remove(path);  // the next load writes the file whole
  project.Load();
  EXPECT_FALSE(std::filesystem::exists(dead_temporary));
  EXPECT_TRUE(std::filesystem::exists(live_temporary));

  // .sluice is a file, not a folder: nothing can be written, the project loads all the same.
  std::filesystem::remove_all(project.root() / ".sluice");
  project.Write(".sluice", "not a folder");
  EXPECT_EQ(project.Load().models_from_parse_cache, 0u);
  EXPECT_EQ(project.Load().definitions.FindByName("c")->name(), "c");
}

}  // namespace
}  // namespace sluice
