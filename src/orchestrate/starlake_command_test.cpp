// Unit tests of the Starlake command lines: each action's argument vector (§2.1), the sl_env_var merge into
// --options (§2.3, definition time) and the shell line of an attempt (§2.3, run time), with the reference's examples.
#include <gtest/gtest.h>

#include "core/diagnostic.hpp"
#include "orchestrate/starlake_command.hpp"

namespace sluice::orchestrate {
namespace {

using Args = std::vector<std::string>;

const StarlakeOptionPairs kEnvironment = ParseSlEnvVar(R"({"SL_ROOT":"/p","SL_ENV":"DUCKDB"})");
const StarlakeAttempt kAttempt{"2026-07-18T00:00:00+0000",
                               "sl_data_interval_start='2026-07-17T00:00:00+0000',"
                               "sl_data_interval_end='2026-07-18T00:00:00+0000'",
                               {}};

TEST(StarlakeCommand, ArgumentVectorsOfEachAction) {
  EXPECT_EQ(StageCommand("starbake", {"orders", "customers"}).arguments,
            (Args{"stage", "--domains", "starbake", "--tables", "orders,customers", "--options",
                  "SL_RUN_MODE=main,SL_LOG_LEVEL=info"}));
  EXPECT_EQ(StageCommand("d", {}, {{"SL_LOG_LEVEL", "debug"}, {"incoming_dir", "/in"}}).arguments,
            (Args{"stage", "--domains", "d", "--tables", "", "--options",
                  "SL_RUN_MODE=main,SL_LOG_LEVEL=debug,incoming_dir=/in"}));
  EXPECT_EQ(PreLoadCommand("d", {"a", "b"}, StarlakePreLoadStrategy::kAck, "/ds/pending/d/2026-07-18.ack",
                           "/s/d/__SL_SENTINEL_SCOPE__.notready")
                .arguments,
            (Args{"preload", "--domain", "d", "--tables", "a,b", "--strategy", "ack", "--options",
                  "SL_RUN_MODE=main,SL_LOG_LEVEL=info", "--globalAckFilePath", "/ds/pending/d/2026-07-18.ack",
                  "--notReadySentinel", "/s/d/__SL_SENTINEL_SCOPE__.notready"}));
  EXPECT_EQ(PreLoadCommand("d", {"a"}, StarlakePreLoadStrategy::kPending, "/ignored", std::nullopt).arguments,
            (Args{"preload", "--domain", "d", "--tables", "a", "--strategy", "pending", "--options",
                  "SL_RUN_MODE=main,SL_LOG_LEVEL=info"}));
  EXPECT_EQ(LoadCommand("starbake", "orders").arguments, (Args{"load", "--domains", "starbake", "--tables", "orders"}));
  EXPECT_EQ(TransformCommand("kpi.x", "", "").arguments, (Args{"transform", "--name", "kpi.x"}));
  EXPECT_EQ(TransformCommand("kpi.x", "a=1,b=2", "c=3").arguments,
            (Args{"transform", "--name", "kpi.x", "--options", "a=1,b=2,c=3"}));
}

TEST(StarlakeCommand, EnvironmentPairsComeFirstAndAreOverlaidByTheCommandsOwn) {
  EXPECT_EQ(WithEnvironmentOptions(LoadCommand("d", "t"), kEnvironment).arguments,
            (Args{"load", "--domains", "d", "--tables", "t", "--options", "SL_ROOT=/p,SL_ENV=DUCKDB"}));
  EXPECT_EQ(WithEnvironmentOptions(LoadCommand("d", "t"), {}).arguments.back(), "");
  EXPECT_EQ(WithEnvironmentOptions(TransformCommand("n", "SL_ENV=BQ,flag,url=a=b", ""), kEnvironment).arguments.back(),
            "SL_ROOT=/p,SL_ENV=BQ,url=a=b,flag");  // a value holding `=` survives
  StarlakeCommand empty{StarlakeVerb::kTransform, {"transform", "--name", "n", "--options", ""}};
  EXPECT_EQ(WithEnvironmentOptions(empty, kEnvironment).arguments.back(), "SL_ROOT=/p,SL_ENV=DUCKDB");
}

TEST(StarlakeCommand, ShellLinesMatchTheReferenceExamples) {
  EXPECT_EQ(ShellCommandLine("starlake", WithEnvironmentOptions(LoadCommand("starbake", "orders"), kEnvironment), kAttempt),
            "starlake load --scheduledDate '2026-07-18T00:00:00+0000' --domains starbake --tables orders --options "
            "\"SL_ROOT=/p,SL_ENV=DUCKDB\"");
  EXPECT_EQ(ShellCommandLine("starlake",
                             WithEnvironmentOptions(PreLoadCommand("starbake", {"customers", "orders"},
                                                                   StarlakePreLoadStrategy::kImported, std::nullopt,
                                                                   std::nullopt),
                                                    kEnvironment),
                             kAttempt),
            "starlake preload --domain starbake --tables customers,orders --strategy imported --options "
            "\"SL_ROOT=/p,SL_ENV=DUCKDB,SL_RUN_MODE=main,SL_LOG_LEVEL=info\"");
  EXPECT_EQ(ShellCommandLine("starlake", WithEnvironmentOptions(TransformCommand("kpi.order_summary", "", ""), kEnvironment),
                             kAttempt),
            "starlake transform --scheduledDate '2026-07-18T00:00:00+0000' --name kpi.order_summary --options "
            "\"SL_ROOT=/p,SL_ENV=DUCKDB,sl_data_interval_start='2026-07-17T00:00:00+0000',"
            "sl_data_interval_end='2026-07-18T00:00:00+0000'\"");
}

TEST(StarlakeCommand, TransformAttemptsAppendNodeOptionsLastAndRetriesAreIdentical) {
  const StarlakeCommand command = WithEnvironmentOptions(TransformCommand("n", "", ""), {});
  StarlakeAttempt attempt{"2026-01-01T00:00:00+0000", "", {{"k", "v"}}};
  const std::string first = ShellCommandLine("/opt/sl.sh", command, attempt);
  EXPECT_EQ(first, "/opt/sl.sh transform --scheduledDate '2026-01-01T00:00:00+0000' --name n --options \"k=v\"");
  EXPECT_EQ(ShellCommandLine("/opt/sl.sh", command, attempt), first);
  const StarlakeCommand stage = WithEnvironmentOptions(StageCommand("d", {"t"}), {});
  EXPECT_EQ(ShellCommandLine("sl", stage, attempt),
            "sl stage --domains d --tables t --options \"SL_RUN_MODE=main,SL_LOG_LEVEL=info\"");
  const StarlakeCommand preload =
      PreLoadCommand("d", {"t"}, StarlakePreLoadStrategy::kImported, std::nullopt, "/s/d/x.notready");
  EXPECT_NE(ShellCommandLine("sl", preload, attempt).find("--notReadySentinel \"/s/d/x.notready\""), std::string::npos);
}

TEST(StarlakeCommand, SlEnvVarMustBeAJsonObject) {
  EXPECT_EQ(ParseSlEnvVar(R"({"B": "1", "A": 2})"), (StarlakeOptionPairs{{"B", "1"}, {"A", "2"}}));
  EXPECT_TRUE(ParseSlEnvVar("").empty());
  try {
    ParseSlEnvVar("[1]");
    ADD_FAILURE() << "no error";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-STARLAKE-007");
  }
}

}  // namespace
}  // namespace sluice::orchestrate
