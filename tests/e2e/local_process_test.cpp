// The local process runs the real Starlake test double with execve: what the double records (argv, cwd, SL_*
// environment), its output streamed line by line, exit codes from its script, a program that cannot start, and a
// cancel that ends a sleeping double quickly.
#include "orchestrate/local_process.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

namespace sluice::orchestrate {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

class LocalProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("local_process_" + std::to_string(std::random_device{}()));
    fs::create_directories(dir_ / "project");
  }
  void TearDown() override { fs::remove_all(dir_); }

  ExecutorInvocation Double(std::vector<std::string> arguments, const std::string& script) {
    std::ofstream(dir_ / "script") << script;
    return ExecutorInvocation{STARLAKE_DOUBLE,
                              std::move(arguments),
                              {{"SL_ROOT", (dir_ / "project").string()},
                               {"SL_ENV", "DUCKDB"},
                               {"STARLAKE_DOUBLE_LOG", (dir_ / "log.jsonl").string()},
                               {"STARLAKE_DOUBLE_SCRIPT", (dir_ / "script").string()}},
                              (dir_ / "project").string()};
  }
  std::vector<nlohmann::json> Log() {
    std::vector<nlohmann::json> lines;
    std::ifstream in(dir_ / "log.jsonl");
    for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
    return lines;
  }
  ProcessOutcome Run(const ExecutorInvocation& invocation, const std::atomic<bool>* cancel = nullptr,
                     std::chrono::milliseconds grace = std::chrono::seconds(10)) {
    return RunLocalProcess(
        invocation, [this](std::string_view line) { lines_.emplace_back(line); }, cancel, grace);
  }

  fs::path dir_;
  std::vector<std::string> lines_;
};

TEST_F(LocalProcess, TheCliReceivesTheVectorUnchangedInSlRootWithTheOverlaidEnvironment) {
  const std::vector<std::string> arguments{
      "load", "--scheduledDate", "2026-07-18T00:00:00+0000", "--options", "X=a b;$(touch pwned) `id` \"q\" 'r'", ""};
  ProcessOutcome outcome = Run(Double(arguments, "load stdout=loaded starbake.orders\n"));
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_FALSE(outcome.signaled);
  EXPECT_FALSE(outcome.canceled);
  std::vector<nlohmann::json> log = Log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["argv"], arguments);
  EXPECT_EQ(fs::path(log[0]["cwd"].get<std::string>()), fs::canonical(dir_ / "project"));
  EXPECT_EQ(log[0]["env"]["SL_ROOT"], (dir_ / "project").string());
  EXPECT_EQ(log[0]["env"]["SL_ENV"], "DUCKDB");
  EXPECT_FALSE(fs::exists(dir_ / "project" / "pwned"));
  EXPECT_EQ(lines_, (std::vector<std::string>{"loaded starbake.orders"}));
}

TEST_F(LocalProcess, ExitCodesFollowTheDoublesScript) {
  EXPECT_EQ(Run(Double({"transform", "--name", "kpi.x"}, "transform exit=3 stdout=failing on purpose\n")).exit_code, 3);
  EXPECT_EQ(lines_, (std::vector<std::string>{"failing on purpose"}));
  EXPECT_EQ(Run(Double({"load"}, "* exit=0\n")).exit_code, 0);
  EXPECT_EQ(Log().size(), 2u);
}

TEST_F(LocalProcess, StdoutAndStderrLinesArriveInOrderWithAFinalPartialLine) {
  ExecutorInvocation invocation{"sh",  // PATH lookup
                                {"-c", "echo one; echo two >&2; echo three; printf 'no newline'"},
                                {},
                                std::nullopt};
  ProcessOutcome outcome = Run(invocation);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(lines_, (std::vector<std::string>{"one", "two", "three", "no newline"}));
}

TEST_F(LocalProcess, LinesAreStreamedWhileTheProcessRuns) {
  ExecutorInvocation invocation{"/bin/sh", {"-c", "echo first; sleep 1; echo second"}, {}, std::nullopt};
  const Clock::time_point start = Clock::now();
  std::vector<std::chrono::milliseconds> arrivals;
  RunLocalProcess(invocation, [&](std::string_view) {
    arrivals.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start));
  });
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_LT(arrivals[0].count(), 700);
  EXPECT_GE(arrivals[1].count(), 900);
}

