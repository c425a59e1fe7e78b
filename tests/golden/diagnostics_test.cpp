// Golden tests of diagnostics: every `tests/golden/diagnostics/*.test` file describes one malformed project
// as edits on top of `tests/projects/<base>` and the exact rendered error `sluice compile` must print.
//
// File format:
//   # any comment lines
//   base: shop                      (optional; default "shop")
//   environment: NAME=value         (optional) the load sees exactly this one environment variable, instead of
//                                   the process's environment; its value must not appear in the output
//   errors: 2                       (optional; default 1) how many errors the project has: independent broken
//                                   files are reported together, sorted by file
//   --- file: <relative path>       the lines up to the next `---` become that file's contents
//   --- delete: <relative path>     removes a file or folder of the base project
//   --- symlink: <relative path> -> <target>   makes a symbolic link (replacing a file of the base project) to
//                                   <target>, as `ln -s <target> <path>` would
//   --- expect                      the rendered diagnostics (FormatDiagnostic of each, in order)
//
// Run with SLUICE_GOLDEN_UPDATE=1 to rewrite each file's `--- expect` section from the actual output.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/diagnostic.hpp"
#include "compile/artifacts.hpp"
#include "golden_file.hpp"
#include "project/project_loader.hpp"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using golden::GoldenFile;
using golden::GoldenSection;

const fs::path kCorpus = fs::path(SLUICE_SOURCE_DIR) / "tests" / "golden" / "diagnostics";

// The `environment: NAME=value` setting as the one variable of an environment; empty without the setting.
EnvironmentLookup EnvironmentOf(const GoldenFile& golden) {
  auto setting = golden.settings.find("environment");
  if (setting == golden.settings.end()) return {};
  size_t equals = setting->second.find('=');
  EXPECT_NE(equals, std::string::npos) << "environment: NAME=value";
  std::string name = setting->second.substr(0, equals);
  std::string value = equals == std::string::npos ? "" : setting->second.substr(equals + 1);
  return [name, value](const std::string& asked) -> std::optional<std::string> {
    if (asked == name) return value;
    return std::nullopt;
  };
}

// Compiles the edited project in a scratch folder; returns the rendered diagnostics ("" on success) and
// whether anything was written.
std::pair<std::string, bool> Compile(const GoldenFile& golden) {
  std::random_device device;
  fs::path root = fs::temp_directory_path() /
                  ("sluice_golden_" + std::to_string(::getpid()) + "_" + std::to_string(device())) / "project";
  fs::create_directories(root.parent_path());
  auto base = golden.settings.find("base");
  fs::copy(fs::path(SLUICE_SOURCE_DIR) / "tests" / "projects" / (base == golden.settings.end() ? "shop" : base->second),
           root, fs::copy_options::recursive);
  for (const GoldenSection& section : golden.sections) {
    if (section.name == "delete") {
      fs::remove_all(root / section.argument);
    } else if (section.name == "symlink") {
      const size_t arrow = section.argument.find(" -> ");
      EXPECT_NE(arrow, std::string::npos) << "--- symlink: <path> -> <target>";
      const fs::path link = root / section.argument.substr(0, arrow);
      fs::remove_all(link);
      fs::create_directories(link.parent_path());
      fs::create_symlink(section.argument.substr(arrow + 4), link);
    } else if (section.name == "file") {
      fs::create_directories((root / section.argument).parent_path());
      std::ofstream(root / section.argument, std::ios::binary | std::ios::trunc) << section.text;
    } else {
      ADD_FAILURE() << "unknown directive: --- " << section.name;
    }
  }
  std::string rendered;
  try {
    LoadOptions options;
    options.environment = EnvironmentOf(golden);
    const Project project = LoadProject(root, options);
    WriteArtifacts(project.definitions, root / "target");
  } catch (const Error& error) {
    for (const Diagnostic& diagnostic : error.diagnostics()) rendered += FormatDiagnostic(diagnostic);
  }
  bool wrote = fs::exists(root / "target");
  fs::remove_all(root.parent_path());
  return {rendered, wrote};
}

class Diagnostics : public ::testing::TestWithParam<std::string> {};

TEST_P(Diagnostics, MatchGolden) {
  const fs::path file = kCorpus / (GetParam() + ".test");
  const GoldenFile golden = golden::ParseGoldenFile(golden::ReadText(file));
  for (const auto& [key, value] : golden.settings) {
    if (key != "base" && key != "environment" && key != "errors") ADD_FAILURE() << "unknown setting: " << key;
  }
  auto expected_errors = golden.settings.find("errors");
  auto [actual, wrote] = Compile(golden);
  if (golden::GoldenUpdateMode()) {
    golden::RewriteExpect(file, golden, actual);
    return;
  }
  EXPECT_FALSE(actual.empty()) << "the project compiled; a golden case must fail";
  EXPECT_FALSE(wrote) << "a failed compile must write nothing";
  EXPECT_EQ(actual, golden.expect);
  if (auto environment = golden.settings.find("environment"); environment != golden.settings.end()) {
    std::string value = environment->second.substr(environment->second.find('=') + 1);
    EXPECT_EQ(actual.find(value), std::string::npos) << "an environment value appears in the diagnostics";
  }
  size_t errors = 0;
  for (size_t at = actual.find("error["); at != std::string::npos; at = actual.find("error[", at + 1)) ++errors;
  EXPECT_EQ(errors, expected_errors == golden.settings.end() ? 1u : std::stoul(expected_errors->second))
      << "one located error per malformed input (`errors: N` when the case has N)";
}

INSTANTIATE_TEST_SUITE_P(Corpus, Diagnostics, ::testing::ValuesIn(golden::CorpusCases(kCorpus)),
                         golden::GoldenTestName);

}  // namespace
}  // namespace sluice
