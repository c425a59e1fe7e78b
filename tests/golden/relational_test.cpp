// Golden relational corpus: tests/golden/relational/<name>.test holds what the case <name> (relational_cases.hpp)
// prints: its Describe and its SQL in each dialect, as
//
//   # comment lines
//   --- expect
//   === describe
//   <Describe output>
//   === duckdb | clickhouse | postgres | bigquery
//   <ToSql output>
//
// A case whose printer throws shows the error's code and message instead of the SQL. SLUICE_GOLDEN_UPDATE=1
// rewrites the expectations (and writes the file of a new case).
#include <gtest/gtest.h>

#include "core/diagnostic.hpp"
#include "golden_file.hpp"
#include "relational_cases.hpp"

namespace sluice::golden {
namespace {

namespace fs = std::filesystem;

const fs::path kFolder = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "relational";

std::string Render(const Table& table) {
  std::string out = "=== describe\n" + Describe(table);
  const std::pair<const char*, sql::Dialect> dialects[] = {{"duckdb", sql::Dialect::kDuckDb},
                                                           {"clickhouse", sql::Dialect::kClickHouse},
                                                           {"postgres", sql::Dialect::kPostgres},
                                                           {"bigquery", sql::Dialect::kBigQuery}};
  for (const auto& [name, dialect] : dialects) {
    out += std::string("=== ") + name + "\n";
    try {
      out += ToSql(table, dialect) + "\n";
    } catch (const Error& e) {
      out += "error " + e.diagnostics().front().code + ": " + e.diagnostics().front().message + "\n";
    }
  }
  return out;
}

class GoldenRelational : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenRelational, PrintsAsRecorded) {
  const std::string& name = GetParam();
  std::string actual = Render(RelationalCases().at(name)());
  fs::path path = kFolder / (name + ".test");
  if (!fs::exists(path)) {
    if (!GoldenUpdateMode()) FAIL() << path << " is missing; run with SLUICE_GOLDEN_UPDATE=1 to write it";
    fs::create_directories(kFolder);
    std::ofstream(path, std::ios::binary) << "# relational case `" << name
                                          << "` (tests/golden/relational_cases.hpp)\n--- expect\n"
                                          << actual;
    return;
  }
  GoldenFile golden = ParseGoldenFile(ReadText(path));
  if (GoldenUpdateMode()) {
    RewriteExpect(path, golden, actual);
    return;
  }
  EXPECT_EQ(golden.expect, actual) << "in " << path;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  for (const auto& [name, build] : RelationalCases()) names.push_back(name);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenRelational, ::testing::ValuesIn(CaseNames()), GoldenTestName);

TEST(GoldenRelationalCorpus, EveryFileHasACase) {
  for (const std::string& stem : CorpusCases(kFolder)) {
    EXPECT_TRUE(RelationalCases().count(stem)) << stem << ".test has no case in relational_cases.hpp";
  }
}

}  // namespace
}  // namespace sluice::golden
