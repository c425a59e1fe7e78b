// Golden tests of the SQL body contract: every `tests/golden/contract/*.test` file is one whole model file and
// what ParseModelFile, ContractInputOf and CheckModelContract make of it (the path the project loader takes,
// without macro expansion), printed as text, or the error they report.
//
// File format (tests/golden/golden_file.hpp):
//   # comment lines
//   dialect: clickhouse             duckdb, clickhouse (the default), postgres or bigquery
//   --- model: <relative path>      the model file (`MODEL (…);` header and body; its lines, each ending in '\n')
//   --- expect                      the contract, or FormatDiagnostic of each error diagnostic
//
// The contract is printed as
//   columns:
//     <name>: <type as authored> at <line>:<column of the projection item>
//   aggregate: yes|no
//   anchor candidate: yes|no
//   anchor eligible: <the lineage modes for which anchor_eligible holds, or none>
//
// Run with SLUICE_GOLDEN_UPDATE=1 to rewrite each file's `--- expect` section from the actual output.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <utility>

#include "core/diagnostic.hpp"
#include "golden_file.hpp"
#include "project/models/model_contract.hpp"
#include "project/models/model_file.hpp"
#include "sql/tokenizer.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "contract";

constexpr std::pair<LineageMode, const char*> kLineageModes[] = {{LineageMode::kOffsets, "offsets"},
                                                                 {LineageMode::kTimestamp, "timestamp"},
                                                                 {LineageMode::kLandedAt, "landed_at"},
                                                                 {LineageMode::kCursor, "cursor"}};

// The model's contract for one lineage mode; throws sluice::Error as the parse or the contract does. Without
// macro expansion the contract's offsets are offsets into `text`.
ModelContract ContractOf(const std::string& file, const std::string& text, sql::Dialect dialect, LineageMode lineage) {
  ParsedModel parsed = ParseModelFile(file, text, dialect);
  ModelContractInput input = ContractInputOf(parsed, text, dialect);
  input.lineage = lineage;
  return CheckModelContract(input);
}

std::string Render(const std::string& file, const std::string& text, sql::Dialect dialect) {
  ModelContract contract;
  std::string eligible;
  try {
    for (const auto& [mode, name] : kLineageModes) {
      contract = ContractOf(file, text, dialect, mode);
      if (contract.anchor_eligible) eligible += (eligible.empty() ? "" : ", ") + std::string(name);
    }
  } catch (const Error& error) {
    std::string rendered;
    for (const Diagnostic& diagnostic : error.diagnostics()) rendered += FormatDiagnostic(diagnostic);
    return rendered;
  }
  std::string out = "columns:\n";
  for (const OutputColumn& column : contract.columns) {
    SourceLocation at = LocationAt(file, text, column.offset);
    out += "  " + column.name + ": " + column.type_text + " at " + std::to_string(at.line) + ":" +
           std::to_string(at.column) + "\n";
  }
  out += std::string("aggregate: ") + (contract.aggregate ? "yes" : "no") + "\n";
  out += std::string("anchor candidate: ") + (contract.anchor_candidate ? "yes" : "no") + "\n";
  out += "anchor eligible: " + (eligible.empty() ? std::string("none") : eligible) + "\n";
  return out;
}

class Contract : public ::testing::TestWithParam<std::string> {};

TEST_P(Contract, MatchesGolden) {
  const fs::path file = kCorpus / (GetParam() + ".test");
  const golden::GoldenFile golden = golden::ParseGoldenFile(golden::ReadText(file));
  const sql::Dialect dialect = sql::DialectForAdapter(golden::DialectSetting(golden));
  ASSERT_EQ(golden.sections.size(), 1u) << "one `--- model: <path>` section expected";
  const golden::GoldenSection& model = golden.sections[0];
  ASSERT_TRUE(model.name == "model" && !model.argument.empty()) << "one `--- model: <path>` section expected";
  const std::string actual = Render(model.argument, model.text, dialect);
  if (golden::GoldenUpdateMode()) {
    golden::RewriteExpect(file, golden, actual);
    return;
  }
  EXPECT_EQ(actual, golden.expect) << file.string() << " (SLUICE_GOLDEN_UPDATE=1 rewrites its expectation)";
}

INSTANTIATE_TEST_SUITE_P(Corpus, Contract, ::testing::ValuesIn(golden::CorpusCases(kCorpus)), golden::GoldenTestName);

}  // namespace
}  // namespace sluice
