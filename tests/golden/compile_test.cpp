// Golden tests of `sluice compile`: every `tests/golden/compile/*.test` file names a project (optionally edited)
// and the exact artifacts its compile must write.
//
// File format:
//   # any comment lines
//   base: shop                      a fixture of tests/projects/, or a folder of the source tree when it holds a
//                                   '/' (e.g. examples/orders_demo)
//   env: NAME=value                 (repeatable) set for the compile
//   --- file: <relative path>       the lines up to the next `---` become that file's contents
//   --- delete: <relative path>     removes a file or folder of the base project
//   --- expect tree: <folder>       target/ must hold exactly the files of tests/golden/compile/<folder>/ (the
//                                   publication's own index aside), byte for byte
//   --- expect: <artifact path>     the lines up to the next `---` are that artifact's exact contents
//
// Run with SLUICE_GOLDEN_UPDATE=1 to rewrite the expectations (the `--- expect:` sections and the trees) from
// what the compile wrote.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "e2e/sluice_process.hpp"
#include "golden/golden_file.hpp"

namespace sluice::testing {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "compile";

struct CompileCase {
  std::string base = "shop";
  std::map<std::string, std::string> env;
  std::vector<std::pair<std::string, std::string>> files;  // path → contents
  std::vector<std::string> deletions;
  std::string tree;                                          // the expected tree's folder, when any
  std::vector<std::pair<std::string, std::string>> expect;   // artifact path → contents
  std::string head;  // everything before the first `--- expect` line, kept verbatim on update
};

void WriteFile(const fs::path& path, const std::string& contents) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << contents;
}

CompileCase Parse(const std::string& text) {
  CompileCase parsed;
  std::istringstream lines(text);
  std::string line;
  enum class Section { kPreamble, kFile, kExpect } section = Section::kPreamble;
  bool expecting = false;
  while (std::getline(lines, line)) {
    if (line.rfind("--- ", 0) == 0) {
      std::string directive = line.substr(4);
      if (directive.rfind("file: ", 0) == 0) {
        parsed.files.emplace_back(directive.substr(6), "");
        section = Section::kFile;
      } else if (directive.rfind("delete: ", 0) == 0) {
        parsed.deletions.push_back(directive.substr(8));
        section = Section::kPreamble;
      } else if (directive.rfind("expect tree: ", 0) == 0) {
        parsed.tree = directive.substr(13);
        section = Section::kPreamble;
        expecting = true;
        continue;
      } else if (directive.rfind("expect: ", 0) == 0) {
        parsed.expect.emplace_back(directive.substr(8), "");
        section = Section::kExpect;
        expecting = true;
        continue;
      } else {
        ADD_FAILURE() << "unknown directive: " << line;
      }
      if (expecting) ADD_FAILURE() << "edits must come before the expectations: " << line;
      parsed.head += line + "\n";
      continue;
    }
    switch (section) {
      case Section::kPreamble:
        if (expecting) {
          if (!line.empty()) ADD_FAILURE() << "unexpected line after an expectation: " << line;
          break;
        }
        if (line.rfind("base: ", 0) == 0) parsed.base = line.substr(6);
        if (line.rfind("env: ", 0) == 0) {
          std::string assignment = line.substr(5);
          size_t equals = assignment.find('=');
          parsed.env[assignment.substr(0, equals)] = equals == std::string::npos ? "" : assignment.substr(equals + 1);
        }
        parsed.head += line + "\n";
        break;
      case Section::kFile:
        parsed.files.back().second += line + "\n";
        parsed.head += line + "\n";
        break;
      case Section::kExpect:
        parsed.expect.back().second += line + "\n";
        break;
    }
  }
  return parsed;
}

// Every regular file under `dir`, by path relative to it; the publication's own files (names starting with a
// dot) left out.
std::map<std::string, std::string> FilesUnder(const fs::path& dir) {
  std::map<std::string, std::string> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& item : fs::recursive_directory_iterator(dir)) {
    if (!item.is_regular_file()) continue;
    std::string relative = fs::relative(item.path(), dir).generic_string();
    if (relative.front() == '.') continue;
    files[relative] = golden::ReadText(item.path());
  }
  return files;
}

class CompileGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(CompileGolden, ArtifactsMatch) {
  const fs::path file = kCorpus / (GetParam() + ".test");
  const CompileCase golden = Parse(golden::ReadText(file));
  ScratchProject project(golden.base);
  for (const std::string& deletion : golden.deletions) project.Remove(deletion);
  for (const auto& [path, contents] : golden.files) project.Write(path, contents);
  ProcessResult result = project.Run({"compile"}, golden.env);
  ASSERT_EQ(result.exit_code, 0) << result.out << result.err;
  const std::map<std::string, std::string> actual = FilesUnder(project.root() / "target");

  if (golden::GoldenUpdateMode()) {
    if (!golden.tree.empty()) {
      fs::remove_all(kCorpus / golden.tree);
      for (const auto& [path, contents] : actual) WriteFile(kCorpus / golden.tree / path, contents);
    }
    std::string text = golden.head;
    if (!golden.tree.empty()) text += "--- expect tree: " + golden.tree + "\n";
    for (const auto& [path, contents] : golden.expect) {
      auto found = actual.find(path);
      text += "--- expect: " + path + "\n" + (found == actual.end() ? std::string() : found->second);
    }
    WriteFile(file, text);
    return;
  }

  ASSERT_TRUE(!golden.tree.empty() || !golden.expect.empty()) << "a case must expect something";
  if (!golden.tree.empty()) {
    const std::map<std::string, std::string> expected = FilesUnder(kCorpus / golden.tree);
    ASSERT_FALSE(expected.empty()) << "no expected tree at " << (kCorpus / golden.tree);
    for (const auto& [path, contents] : expected) {
      auto found = actual.find(path);
      if (found == actual.end()) {
        ADD_FAILURE() << "not written: " << path;
      } else {
        EXPECT_EQ(found->second, contents) << path;
      }
    }
    for (const auto& [path, contents] : actual) {
      EXPECT_TRUE(expected.count(path)) << "written but not expected: " << path;
    }
  }
  for (const auto& [path, contents] : golden.expect) {
    auto found = actual.find(path);
    if (found == actual.end()) {
      ADD_FAILURE() << "not written: " << path;
    } else {
      EXPECT_EQ(found->second, contents) << path;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, CompileGolden, ::testing::ValuesIn(golden::CorpusCases(kCorpus)),
                         golden::GoldenTestName);

}  // namespace
}  // namespace sluice::testing
