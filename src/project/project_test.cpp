// Project loading: config precedence, sources, model rules and graph resolution, on projects written into
// temporary folders.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <functional>
#include <random>

#include "core/file_system.hpp"
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
  EXPECT_EQ(model("MODEL (backfill_policy (multi_run 0));\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-MODEL-014");
  EXPECT_EQ(model("MODEL (backfill_policy (daily 3));\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "SLU-MODEL-014");
  EXPECT_EQ(model("MODEL (backfill_policy (multi_run 7));\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "no error");
  EXPECT_EQ(project.Load().definitions.FindByName("b")->backfill_policy, BackfillPolicy::MultiRun(7));
  EXPECT_EQ(model("MODEL (backfill_policy single_run);\nSELECT CAST(1 AS INT) AS x FROM __ref(\"a\")\n").code,
            "no error");
  EXPECT_EQ(project.Load().definitions.FindByName("b")->backfill_policy, BackfillPolicy::SingleRun());
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

}  // namespace
}  // namespace sluice
