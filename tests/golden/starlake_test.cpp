// Golden tests of `sluice starlake import FILE --json`: every `tests/golden/starlake/*.test` file is one file as
// `starlake dag-generate` writes it (task_deps JSON or a generated Dagster module) and the job graph Sluice reads
// from it, printed as the command prints it — or the located error it reports. Each readable case's Sluice
// pipeline file must also read back as the imported file.
//
// File format (tests/golden/golden_file.hpp):
//   # comment lines
//   --- file: <name>                the input file; its name picks the format (`.py` a module, else task_deps JSON)
//                                   and gives the job name (its stem in lower case)
//   --- expect                      JobGraphJson(...).dump(2) and a newline, or FormatDiagnostic of each error
//
// Run with SLUICE_GOLDEN_UPDATE=1 to rewrite each file's `--- expect` section from the actual output.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "core/diagnostic.hpp"
#include "golden_file.hpp"
#include "orchestrate/pipeline_file.hpp"
#include "orchestrate/starlake_dag_file.hpp"
#include "orchestrate/starlake_job_graph.hpp"

namespace sluice::orchestrate {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "starlake";

std::string Render(const std::string& file_name, const std::string& text) {
  try {
    return JobGraphJson(BuildStarlakeJobGraph(ParseStarlakeDagFile(file_name, text))).dump(2) + "\n";
  } catch (const Error& error) {
    std::string out;
    for (const Diagnostic& diagnostic : error.diagnostics()) out += FormatDiagnostic(diagnostic);
    return out;
  }
}

class StarlakeGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(StarlakeGolden, ImportPrintsTheExpectedJobGraph) {
  const fs::path path = kCorpus / (GetParam() + ".test");
  const golden::GoldenFile golden = golden::ParseGoldenFile(golden::ReadText(path));
  EXPECT_TRUE(golden.settings.empty()) << "this corpus takes no settings";
  ASSERT_EQ(golden.sections.size(), 1u) << "one `--- file: <name>` section";
  ASSERT_EQ(golden.sections[0].name, "file");
  const std::string actual = Render(golden.sections[0].argument, golden.sections[0].text);
  if (golden::GoldenUpdateMode()) {
    golden::RewriteExpect(path, golden, actual);
    return;
  }
  EXPECT_EQ(actual, golden.expect) << "update with SLUICE_GOLDEN_UPDATE=1 and review the diff";
}

INSTANTIATE_TEST_SUITE_P(Corpus, StarlakeGolden, ::testing::ValuesIn(golden::CorpusCases(kCorpus)),
                         golden::GoldenTestName);

// What import writes reads back as what was imported: the Sluice pipeline file of every readable case (the error
// cases read nothing) parses to the same StarlakeDagFile.
TEST(StarlakeGoldenRoundTrip, EveryReadableCaseReadsBackFromItsPipelineFile) {
  int round_trips = 0;
  for (const std::string& name : golden::CorpusCases(kCorpus)) {
    const golden::GoldenFile golden = golden::ParseGoldenFile(golden::ReadText(kCorpus / (name + ".test")));
    ASSERT_EQ(golden.sections.size(), 1u) << name;
    StarlakeDagFile imported;
    try {
      imported = ParseStarlakeDagFile(golden.sections[0].argument, golden.sections[0].text);
    } catch (const Error&) {
      continue;
    }
    const std::string text = WritePipelineFile(imported);
    EXPECT_EQ(ParsePipelineFile(imported.pipeline_id + ".yml", text), imported) << name << "\n" << text;
    ++round_trips;
  }
  EXPECT_GE(round_trips, 6) << "the corpus's readable cases (six when written)";
}



}  // namespace
}  // namespace sluice::orchestrate
