// Golden tests of diagnostics: every `tests/golden/diagnostics/*.test` file describes one malformed project
// as edits on top of `tests/projects/<base>` and the exact rendered error `sluice compile` must print.
//
// File format:
//   # any comment lines
//   base: shop                      (optional; default "shop")
//   --- file: <relative path>       the lines up to the next `---` become that file's contents
//   --- delete: <relative path>     removes a file or folder of the base project
//   --- expect                      the rendered diagnostics (FormatDiagnostic of each, in order)
//
// Run with SLUICE_GOLDEN_UPDATE=1 to rewrite each file's `--- expect` section from the actual output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "core/diagnostic.hpp"
#include "compile/artifacts.hpp"
#include "project/project_loader.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "diagnostics";

struct GoldenCase {
  std::string base = "shop";
  std::vector<std::pair<std::string, std::string>> files;  // path → contents
  std::vector<std::string> deletions;
  std::string expect;
  std::string head;  // everything before the `--- expect` line, kept verbatim on update
};

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

GoldenCase Parse(const std::string& text) {
  GoldenCase parsed;
  std::istringstream lines(text);
  std::string line;
  enum class Section { kPreamble, kFile, kExpect } section = Section::kPreamble;
  while (std::getline(lines, line)) {
    if (line.rfind("--- ", 0) == 0) {
      std::string directive = line.substr(4);
      if (directive.rfind("file: ", 0) == 0) {
        parsed.files.emplace_back(directive.substr(6), "");
        section = Section::kFile;
      } else if (directive.rfind("delete: ", 0) == 0) {
        parsed.deletions.push_back(directive.substr(8));
        section = Section::kPreamble;
      } else if (directive == "expect") {
        section = Section::kExpect;
        continue;
      } else {
        ADD_FAILURE() << "unknown directive: " << line;
      }
      parsed.head += line + "\n";
      continue;
    }
    switch (section) {
      case Section::kPreamble:
        if (line.rfind("base: ", 0) == 0) parsed.base = line.substr(6);
        parsed.head += line + "\n";
        break;
      case Section::kFile:
        parsed.files.back().second += line + "\n";
        parsed.head += line + "\n";
        break;
      case Section::kExpect:
        parsed.expect += line + "\n";
        break;
    }
  }
  return parsed;
}

// Compiles the edited project in a scratch folder; returns the rendered diagnostics ("" on success) and
// whether anything was written.
std::pair<std::string, bool> Compile(const GoldenCase& golden) {
  std::random_device device;
  fs::path root = fs::temp_directory_path() /
                  ("sluice_golden_" + std::to_string(::getpid()) + "_" + std::to_string(device())) / "project";
  fs::create_directories(root.parent_path());
  fs::copy(fs::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / golden.base, root, fs::copy_options::recursive);
  for (const std::string& deletion : golden.deletions) fs::remove_all(root / deletion);
  for (const auto& [path, contents] : golden.files) {
    fs::create_directories((root / path).parent_path());
    std::ofstream(root / path, std::ios::binary | std::ios::trunc) << contents;
  }
  std::string rendered;
  try {
    const Project project = LoadProject(root, LoadOptions{});
    WriteArtifacts(project.definitions, root / "target");
  } catch (const Error& error) {
    for (const Diagnostic& diagnostic : error.diagnostics()) rendered += FormatDiagnostic(diagnostic);
  }
  bool wrote = fs::exists(root / "target");
  fs::remove_all(root.parent_path());
  return {rendered, wrote};
}

std::vector<std::string> CorpusFiles() {
  std::vector<std::string> names;
  for (const auto& item : fs::directory_iterator(kCorpus)) {
    if (item.path().extension() == ".test") names.push_back(item.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class Diagnostics : public ::testing::TestWithParam<std::string> {};

TEST_P(Diagnostics, MatchGolden) {
  fs::path file = kCorpus / (GetParam() + ".test");
  GoldenCase golden = Parse(Slurp(file));
  auto [actual, wrote] = Compile(golden);
  if (const char* update = std::getenv("SLUICE_GOLDEN_UPDATE"); update && std::string(update) == "1") {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << golden.head << "--- expect\n" << actual;
    return;
  }
  EXPECT_FALSE(actual.empty()) << "the project compiled; a golden case must fail";
  EXPECT_FALSE(wrote) << "a failed compile must write nothing";
  EXPECT_EQ(actual, golden.expect);
  size_t errors = 0;
  for (size_t at = actual.find("error["); at != std::string::npos; at = actual.find("error[", at + 1)) ++errors;
  EXPECT_EQ(errors, 1u) << "one located error per malformed input";
}

INSTANTIATE_TEST_SUITE_P(Corpus, Diagnostics, ::testing::ValuesIn(CorpusFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace sluice
