// End-to-end tests of the CLI's conventions on the `shop` fixture: usage errors (exit 2) say what was typed
// wrong, dates that select nothing are warned about, hints name settings that exist, colour only on a terminal.
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "e2e/sluice_process.hpp"

namespace sluice::testing {
namespace {

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `args` must fail as a usage error (exit 2) whose stderr says `message`.
void ExpectUsageError(const ScratchProject& project, const std::vector<std::string>& args, const std::string& message) {
  ProcessResult result = project.Run(args);
  std::string typed;
  for (const std::string& arg : args) typed += " " + arg;
  EXPECT_EQ(result.exit_code, 2) << typed << "\n" << result.out << result.err;
  EXPECT_TRUE(Has(result.err, message)) << typed << "\nexpected: " << message << "\ngot: " << result.err;
}

TEST(CliConventionsE2E, AnUnknownCommandIsNamedAndTheCommandsListed) {
  ScratchProject project("shop");
  ExpectUsageError(project, {"frobnicate"}, "error[SLU-CLI-002]: unknown command `frobnicate`");
  ExpectUsageError(project, {"frobnicate"},
                   "the commands are discover, compile, run, plan, build, clean, status, runs, backfills, logs, test, audit");
  ExpectUsageError(project, {"--target", "test", "frobnicate", "--json"}, "unknown command `frobnicate`");
  ExpectUsageError(project, {}, "error[SLU-CLI-002]: no command given");
}

TEST(CliConventionsE2E, ABadNumberSaysNotANumberOrOutOfRange) {
  ScratchProject project("shop");
  const std::string huge(300, '9');
  ExpectUsageError(project, {"run", "--threads", "abc"}, "`--threads`: `abc` is not a number");
  ExpectUsageError(project, {"run", "--threads", "2.5"}, "`--threads`: `2.5` is not a number");
  ExpectUsageError(project, {"run", "--threads", huge}, "is out of range (0 to 2147483647)");
  ExpectUsageError(project, {"run", "--threads", "-1"}, "`--threads`: `-1` is out of range (0 to 2147483647)");
  ExpectUsageError(project, {"runs", "--limit", "ten"}, "`--limit`: `ten` is not a number");
  ExpectUsageError(project, {"runs", "--limit", "0"}, "`--limit`: `0` is out of range (1 to 2147483647)");
  ExpectUsageError(project, {"runs", "--limit", huge}, "is out of range (1 to 2147483647)");
  ExpectUsageError(project, {"run", "--wait-timeout", "soon"}, "`--wait-timeout`: `soon` is not a number");
  ExpectUsageError(project, {"run", "--wait-timeout", "1e999"}, "`--wait-timeout`: `1e999` is not a number");
  ExpectUsageError(project, {"run", "--wait-timeout", huge}, "is out of range (0 to 2147483647)");
  ExpectUsageError(project, {"run", "--wait-timeout", "-1"}, "`--wait-timeout`: `-1` is out of range");
  ExpectUsageError(project, {"--port", "http", "status"}, "`--port`: `http` is not a number");
  ExpectUsageError(project, {"--port", "65536", "status"}, "`--port`: `65536` is out of range (1 to 65535)");
  // The values still work.
  EXPECT_EQ(project.Run({"runs", "--limit", "3"}).exit_code, 0);
  EXPECT_EQ(project.Run({"run", "--select", "users", "--threads", "2", "--wait-timeout", "0.5"}).exit_code, 0);
}

TEST(CliConventionsE2E, BadDatesAndSelectionsAreUsageErrors) {
  ScratchProject project("shop");
  ExpectUsageError(project, {"run", "--partition", "2026-02-30"}, "error[SLU-PARTITION-001]");
  ExpectUsageError(project, {"run", "--partition", "20260301"}, "partition key '20260301' is not a date");
  ExpectUsageError(project, {"run", "--partition", ""}, "partition key '' is not a date");
  ExpectUsageError(project, {"run", "--from", "2026-02-30", "--to", "2026-03-02"}, "error[SLU-PARTITION-001]");
  ExpectUsageError(project, {"run", "--from", "2026-03-01", "--to", "March 2"}, "error[SLU-PARTITION-001]");
  ExpectUsageError(project, {"run", "--from", "2026-03-05", "--to", "2026-03-01"}, "error[SLU-PARTITION-005]");
  // Checked even when nothing partitioned is selected, and before the project is read.
  ExpectUsageError(project, {"run", "--select", "users", "--partition", "2026-02-30"}, "error[SLU-PARTITION-001]");
  project.Write("streambuild_project.toml", "name = \"shop\"\nbroken = [\n");
  ExpectUsageError(project, {"run", "--from", "2026-03-05", "--to", "2026-03-01"}, "error[SLU-PARTITION-005]");
}

TEST(CliConventionsE2E, KeysAndNamesTheProjectDoesNotHaveAreUsageErrors) {
  ScratchProject project("shop");
  ExpectUsageError(project, {"run", "--select", "nope"}, "error[SLU-SELECT-001]");
  ExpectUsageError(project, {"run", "--select", "tag:x"}, "error[SLU-SELECT-002]");
  ExpectUsageError(project, {"run", "--partition", "2020-01-01"}, "error[SLU-PARTITION-002]");
  ExpectUsageError(project, {"run", "--partition", "2999-01-01"}, "error[SLU-PARTITION-003]");
  ExpectUsageError(project, {"logs", "20990101T000000Z_00000000"}, "error[SLU-CLI-001]");
  // A project that does not load is a failure, not a usage error.
  project.Write("streambuild_project.toml", "name = \"shop\"\nbroken = [\n");
  EXPECT_EQ(project.Run({"run"}).exit_code, 1);
}

TEST(CliConventionsE2E, VarsThatAreNotOneJsonObjectAreAUsageErrorLocatedInTheJson) {
  ScratchProject project("shop");
  ExpectUsageError(project, {"--vars", "{\"region\": eu}", "compile"},
                   "--vars:1:12: error[SLU-CONFIG-008]: --vars is not valid JSON: syntax error while parsing value");
  ExpectUsageError(project, {"--vars", "{\"a\": 1,\n \"secret\": \"hunter2\"", "compile"}, "--vars:2:21: error[SLU-CONFIG-008]");
  ExpectUsageError(project, {"--vars", " [1, 2]", "run"}, "--vars:1:2: error[SLU-CONFIG-008]: --vars must be one JSON object, not array");
  // The text is not shown: it may hold a secret.
  ProcessResult secret = project.Run({"--vars", "{\"token\": \"hunter2\"", "compile"});
  EXPECT_EQ(secret.exit_code, 2);
  EXPECT_FALSE(Has(secret.err, "hunter2")) << secret.err;
  // Refused before the project is read, so a broken project does not hide it.
  project.Write("streambuild_project.toml", "name = \"shop\"\nbroken = [\n");
  ExpectUsageError(project, {"--vars", "{", "compile"}, "error[SLU-CONFIG-008]");
  EXPECT_FALSE(std::filesystem::exists(project.root() / "target"));
}

TEST(CliConventionsE2E, AnEmptySelectionIsAUsageErrorNotEverything) {
  ScratchProject project("shop");
  ExpectUsageError(project, {"run", "--select", ""}, "error[SLU-SELECT-002]: --select \"\": no name given");
  ExpectUsageError(project, {"run", "--select", "  "}, "error[SLU-SELECT-002]");
  ExpectUsageError(project, {"run", "--select", "users", "--select", ""}, "error[SLU-SELECT-002]");
  EXPECT_FALSE(std::filesystem::exists(project.root() / "warehouse.duckdb"));  // nothing ran
}

TEST(CliConventionsE2E, DatesWithNothingPartitionedSelectedAreWarnedAboutAndTheRunProceeds) {
  ScratchProject project("shop");
  ProcessResult one = project.Run({"run", "--select", "users", "--partition", "2026-03-01"});
  EXPECT_EQ(one.exit_code, 0) << one.out << one.err;
  EXPECT_TRUE(Has(one.err, "warning: --partition is ignored: no selected asset is partitioned")) << one.err;
  EXPECT_TRUE(Has(one.out, "OK        raw.users")) << one.out;
  ProcessResult range = project.Run({"run", "--select", "people", "--from", "2026-03-01", "--to", "2026-03-02"});
  EXPECT_EQ(range.exit_code, 0) << range.out << range.err;
  EXPECT_TRUE(Has(range.err, "warning: --from and --to are ignored: no selected asset is partitioned")) << range.err;
  ProcessResult partitioned = project.Run({"run", "--select", "+daily_totals", "--partition", "2026-03-01"});
  EXPECT_EQ(partitioned.exit_code, 0) << partitioned.out << partitioned.err;
  EXPECT_FALSE(Has(partitioned.err, "warning")) << partitioned.err;
}

TEST(CliConventionsE2E, TheUnsupportedAdapterHintNamesTheAdapterSettingWhereItIsRead) {
  ScratchProject project("shop");
  std::string config = project.Read("streambuild_project.toml");
  const std::string duckdb_line = "adapter = \"duckdb\"\n";
  ASSERT_TRUE(Has(config, duckdb_line));
  // An adapter no build supports; the list of those this build supports grows with its backends.
  std::string oracle = config;
  oracle.replace(oracle.find(duckdb_line), duckdb_line.size(), "adapter = \"oracle\"\n");
  project.Write("streambuild_project.toml", oracle);
  ProcessResult run = project.Run({"run", "--select", "users"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Has(run.err, "error[SLU-WAREHOUSE-001]: unknown adapter \"oracle\"")) << run.err;
  EXPECT_TRUE(Has(run.err, "hint: this build supports: ")) << run.err;
  EXPECT_TRUE(Has(run.err,
                  "hint: this build supports: bigquery, clickhouse, duckdb, postgres; set adapter = \"duckdb\" at the "
                  "top of streambuild_project.toml (or of streambuild_local.toml, which overrides it)"))
      << run.err;
  // Following the hint works: the key at the top of either file.
  project.Write("streambuild_local.toml", duckdb_line);
  EXPECT_EQ(project.Run({"run", "--select", "users"}).exit_code, 0);
  project.Remove("streambuild_local.toml");
  project.Write("streambuild_project.toml", config);
  EXPECT_EQ(project.Run({"run", "--select", "users"}).exit_code, 0);
  // A target has no such setting, which is why the hint does not say "in the target".
  project.Write("streambuild_project.toml", config + "\n[targets.other]\nadapter = \"duckdb\"\n");
  ProcessResult in_target = project.Run({"compile"});
  EXPECT_EQ(in_target.exit_code, 1);
  EXPECT_TRUE(Has(in_target.err, "unknown key 'targets.other.adapter'")) << in_target.err;
}

TEST(CliConventionsE2E, TheKafkaSourceHintNamesTheAdapterSetting) {
  ScratchProject project("shop");
  project.Write("sources/stream.yml", R"(sources:
  - kind: kafka
    name: clicks
    topic: source.clicks
    broker_list: localhost:9092
    replay_boundary:
      mode: offsets
)");
  ProcessResult run = project.Run({"run", "--select", "clicks"});
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_TRUE(Has(run.out, "error[SLU-RUN-004]")) << run.out;
  EXPECT_TRUE(Has(run.out,
                  "hint: managed Kafka and Postgres sources need adapter = \"clickhouse\" (at the top "
                  "of streambuild_project.toml)"))
      << run.out;
}

// Runs sluice on a pseudo-terminal (stdout and stderr both), with NO_COLOR unset or set to `no_color`.
ProcessResult RunOnTerminal(const ScratchProject& project, const std::vector<std::string>& args,
                            std::optional<std::string> no_color) {
  std::vector<std::string> argv{SluiceBinary(), "--project-dir", project.root().string()};
  argv.insert(argv.end(), args.begin(), args.end());
  int terminal = -1;
  pid_t pid = ::forkpty(&terminal, nullptr, nullptr, nullptr);
  if (pid == 0) {
    if (no_color) {
      ::setenv("NO_COLOR", no_color->c_str(), 1);
    } else {
      ::unsetenv("NO_COLOR");
    }
    std::vector<char*> pointers;
    for (std::string& arg : argv) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    ::execv(pointers[0], pointers.data());
    ::_exit(127);
  }
  ProcessResult result;
  if (pid < 0) return result;
  char buffer[4096];
  while (true) {
    ssize_t n = ::read(terminal, buffer, sizeof buffer);
    if (n > 0) {
      result.out.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has exited and closed its side
    }
  }
  ::close(terminal);
  result.exit_code = WaitFor(pid);
  return result;
}

TEST(CliConventionsE2E, ColourOnlyOnATerminalAndNeverWithNoColor) {
  ScratchProject project("shop");
  const std::vector<std::string> failing{"run", "--select", "nope"};
  const std::vector<std::string> warning{"run", "--select", "users", "--partition", "2026-03-01"};
  // Through files (as through a pipe): no escape codes anywhere.
  for (const auto& args : {failing, warning}) {
    ProcessResult piped = project.Run(args);
    EXPECT_FALSE(Has(piped.out + piped.err, "\x1b")) << piped.out << piped.err;
  }
  ProcessResult coloured = RunOnTerminal(project, failing, std::nullopt);
  EXPECT_EQ(coloured.exit_code, 2) << coloured.out;
  EXPECT_TRUE(Has(coloured.out, "\x1b[1;31merror[SLU-SELECT-001]\x1b[0m: --select nope")) << coloured.out;
  EXPECT_TRUE(Has(RunOnTerminal(project, warning, std::nullopt).out, "\x1b[1;33mwarning\x1b[0m: --partition"));
  EXPECT_TRUE(Has(RunOnTerminal(project, failing, "").out, "\x1b[1;31m"));  // empty NO_COLOR: colour stays on
  for (const char* value : {"1", "0", "false"}) {
    ProcessResult plain = RunOnTerminal(project, failing, std::string(value));
    EXPECT_EQ(plain.exit_code, 2);
    EXPECT_TRUE(Has(plain.out, "error[SLU-SELECT-001]: --select nope")) << value << plain.out;
    EXPECT_FALSE(Has(plain.out, "\x1b")) << value << plain.out;
  }
}

TEST(CliConventionsE2E, HelpStatesTheExitCodesAndTheColourRule) {
  ScratchProject project("shop");
  ProcessResult help = project.Run({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_TRUE(Has(help.out, "Exit codes: 0 success; 1 failure")) << help.out;
  EXPECT_TRUE(Has(help.out, "2 usage error")) << help.out;
  EXPECT_TRUE(Has(help.out, "130 canceled by a signal")) << help.out;
  EXPECT_TRUE(Has(help.out, "NO_COLOR")) << help.out;
}

}  // namespace
}  // namespace sluice::testing
