// The CLI's rules that need no process: when to colour, integer flag values, which errors are usage errors.
#include <gtest/gtest.h>

#include <climits>
#include <functional>

#include "cli/color_choice.hpp"
#include "cli/usage_error.hpp"

namespace sluice::cli {
namespace {

TEST(ColorChoice, OnlyATerminalWithNoColorUnsetOrEmptyGetsColour) {
  EXPECT_TRUE(ColorWanted(true, nullptr));
  EXPECT_TRUE(ColorWanted(true, ""));
  for (const char* set : {"1", "0", "false", "no", " "}) EXPECT_FALSE(ColorWanted(true, set)) << set;
  EXPECT_FALSE(ColorWanted(false, nullptr));
  EXPECT_FALSE(ColorWanted(false, ""));
}

TEST(ColorChoice, AFileIsNeverColoured) {
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ::unsetenv("NO_COLOR");
  EXPECT_EQ(StyleFor(::fileno(file)), TextStyle::kPlain);
  std::fclose(file);
}

// The message of the UsageError `f` throws, or "no error".
std::string UsageMessage(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& error) {
    return error.diagnostics().front().code + " " + error.diagnostics().front().message;
  }
  return "no error";
}

TEST(IntegerFlag, ReadsWholeNumbersInRange) {
  EXPECT_EQ(ParseIntegerFlag("--threads", "0", 0, INT_MAX), 0);
  EXPECT_EQ(ParseIntegerFlag("--threads", "2147483647", 0, INT_MAX), INT_MAX);
  EXPECT_EQ(ParseIntegerFlag("--port", "-5", -10, 10), -5);
  EXPECT_EQ(ParseIntegerFlag("--port", "007", 1, 65535), 7);
}

TEST(IntegerFlag, SaysNotANumberForAnythingElse) {
  for (const char* text : {"abc", "", "-", "1.5", "1e3", "0x10", " 4", "4 ", "+4", "4k", "--4"}) {
    EXPECT_EQ(UsageMessage([&] { ParseIntegerFlag("--threads", text, 0, INT_MAX); }),
              std::string("SLU-CLI-003 `--threads`: `") + text + "` is not a number")
        << text;
  }
}

TEST(IntegerFlag, SaysOutOfRangeWithTheRangeForANumberOutsideIt) {
  EXPECT_EQ(UsageMessage([] { ParseIntegerFlag("--limit", "0", 1, INT_MAX); }),
            "SLU-CLI-003 `--limit`: `0` is out of range (1 to 2147483647)");
  EXPECT_EQ(UsageMessage([] { ParseIntegerFlag("--port", "65536", 1, 65535); }),
            "SLU-CLI-003 `--port`: `65536` is out of range (1 to 65535)");
  EXPECT_EQ(UsageMessage([] { ParseIntegerFlag("--threads", "2147483648", 0, INT_MAX); }),
            "SLU-CLI-003 `--threads`: `2147483648` is out of range (0 to 2147483647)");
  EXPECT_EQ(UsageMessage([] { ParseIntegerFlag("--threads", "-1", 0, INT_MAX); }),
            "SLU-CLI-003 `--threads`: `-1` is out of range (0 to 2147483647)");
  // Any number of digits: shown cut, still "out of range", never "not a number".
  EXPECT_EQ(
      UsageMessage([] { ParseIntegerFlag("--threads", std::string(300, '9'), 0, INT_MAX); }),
      "SLU-CLI-003 `--threads`: `" + std::string(24, '9') + "… (300 characters)` is out of range (0 to 2147483647)");
}

TEST(DecimalFlag, ReadsPlainDecimalsAndRejectsTheRest) {
  EXPECT_EQ(ParseDecimalFlag("--wait-timeout", "1.5", 0, INT_MAX), 1.5);
  EXPECT_EQ(ParseDecimalFlag("--wait-timeout", "0", 0, INT_MAX), 0.0);
  EXPECT_EQ(ParseDecimalFlag("--wait-timeout", "30", 0, INT_MAX), 30.0);
  for (const char* text : {"", ".", "1.", ".5", "1e3", "inf", "nan", "1,5", "1.2.3", "0x1p3", "ten"}) {
    EXPECT_EQ(UsageMessage([&] { ParseDecimalFlag("--wait-timeout", text, 0, INT_MAX); }),
              std::string("SLU-CLI-003 `--wait-timeout`: `") + text + "` is not a number")
        << text;
  }
  EXPECT_EQ(UsageMessage([] { ParseDecimalFlag("--wait-timeout", "-0.5", 0, INT_MAX); }),
            "SLU-CLI-003 `--wait-timeout`: `-0.5` is out of range (0 to 2147483647)");
  EXPECT_EQ(UsageMessage([] { ParseDecimalFlag("--wait-timeout", std::string(400, '9'), 0, INT_MAX); }),
            "SLU-CLI-003 `--wait-timeout`: `" + std::string(24, '9') +
                "… (400 characters)` is out of range (0 to 2147483647)");
}

TEST(UnknownCommand, NamesTheWordAndListsTheCommands) {
  Diagnostic d = UnknownCommand("frobnicate", {"run", "status"}).diagnostics().front();
  EXPECT_EQ(d.code, "SLU-CLI-002");
  EXPECT_EQ(d.message, "unknown command `frobnicate`");
  EXPECT_EQ(d.hint, "the commands are run, status; `sluice --help` describes them");
  EXPECT_EQ(UnknownCommand("", {"run"}).diagnostics().front().message, "no command given");
}

TEST(UsageErrors, SelectionAndPartitionKeyErrorsAreAboutTheArguments) {
  auto error = [](const std::string& code) { return Error(Diagnostic{code, "m", {}, "", {}}); };
  for (const char* code : {"SLU-SELECT-001", "SLU-SELECT-002", "SLU-PARTITION-001", "SLU-PARTITION-002",
                           "SLU-PARTITION-003", "SLU-PARTITION-005"}) {
    EXPECT_TRUE(IsAboutArguments(error(code))) << code;
  }
  for (const char* code : {"SLU-PARTITION-004", "SLU-CONFIG-001", "SLU-WAREHOUSE-001"}) {
    EXPECT_FALSE(IsAboutArguments(error(code))) << code;
  }
  EXPECT_FALSE(IsAboutArguments(Error(std::vector<Diagnostic>{Diagnostic{"SLU-SELECT-001", "m", {}, "", {}},
                                                              Diagnostic{"SLU-CONFIG-001", "m", {}, "", {}}})));
  EXPECT_THROW(CheckingArguments([&]() -> int { throw error("SLU-SELECT-001"); }), service::RequestError);
  try {
    CheckingArguments([&]() -> int { throw error("SLU-PARTITION-004"); });
    FAIL() << "expected an error";
  } catch (const UsageError&) {
    FAIL() << "SLU-PARTITION-004 is the project's";
  } catch (const Error& e) {
    EXPECT_EQ(e.diagnostics().front().code, "SLU-PARTITION-004");
  }
}

}  // namespace
}  // namespace sluice::cli
