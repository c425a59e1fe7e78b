// End-to-end tests of what makes compile fast, checked for what it must not change: the artifacts and the
// reported error are the same whatever the thread count and heap settings, macro failures are reported in file
// order although the files are read in parallel, SLUICE_TIMINGS reports the phases, and the parse cache changes
// nothing but the time.
#include <gtest/gtest.h>
#include <signal.h>

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

TEST(CompileSpeedE2E, ArtifactsAreTheSameWithOneThreadManyThreadsAndWithoutHugePages) {
  ScratchProject project("streambuild_compat");  // macros, tests, audits, sources of every kind
  ProcessResult one = CompileInto(project, "one", {{"SLUICE_THREADS", "1"}});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ProcessResult many = CompileInto(project, "many", {{"SLUICE_THREADS", "5"}});
  ASSERT_EQ(many.exit_code, 0) << many.err;
  ProcessResult small_pages = CompileInto(project, "small_pages", {{"MALLOC_CONF", "thp:never"}});
  ASSERT_EQ(small_pages.exit_code, 0) << small_pages.err;
  std::map<std::string, std::string> expected = FilesUnder(project, "one");
  ASSERT_GT(expected.size(), 10u);
  EXPECT_EQ(FilesUnder(project, "many"), expected);
  EXPECT_EQ(FilesUnder(project, "small_pages"), expected);
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

TEST(CompileSpeedE2E, TheFirstFailingMacroInFileOrderIsReportedWhateverTheThreadCount) {
  ScratchProject project("streambuild_compat");
  project.Write("macros/common.py", project.Read("macros/common.py") + kBoomMacro);
  project.Write("pipelines/pl__order_events/a_first.sql", ModelCalling("@boom('first')"));
  project.Write("pipelines/pl__order_events/z_last.sql", ModelCalling("@boom('last')"));
  for (const char* threads : {"1", "2", "5"}) {
    ProcessResult result = project.Run({"compile"}, {{"SLUICE_THREADS", threads}});
    EXPECT_EQ(result.exit_code, 1) << threads;
    EXPECT_NE(result.err.find("pipelines/pl__order_events/a_first.sql:"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("SLU-MACRO-010"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("first"), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find("z_last.sql"), std::string::npos) << result.err;
    EXPECT_FALSE(fs::exists(project.root() / "target")) << "a failed compile writes nothing";
  }
}

TEST(CompileSpeedE2E, AHeaderErrorBeforeAFailingMacroIsReportedFirst) {
  ScratchProject project("streambuild_compat");
  project.Write("macros/common.py", project.Read("macros/common.py") + kBoomMacro);
  project.Write("pipelines/pl__order_events/a_first.sql",
                "MODEL (\n  no_such_key 1,\n);\nSELECT CAST(order_id AS String) AS order_id FROM __ref(\"orders\")\n");
  project.Write("pipelines/pl__order_events/b_second.sql", ModelCalling("@boom('second')"));
  ProcessResult result = project.Run({"compile"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.err.find("pipelines/pl__order_events/a_first.sql:2:3"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find("SLU-MACRO-010"), std::string::npos) << result.err;
}

// Start-up: sluice links neither libpython (the macro interpreter is a plugin loaded by the first project
// with macro files) nor libcrypto; the dynamic loader's own log (LD_DEBUG=libs) shows what a process loads.
TEST(CompileSpeedE2E, PythonIsLoadedOnlyForAProjectWithMacroFiles) {
  ScratchProject plain("shop");  // no macros/ folder
  ProcessResult without = plain.Run({"discover"}, {{"LD_DEBUG", "libs"}});
  ASSERT_EQ(without.exit_code, 0) << without.err;
  EXPECT_NE(without.err.find("libstdc++"), std::string::npos) << "LD_DEBUG=libs logged nothing: " << without.err;
  EXPECT_EQ(without.err.find("libpython"), std::string::npos) << without.err;
  EXPECT_EQ(without.err.find("libcrypto"), std::string::npos) << without.err;

  ScratchProject with_macros("streambuild_compat");
  ProcessResult with = with_macros.Run({"discover"}, {{"LD_DEBUG", "libs"}});
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_NE(with.err.find("libsluice_macro_python.so"), std::string::npos) << with.err;
  EXPECT_NE(with.err.find("libpython"), std::string::npos) << with.err;
}

TEST(CompileSpeedE2E, TimingsReportEveryPhaseInOrderOnlyWhenAsked) {
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
       {"config and sources", "pipelines discovered", "models parsed", "models checked", "graph checks and contracts",
        "tests and audits", "definitions", "models rendered", "artifacts rendered", "artifacts published"}) {
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

// The parse cache (src/project/parse_cache.hpp): compiles that write it and read it produce what a compile
// without it produces; a run killed between writing its new cache and renaming it over the old one leaves the
// old cache, and the next run replaces it and removes the killed run's temporary.
TEST(CompileSpeedE2E, TheParseCacheChangesNoArtifactAndAKilledWriterLeavesTheOldCache) {
  ScratchProject project("streambuild_compat");
  ProcessResult off = CompileInto(project, "off", {{"SLUICE_PARSE_CACHE", "off"}});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  EXPECT_FALSE(fs::exists(project.root() / ".sluice"));
  ProcessResult writing = CompileInto(project, "writing", {});
  ASSERT_EQ(writing.exit_code, 0) << writing.err;
  const std::string cache = project.Read(".sluice/parse-cache");
  ProcessResult reading = CompileInto(project, "reading", {{"SLUICE_TIMINGS", "1"}});
  ASSERT_EQ(reading.exit_code, 0) << reading.err;
  std::map<std::string, std::string> expected = FilesUnder(project, "off");
  EXPECT_EQ(FilesUnder(project, "writing"), expected);
  EXPECT_EQ(FilesUnder(project, "reading"), expected);
  EXPECT_EQ(reading.err.find("parse cache written"), std::string::npos) << "nothing new to cache";
  EXPECT_EQ(project.Read(".sluice/parse-cache"), cache);

  // An edited model's entry is appended to the file.
  const std::string model = "pipelines/pl__legacy/legacy_sessions.sql";
  project.Write(model, project.Read(model) + "-- edited\n");
  ProcessResult appending = project.Run({"discover"}, {{"SLUICE_TIMINGS", "1"}});
  ASSERT_EQ(appending.exit_code, 0) << appending.err;
  EXPECT_NE(appending.err.find("parse cache appended"), std::string::npos) << appending.err;
  const std::string appended = project.Read(".sluice/parse-cache");
  EXPECT_EQ(appended.substr(0, cache.size()), cache);
  EXPECT_GT(appended.size(), cache.size());

  // A file with a torn record is written whole by the next load; a writer killed before its rename leaves it.
  const std::string torn = appended + "\x05torn";
  project.Write(".sluice/parse-cache", torn);
  project.Write(model, project.Read(model) + "-- edited again\n");
  const std::string marker = (project.root() / "paused_cache_write").string();
  pid_t pid = project.Start({"discover"},
                            {{"SLUICE_TEST_PAUSE_AT", "before_atomic_rename"}, {"SLUICE_TEST_PAUSE_MARKER", marker}},
                            "paused_discover");
  ASSERT_TRUE(WaitForFile(marker, 60));
  ::kill(pid, SIGKILL);
  EXPECT_EQ(WaitFor(pid), 128 + SIGKILL);
  auto temporaries = [&] {
    size_t count = 0;
    for (const auto& entry : fs::directory_iterator(project.root() / ".sluice")) {
      count += entry.path().filename().string().rfind("parse-cache.tmp.", 0) == 0;
    }
    return count;
  };
  EXPECT_EQ(project.Read(".sluice/parse-cache"), torn);
  EXPECT_EQ(temporaries(), 1u);
  ProcessResult after = project.Run({"discover"}, {{"SLUICE_TIMINGS", "1"}});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.err.find("parse cache written"), std::string::npos) << after.err;
  EXPECT_NE(project.Read(".sluice/parse-cache"), torn);
  EXPECT_EQ(temporaries(), 0u);
  ProcessResult unchanged = project.Run({"discover"}, {{"SLUICE_TIMINGS", "1"}});
  ASSERT_EQ(unchanged.exit_code, 0) << unchanged.err;
  EXPECT_EQ(unchanged.err.find("parse cache"), std::string::npos) << unchanged.err;
}

}  // namespace
}  // namespace sluice::testing