TEST_F(LocalProcess, AProgramThatCannotStartIs127WithTheReason) {
  ProcessOutcome missing = Run(ExecutorInvocation{(dir_ / "no-such-starlake").string(), {"load"}, {}, std::nullopt});
  EXPECT_EQ(missing.exit_code, 127);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("No such file or directory"), std::string::npos) << lines_[0];
  lines_.clear();
  ProcessOutcome not_in_path = Run(ExecutorInvocation{"sluice-no-such-program", {}, {}, std::nullopt});
  EXPECT_EQ(not_in_path.exit_code, 127);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("sluice-no-such-program"), std::string::npos);
  lines_.clear();
  ExecutorInvocation bad_cwd = Double({"load"}, "");
  bad_cwd.cwd = (dir_ / "missing").string();
  EXPECT_EQ(Run(bad_cwd).exit_code, 127);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_NE(lines_[0].find("working directory"), std::string::npos) << lines_[0];
  EXPECT_TRUE(Log().empty());
}

TEST_F(LocalProcess, CancelEndsASleepingDoubleQuickly) {
  std::atomic<bool> cancel{false};
  std::thread canceler([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    cancel = true;
  });
  const Clock::time_point start = Clock::now();
  ProcessOutcome outcome = Run(Double({"load"}, "load sleep_ms=30000\n"), &cancel);
  canceler.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(outcome.canceled);
  EXPECT_TRUE(outcome.signaled);
  EXPECT_EQ(outcome.signal, SIGTERM);
}

TEST_F(LocalProcess, CancelKillsAGroupThatIgnoresTermAfterTheGrace) {
  std::atomic<bool> cancel{false};
  // Canceled once the shell says its trap is set, so SIGTERM is sure to find it ignoring the signal.
  ExecutorInvocation stubborn{"/bin/sh", {"-c", "trap '' TERM; echo armed; sleep 30"}, {}, std::nullopt};
  Clock::time_point canceled_at;
  ProcessOutcome outcome = RunLocalProcess(
      stubborn,
      [&](std::string_view line) {
        if (line == "armed") {
          canceled_at = Clock::now();
          cancel = true;
        }
      },
      &cancel, std::chrono::milliseconds(300));
  const Clock::duration waited = Clock::now() - canceled_at;
  EXPECT_GE(waited, std::chrono::milliseconds(300));
  EXPECT_LT(waited, std::chrono::seconds(2));
  EXPECT_TRUE(outcome.canceled);
  EXPECT_TRUE(outcome.signaled);
  EXPECT_EQ(outcome.signal, SIGKILL);
}

// Whether `pid` is a live process (a zombie, or no process at all, is not).
bool Alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return false;
  const size_t paren = text.rfind(')');
  return paren != std::string::npos && paren + 2 < text.size() && text[paren + 2] != 'Z';
}

TEST_F(LocalProcess, TheChildDiesWithTheCaller) {
  const fs::path pid_file = dir_ / "pid";
  const pid_t caller = ::fork();
  ASSERT_GE(caller, 0);
  if (caller == 0) {
    ExecutorInvocation sleeper{"/bin/sh", {"-c", "echo $$ > '" + pid_file.string() + "'; exec sleep 30"}, {}, {}};
    RunLocalProcess(sleeper, nullptr);
    ::_exit(0);
  }
  pid_t sleeper = 0;
  for (int i = 0; i < 200 && sleeper == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::ifstream(pid_file) >> sleeper;
  }
  ASSERT_GT(sleeper, 0);
  ASSERT_TRUE(Alive(sleeper));
  ::kill(caller, SIGKILL);
  ::waitpid(caller, nullptr, 0);
  bool gone = false;
  for (int i = 0; i < 200 && !gone; ++i) {
    gone = !Alive(sleeper);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone);
  if (!gone) ::kill(sleeper, SIGKILL);
}

TEST_F(LocalProcess, AnExceptionFromTheLineCallbackKillsTheChild) {
  const fs::path pid_file = dir_ / "pid";
  ExecutorInvocation sleeper{
      "/bin/sh", {"-c", "echo $$ > '" + pid_file.string() + "'; echo go; exec sleep 30"}, {}, {}};
  EXPECT_THROW(RunLocalProcess(sleeper, [](std::string_view) { throw std::runtime_error("stop"); }),
               std::runtime_error);
  pid_t pid = 0;
  std::ifstream(pid_file) >> pid;
  ASSERT_GT(pid, 0);
  EXPECT_FALSE(Alive(pid));
}

}  // namespace
}  // namespace sluice::orchestrate
