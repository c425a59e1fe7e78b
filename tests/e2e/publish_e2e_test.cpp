// End-to-end tests of artifact publication: an unchanged project writes nothing, a change rewrites only
// what it touches, and a compile killed at any point leaves the old artifacts or (after the next command
// recovers) the new ones — never a mix.
#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <map>
#include <string>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;

// Every artifact file under target/ (Sluice's own bookkeeping excluded) → its contents.
std::map<std::string, std::string> Artifacts(const ScratchProject& project) {
  std::map<std::string, std::string> files;
  fs::path target = project.root() / "target";
  for (const auto& entry : fs::recursive_directory_iterator(target)) {
    std::string relative = fs::relative(entry.path(), target).generic_string();
    if (relative.rfind(".sluice-", 0) == 0 || relative.rfind("run/", 0) == 0 || !entry.is_regular_file()) continue;
    files[relative] = project.Read("target/" + relative);
  }
  return files;
}

std::string Compile(const ScratchProject& project) {
  ProcessResult result = project.Run({"compile"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  return result.out;
}

const char kChangedModel[] =
    "MODEL (kind table);\n"
    "SELECT CAST(event_id AS INTEGER) AS event_id, CAST(user_id AS INTEGER) AS user_id,\n"
    "       CAST(event_date AS DATE) AS event_date, CAST(amount * 2 AS DOUBLE) AS amount\n"
    "FROM __source(\"events\")\n";

TEST(PublishE2E, AnUnchangedProjectWritesNothing) {
  ScratchProject project("shop");
  EXPECT_NE(Compile(project).find("(18 file(s) written, 0 removed, 0 unchanged)"), std::string::npos);
  std::map<std::string, std::string> first = Artifacts(project);
  fs::file_time_type manifest_time = fs::last_write_time(project.root() / "target/manifest.json");
  std::string again = Compile(project);
  EXPECT_NE(again.find("(0 file(s) written, 0 removed, 18 unchanged)"), std::string::npos) << again;
  EXPECT_EQ(Artifacts(project), first);
  EXPECT_EQ(fs::last_write_time(project.root() / "target/manifest.json"), manifest_time);
}

TEST(PublishE2E, AChangeRewritesOnlyWhatItTouchesAndARemovedModelLeavesNoFiles) {
  ScratchProject project("shop");
  Compile(project);
  std::map<std::string, std::string> before = Artifacts(project);
  project.Write("pipelines/core/clean_events.sql", kChangedModel);
  std::string out = Compile(project);
  // The model's SQL, the manifest and its pipeline's workflow (the model's step, workflow.sql, workflow.json); the
  // DAG lists nothing new, so it stays → 5 written.
  EXPECT_NE(out.find("(5 file(s) written, 0 removed, 13 unchanged)"), std::string::npos) << out;
  std::map<std::string, std::string> after = Artifacts(project);
  EXPECT_NE(after.at("compiled/models/core/clean_events.sql"), before.at("compiled/models/core/clean_events.sql"));
  EXPECT_EQ(after.at("compiled/models/people/dim_users.sql"), before.at("compiled/models/people/dim_users.sql"));

  // A fresh compile into an empty target/ gives exactly the same files as the incremental one.
  fs::remove_all(project.root() / "target");
  Compile(project);
  EXPECT_EQ(Artifacts(project), after);

  project.Write("pipelines/extra/extra_events.sql",
                "MODEL (kind table);\nSELECT CAST(event_id AS BIGINT) AS event_id FROM __source(\"events\")\n");
  Compile(project);
  EXPECT_TRUE(fs::exists(project.root() / "target/compiled/models/extra/extra_events.sql"));
  project.Remove("pipelines/extra");
  out = Compile(project);
  // The model's SQL and its pipeline's workflow (two steps, workflow.sql, workflow.json).
  EXPECT_NE(out.find("5 removed"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(project.root() / "target/compiled/models/extra")) << "the emptied folder is removed too";
  std::map<std::string, std::string> incremental = Artifacts(project);
  fs::remove_all(project.root() / "target");
  Compile(project);
  EXPECT_EQ(Artifacts(project), incremental);
}

// Kills a compile of `kChangedModel` at `pause_point`; returns the artifacts from before it.
std::map<std::string, std::string> KillCompileAt(const ScratchProject& project, const std::string& pause_point) {
  Compile(project);
  std::map<std::string, std::string> before = Artifacts(project);
  project.Write("pipelines/core/clean_events.sql", kChangedModel);
  std::string marker = (project.root() / ("paused_" + pause_point)).string();
  pid_t pid = project.Start({"compile"}, {{"SLUICE_TEST_PAUSE_AT", pause_point}, {"SLUICE_TEST_PAUSE_MARKER", marker}},
                            "paused_compile");
  EXPECT_TRUE(WaitForFile(marker, 60));
  ::kill(pid, SIGKILL);
  EXPECT_EQ(WaitFor(pid), 128 + SIGKILL);
  return before;
}

TEST(PublishE2E, KilledBeforeTheJournalCommitsKeepsTheOldArtifacts) {
  ScratchProject project("shop");
  std::map<std::string, std::string> before = KillCompileAt(project, "artifacts_staged");
  EXPECT_EQ(Artifacts(project), before);
  EXPECT_TRUE(fs::exists(project.root() / "target/.sluice-publish")) << "the killed compile left its staging";
  Compile(project);
  EXPECT_FALSE(fs::exists(project.root() / "target/.sluice-publish"));
  std::map<std::string, std::string> after = Artifacts(project);
  fs::remove_all(project.root() / "target");
  Compile(project);
  EXPECT_EQ(Artifacts(project), after);
  EXPECT_NE(after.at("compiled/models/core/clean_events.sql"), before.at("compiled/models/core/clean_events.sql"));
}

TEST(PublishE2E, KilledAfterTheJournalCommitsIsRolledForwardByTheNextCompile) {
  ScratchProject project("shop");
  std::map<std::string, std::string> before = KillCompileAt(project, "artifacts_committed");
  EXPECT_TRUE(fs::exists(project.root() / "target/.sluice-publish/journal"));
  // The next compile first finishes the committed publication, then finds nothing left to write.
  std::string out = Compile(project);
  EXPECT_NE(out.find("(0 file(s) written, 0 removed, 18 unchanged)"), std::string::npos) << out;
  std::map<std::string, std::string> recovered = Artifacts(project);
  fs::remove_all(project.root() / "target");
  Compile(project);
  EXPECT_EQ(Artifacts(project), recovered);
  EXPECT_NE(recovered, before);
}

}  // namespace
}  // namespace sluice::testing
