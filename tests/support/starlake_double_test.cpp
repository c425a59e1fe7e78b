// The Starlake test double does what its header promises: it records argv, SL_* environment and cwd, and follows its
// script (exit codes, delays, not-ready markers for the first calls).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

class StarlakeDouble : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("starlake_double_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int Run(const std::string& args) {
    std::string command = "cd '" + dir_.string() + "' && SL_ROOT=/p SL_ENV=DUCKDB STARLAKE_DOUBLE_LOG='" +
                          (dir_ / "log.jsonl").string() + "' STARLAKE_DOUBLE_SCRIPT='" + (dir_ / "script").string() +
                          "' '" STARLAKE_DOUBLE "' " + args + " > '" + (dir_ / "out").string() + "'";
    int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::vector<nlohmann::json> Log() {
    std::vector<nlohmann::json> lines;
    std::ifstream in(dir_ / "log.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }
  fs::path dir_;
};

TEST_F(StarlakeDouble, RecordsArgvEnvironmentAndWorkingDirectory) {
  std::ofstream(dir_ / "script") << "# nothing special\n";
  EXPECT_EQ(Run("load --scheduledDate '2026-07-18T00:00:00+0000' --domains starbake"), 0);
  std::vector<nlohmann::json> log = Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["argv"], (std::vector<std::string>{"load", "--scheduledDate", "2026-07-18T00:00:00+0000",
                                                      "--domains", "starbake"}));
  EXPECT_EQ(log[0]["env"]["SL_ROOT"], "/p");
  EXPECT_EQ(log[0]["env"]["SL_ENV"], "DUCKDB");
  EXPECT_EQ(fs::path(log[0]["cwd"].get<std::string>()), fs::canonical(dir_));
  EXPECT_EQ(log[0]["call"], 1);
}

TEST_F(StarlakeDouble, FollowsItsScriptPerVerb) {
  std::ofstream(dir_ / "script") << "transform exit=3 stdout=failing on purpose\n* exit=0\n";
  EXPECT_EQ(Run("transform --name kpi.order_summary"), 3);
  EXPECT_EQ(Run("load --domains starbake"), 0);
  std::ifstream out(dir_ / "out");
  std::stringstream text;
  text << out.rdbuf();
  EXPECT_EQ(text.str(), "");  // the last run (load) printed nothing
}

TEST_F(StarlakeDouble, TouchesTheNotReadyMarkerOnTheFirstCallsOnly) {
  std::ofstream(dir_ / "script") << "preload notready=2\n";
  fs::path marker = dir_ / "sentinels" / "starbake" / "job__op__run.notready";
  std::string args = "preload --domain starbake --strategy ack --notReadySentinel \"file://" + marker.string() + "\"";
  EXPECT_EQ(Run(args), 0);
  EXPECT_TRUE(fs::exists(marker));
  fs::remove(marker);
  EXPECT_EQ(Run(args), 0);
  EXPECT_TRUE(fs::exists(marker));
  fs::remove(marker);
  EXPECT_EQ(Run(args), 0);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(Log().back()["call"], 3);
}

}  // namespace
