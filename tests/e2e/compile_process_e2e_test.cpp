// End-to-end tests of the compile process: the artifacts and the reported error are the same whatever the thread
// count, macro failures are reported in file order, Python is loaded only for projects with macros, and
// SLUICE_TIMINGS reports the phases.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;

// Every file under `folder` → its contents (Sluice's own bookkeeping files excluded).
std::map<std::string, std::string> FilesUnder(const ScratchProject& project, const std::string& folder) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(project.root() / folder)) {
    std::string relative = fs::relative(entry.path(), project.root() / folder).generic_string();
    if (relative.rfind(".sluice-", 0) == 0 || !entry.is_regular_file()) continue;
    files[relative] = project.Read(folder + "/" + relative);
  }
  return files;
}

ProcessResult CompileInto(const ScratchProject& project, const std::string& folder,
                          const std::map<std::string, std::string>& env) {
  return project.Run({"compile", "--target-dir", (project.root() / folder).string()}, env);
}

TEST(CompileProcessE2E, ArtifactsAreTheSameWithOneThreadAndManyThreads) {
  for (const char* fixture : {"streambuild_compat", "shop"}) {  // with macros (one thread parses), and without
    ScratchProject project(fixture);
    ProcessResult one = CompileInto(project, "one", {{"SLUICE_THREADS", "1"}});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ProcessResult many = CompileInto(project, "many", {{"SLUICE_THREADS", "5"}});
    ASSERT_EQ(many.exit_code, 0) << many.err;
    std::map<std::string, std::string> expected = FilesUnder(project, "one");
    ASSERT_GT(expected.size(), 5u) << fixture;
    EXPECT_EQ(FilesUnder(project, "many"), expected) << fixture;
  }
}

const char kBoomMacro[] =
    "\n\ndef boom(message: str) -> str:\n"
    "    raise ValueError(message)\n";

std::string ModelCalling(const std::string& call) {
  return "MODEL (\n  engine \"ReplacingMergeTree()\",\n  order_by [\"order_id\"],\n);\n\n"
         "SELECT\n  CAST(order_id AS String) AS order_id,\n  CAST(" +
         call +
         " AS String) AS note,\n"
         "  CAST(_replay_partition AS Int32) AS _replay_partition,\n"
         "  CAST(_replay_offset AS Int64) AS _replay_offset\nFROM __ref(\"orders\")\n";
}

TEST(CompileProcessE2E, EveryFailingMacroIsReportedInFileOrderWhateverTheThreadCount) {
  ScratchProject project("streambuild_compat");
  project.Write("macros/common.py", project.Read("macros/common.py") + kBoomMacro);
  project.Write("pipelines/pl__order_events/z_last.sql", ModelCalling("@boom('last')"));
  project.Write("pipelines/pl__order_events/a_first.sql", ModelCalling("@boom('first')"));
  for (const char* threads : {"1", "2", "5"}) {
    ProcessResult result = project.Run({"compile"}, {{"SLUICE_THREADS", threads}});
    EXPECT_EQ(result.exit_code, 1) << threads;
    const size_t first = result.err.find("pipelines/pl__order_events/a_first.sql:");
    const size_t last = result.err.find("pipelines/pl__order_events/z_last.sql:");
    ASSERT_NE(first, std::string::npos) << result.err;
    ASSERT_NE(last, std::string::npos) << result.err;
    EXPECT_LT(first, last) << result.err;
    EXPECT_NE(result.err.find("SLU-MACRO-010", first), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("'first'"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("'last'"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(project.root() / "target")) << "a failed compile writes nothing";
  }
}

TEST(CompileProcessE2E, AHeaderErrorAndAFailingMacroInAnotherFileAreBothReported) {
  ScratchProject project("streambuild_compat");
  project.Write("macros/common.py", project.Read("macros/common.py") + kBoomMacro);
  project.Write("pipelines/pl__order_events/a_first.sql",
                "MODEL (\n  no_such_key 1,\n);\nSELECT CAST(order_id AS String) AS order_id FROM __ref(\"orders\")\n");
  project.Write("pipelines/pl__order_events/b_second.sql", ModelCalling("@boom('second')"));
  ProcessResult result = project.Run({"compile"});
  EXPECT_EQ(result.exit_code, 1);
  const size_t header = result.err.find("pipelines/pl__order_events/a_first.sql:2:3");
  const size_t macro = result.err.find("pipelines/pl__order_events/b_second.sql:");
  ASSERT_NE(header, std::string::npos) << result.err;
  ASSERT_NE(macro, std::string::npos) << result.err;
  EXPECT_LT(header, macro) << result.err;
  EXPECT_NE(result.err.find("SLU-MACRO-010", macro), std::string::npos) << result.err;
}

// Start-up: sluice does not link libpython (the macro interpreter is a plugin loaded by the first project with
// macro files); the dynamic loader's own log (LD_DEBUG=libs) shows what a process loads.
TEST(CompileProcessE2E, PythonIsLoadedOnlyForAProjectWithMacroFiles) {
  ScratchProject plain("shop");  // no macros/ folder
  ProcessResult without = plain.Run({"discover"}, {{"LD_DEBUG", "libs"}});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(without.err.find("libstdc++"), std::string::npos) << "LD_DEBUG=libs logged nothing: " << without.err;
  EXPECT_EQ(without.err.find("libpython"), std::string::npos) << without.err;

  ScratchProject with_macros("streambuild_compat");
  ProcessResult with = with_macros.Run({"discover"}, {{"LD_DEBUG", "libs"}});
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.err.find("libsluice_macro_python.so"), std::string::npos) << with.err;
  EXPECT_NE(with.err.find("libpython"), std::string::npos) << with.err;
}

TEST(CompileProcessE2E, TimingsReportEveryPhaseInOrderOnlyWhenAsked) {
  ScratchProject project("streambuild_compat");
  ProcessResult quiet = project.Run({"compile"});
  ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
  EXPECT_EQ(quiet.err.find("timing:"), std::string::npos) << quiet.err;
  ProcessResult off = project.Run({"compile"}, {{"SLUICE_TIMINGS", "0"}});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_EQ(off.err.find("timing:"), std::string::npos) << "SLUICE_TIMINGS=0 is off:\n" << off.err;

  ProcessResult timed = project.Run({"compile"}, {{"SLUICE_TIMINGS", "1"}});
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  size_t at = 0;
  for (const char* phase :
       {"config and sources", "pipelines discovered", "models parsed", "graph checks and contracts", "tests and audits",
        "definitions", "models rendered", "artifacts rendered", "artifacts published"}) {
    size_t found = timed.err.find(std::string("timing: ") + phase, at);
    ASSERT_NE(found, std::string::npos) << phase << " missing or out of order in:\n" << timed.err;
    size_t line_end = timed.err.find('\n', found);
    std::string line = timed.err.substr(found, line_end - found);
    EXPECT_NE(line.find(" ms  (total "), std::string::npos) << line;
    EXPECT_NE(line.find("resident"), std::string::npos) << line;
    EXPECT_NE(line.find("heap in use"), std::string::npos) << line;
    at = line_end;
  }
  EXPECT_EQ(timed.out.rfind("compiled ", 0), 0u) << timed.out;
  EXPECT_EQ(timed.out.find("timing:"), std::string::npos) << "timings go to stderr only";
}

}  // namespace
}  // namespace sluice::testing
