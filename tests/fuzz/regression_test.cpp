// Replays every saved fuzz input under tests/fuzz/regressions/<target>/ through the same entry function the
// libFuzzer target `fuzz_<target>` calls, in the normal build (no clang, no libFuzzer). An input passes when
// the entry returns (the API succeeded or threw sluice::Error); any other exception fails it. Crashes are
// caught as crashes only by a sanitizer build (the debug preset, or build/fuzz).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <string>
#include <vector>

#include "fuzz_entries.hpp"

namespace sluice::fuzz {
namespace {

using Entry = int (*)(const uint8_t*, size_t);

struct Target {
  const char* name;  // the folder under regressions/ and the executable fuzz_<name>
  Entry entry;
};

void PrintTo(const Target& target, std::ostream* out) { *out << target.name; }

// clang-format off
constexpr Target kTargets[] = {
    {"header", FuzzHeader},
    {"sql_scan", FuzzSqlScan},
    {"select", FuzzSelect},
    {"model", FuzzModel},
    {"toml_config", FuzzTomlConfig},
    {"yaml_sources", FuzzYamlSources},
    {"seed_csv", FuzzSeedCsv},
    {"templating", FuzzTemplating},
    {"macro_arguments", FuzzMacroArguments},
};
// clang-format on

const std::filesystem::path kRegressions = std::filesystem::path(SLUICE_SOURCE_DIR) / "tests" / "fuzz" / "regressions";

// The saved inputs of one target, sorted; dot files (such as .gitkeep) are not inputs.
std::vector<std::filesystem::path> InputsOf(const std::string& target) {
  std::vector<std::filesystem::path> inputs;
  std::filesystem::path folder = kRegressions / target;
  if (!std::filesystem::is_directory(folder)) return inputs;
  for (const auto& item : std::filesystem::directory_iterator(folder)) {
    if (item.is_regular_file() && item.path().filename().string().front() != '.') inputs.push_back(item.path());
  }
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

std::string ReadBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class FuzzRegressionTest : public ::testing::TestWithParam<Target> {};

TEST_P(FuzzRegressionTest, SavedInputsAreAcceptedOrRejectedWithSluiceError) {
  for (const std::filesystem::path& input : InputsOf(GetParam().name)) {
    SCOPED_TRACE(input.string());
    std::string bytes = ReadBytes(input);
    try {
      GetParam().entry(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const std::exception& e) {
      ADD_FAILURE() << "escaped: " << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Targets, FuzzRegressionTest, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& info) { return std::string(info.param.name); });

TEST(FuzzRegressionFolders, EveryFolderNamesATarget) {
  ASSERT_TRUE(std::filesystem::is_directory(kRegressions));
  for (const auto& item : std::filesystem::directory_iterator(kRegressions)) {
    std::string name = item.path().filename().string();
    bool known = std::any_of(std::begin(kTargets), std::end(kTargets),
                             [&name](const Target& target) { return name == target.name; });
    EXPECT_TRUE(known) << "tests/fuzz/regressions/" << name << " is not a fuzz target";
  }
}

TEST(FuzzEntries, EmptyAndTinyInputsAreHandled) {
  const uint8_t bytes[] = {0, 1, 2, 3};
  for (const Target& target : kTargets) {
    SCOPED_TRACE(target.name);
    EXPECT_EQ(target.entry(bytes, 0), 0);
    for (size_t size = 1; size <= sizeof(bytes); ++size) EXPECT_EQ(target.entry(bytes, size), 0);
  }
}

}  // namespace
}  // namespace sluice::fuzz
