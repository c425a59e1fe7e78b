#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/asset_key.hpp"
#include "core/clock.hpp"
#include "core/closest_name.hpp"
#include "core/daily_partitions.hpp"
#include "sluice/date.hpp"
#include "core/diagnostic.hpp"
#include "core/environment.hpp"
#include "core/file_system.hpp"
#include "core/parallel_for.hpp"
#include "core/sha256.hpp"
#include "core/text.hpp"
#include "core/utf8.hpp"

namespace sluice {
namespace {

// A fresh folder under the system temp folder for one test, removed when the test ends (passed or not).
struct ScratchFolder {
  explicit ScratchFolder(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~ScratchFolder() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

// The first diagnostic f throws; code "no error" when it throws none.
Diagnostic DiagnosticOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.diagnostics().front();
  }
  return Diagnostic{"no error", "", {}, "", {}};
}

std::string CodeOf(const std::function<void()>& f) { return DiagnosticOf(f).code; }

// f fails to read: SLU-IO-001 located at `file`, the message giving `reason`.
void ExpectReadError(const std::function<void()>& f, const std::filesystem::path& file, const std::string& reason) {
  const Diagnostic d = DiagnosticOf(f);
  EXPECT_EQ(d.code, "SLU-IO-001");
  EXPECT_EQ(d.location.file, file.string());
  EXPECT_NE(d.message.find(reason), std::string::npos) << d.message;
}

TEST(AssetKey, OnePartUsesDefaultNamespace) {
  AssetKey key = AssetKey::FromParts({"orders"});
  EXPECT_EQ(key.name_space(), "main");
  EXPECT_EQ(key.name(), "orders");
  EXPECT_EQ(AssetKey::Parse("gold.revenue").ToString(), "gold.revenue");
  EXPECT_EQ(AssetKey::Parse("x", "silver").ToString(), "silver.x");
}

TEST(AssetKey, RejectsOtherShapes) {
  EXPECT_EQ(CodeOf([] { AssetKey::FromParts({}); }), "SLU-CORE-001");
  EXPECT_EQ(CodeOf([] { AssetKey::FromParts({"a", "b", "c"}); }), "SLU-CORE-001");
  EXPECT_EQ(CodeOf([] { AssetKey::Parse("1abc"); }), "SLU-CORE-001");
  EXPECT_EQ(CodeOf([] { AssetKey::Parse("a.b-c"); }), "SLU-CORE-001");
  EXPECT_EQ(CodeOf([] { AssetKey::Parse("a..b"); }), "SLU-CORE-001");
  EXPECT_EQ(CodeOf([] { AssetKey::Parse(""); }), "SLU-CORE-001");
}

TEST(Date, ParsesAndFormatsRealDays) {
  EXPECT_EQ(Date::Parse("1970-01-01")->days_since_epoch(), 0);
  EXPECT_EQ(Date::Parse("2024-02-29")->ToString(), "2024-02-29");
  EXPECT_FALSE(Date::Parse("2023-02-29"));
  EXPECT_FALSE(Date::Parse("2026-13-01"));
  EXPECT_FALSE(Date::Parse("2026-1-01"));
  EXPECT_FALSE(Date::Parse("2026-01-01x"));
  EXPECT_EQ(Date::Parse("2026-12-31")->AddDays(1).ToString(), "2027-01-01");
  EXPECT_EQ(Date::Parse("1969-12-31")->days_since_epoch(), -1);
}

TEST(DateWindow, IsHalfOpen) {
  DateWindow w{*Date::Parse("2026-01-01"), *Date::Parse("2026-01-03")};
  EXPECT_TRUE(w.contains(*Date::Parse("2026-01-02")));
  EXPECT_FALSE(w.contains(*Date::Parse("2026-01-03")));
  EXPECT_EQ(w.days(), 2);
  EXPECT_TRUE((DateWindow{w.end, w.start}).empty());
}

TEST(DailyPartitions, KeyRangeIsOneInclusiveWindow) {
  DailyPartitions partitions(*Date::Parse("2026-01-01"));
  Date today = *Date::Parse("2026-02-01");
  DateWindow w = partitions.WindowForRange("2026-01-05", "2026-01-07", today);
  EXPECT_EQ(w.start.ToString(), "2026-01-05");
  EXPECT_EQ(w.end.ToString(), "2026-01-08");
  EXPECT_EQ(partitions.LastComplete(today).ToString(), "2026-01-31");
  EXPECT_EQ(partitions.AllKeys(today).size(), 31u);
}

TEST(DailyPartitions, ValidatesKeys) {
  DailyPartitions partitions(*Date::Parse("2026-01-01"));
  Date today = *Date::Parse("2026-02-01");
  EXPECT_EQ(CodeOf([&] { partitions.ValidateKey("yesterday", today); }), "SLU-PARTITION-001");
  EXPECT_EQ(CodeOf([&] { partitions.ValidateKey("2025-12-31", today); }), "SLU-PARTITION-002");
  EXPECT_EQ(CodeOf([&] { partitions.ValidateKey("2026-02-01", today); }), "SLU-PARTITION-003");
  EXPECT_EQ(CodeOf([&] { partitions.WindowForRange("2026-01-09", "2026-01-02", today); }), "SLU-PARTITION-005");
  EXPECT_EQ(CodeOf([&] { partitions.LastComplete(*Date::Parse("2026-01-01")); }), "SLU-PARTITION-004");
}

TEST(DailyPartitions, KeyRangesAreCheckedForFormAndOrderWithoutADefinition) {
  EXPECT_EQ(KeyRangeWindow("2026-01-05", "2026-01-07"),
            (DateWindow{*Date::Parse("2026-01-05"), *Date::Parse("2026-01-08")}));
  EXPECT_EQ(ParsePartitionKey("2026-02-28").ToString(), "2026-02-28");
  EXPECT_EQ(CodeOf([] { ParsePartitionKey("2026-02-30"); }), "SLU-PARTITION-001");
  EXPECT_EQ(CodeOf([] { KeyRangeWindow("2026-01-05", "2026-1-7"); }), "SLU-PARTITION-001");
  EXPECT_EQ(CodeOf([] { KeyRangeWindow("2026-01-05", "2026-01-04"); }), "SLU-PARTITION-005");
}

TEST(Diagnostic, RendersLocationCaretAndHint) {
  std::string text = "a = 1\nb = oops\n";
  Diagnostic d = MakeDiagnostic("SLU-X-001", "bad value", LocationAt("p.toml", text, 10), "fix it", text);
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 5);
  EXPECT_EQ(FormatDiagnostic(d),
            "p.toml:2:5: error[SLU-X-001]: bad value\n 2 | b = oops\n   |     ^\n  hint: fix it\n");
}

TEST(Diagnostic, ColorStyleColorsOnlyTheLabel) {
  Diagnostic d{"SLU-X-001", "bad value", {"p.toml", 2, 5}, "fix it", ""};
  EXPECT_EQ(FormatDiagnostic(d, TextStyle::kColor),
            "p.toml:2:5: \x1b[1;31merror[SLU-X-001]\x1b[0m: bad value\n  hint: fix it\n");
  EXPECT_EQ(FormatDiagnostic(d, TextStyle::kPlain), FormatDiagnostic(d));
  EXPECT_EQ(FormatDiagnostic(d).find('\x1b'), std::string::npos);
  EXPECT_EQ(FormatWarning("dates \x1b ignored"), "warning: dates ? ignored\n");
  EXPECT_EQ(FormatWarning("ignored", TextStyle::kColor), "\x1b[1;33mwarning\x1b[0m: ignored\n");
}

TEST(Diagnostic, ALongLineIsShownAsAWindowAroundTheColumn) {
  std::string text = "SELECT '" + std::string(10'000'000, 'x') + "' AS s, oops\n";
  Diagnostic d = MakeDiagnostic("SLU-X-001", "bad", LocationAt("m.sql", text, text.find("oops")), "", text);
  EXPECT_EQ(d.location.column, 10'000'017);
  std::string rendered = FormatDiagnostic(d);
  EXPECT_LT(rendered.size(), 500u) << rendered.substr(0, 500);
  EXPECT_NE(rendered.find(" 1 | …" + std::string(52, 'x') + "' AS s, oops\n   |  " + std::string(60, ' ') + "^\n"),
            std::string::npos)
      << rendered;
  Diagnostic start = MakeDiagnostic("SLU-X-001", "bad", LocationAt("m.sql", text, 0), "", text);
  EXPECT_NE(FormatDiagnostic(start).find(" 1 | SELECT 'xxx"), std::string::npos);
  EXPECT_NE(FormatDiagnostic(start).find("x…\n   | ^\n"), std::string::npos) << FormatDiagnostic(start);
}

TEST(Diagnostic, ControlBytesAndInvalidUtf8AreShownAsQuestionMarks) {
  std::string text = std::string("a\0b\x1b[31m\xff\xc3\xa9 \xe2\x82 ok\n", 18);
  Diagnostic d = MakeDiagnostic("SLU-X-001", "unexpected `\x1b`\nsecond line", LocationAt("m.sql", text, 16), "", text);
  EXPECT_EQ(FormatDiagnostic(d),
            "m.sql:1:17: error[SLU-X-001]: unexpected `?`\nsecond line\n"
            " 1 | a?b?[31m?\xc3\xa9 ?? ok\n   |                ^\n");
}

TEST(Utf8, FindsTheFirstByteThatStartsNoWellFormedSequence) {
  EXPECT_EQ(FindInvalidUtf8(""), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("plain ASCII text, longer than eight bytes"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(FindInvalidUtf8("0123456789\xff"), 10u);    // after an ASCII run read eight at a time
  EXPECT_EQ(FindInvalidUtf8("ab\x80"), 2u);             // a stray continuation byte
  EXPECT_EQ(FindInvalidUtf8("\xc0\xaf"), 0u);           // an overlong '/'
  EXPECT_EQ(FindInvalidUtf8("x\xed\xa0\x80"), 1u);      // a surrogate
  EXPECT_EQ(FindInvalidUtf8("x\xf4\x90\x80\x80"), 1u);  // past U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("abc\xe2\x82"), 3u);        // cut short at the end
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac", 0), 3u);
  EXPECT_EQ(Utf8SequenceLength("a", 1), 0u);
}

TEST(Diagnostic, SortByLocationOrdersByFileLineAndColumnKeepingTies) {
  auto at = [](std::string code, std::string file, int line, int column) {
    return Diagnostic{std::move(code), "", {std::move(file), line, column}, "", ""};
  };
  std::vector<Diagnostic> diagnostics = {at("d", "b.sql", 2, 1), at("c", "b.sql", 1, 9), at("a", "a.yml", 3, 3),
                                         at("e", "b.sql", 2, 1), at("b", "a.yml/", 0, 0)};
  SortByLocation(diagnostics);
  std::string order;
  for (const Diagnostic& diagnostic : diagnostics) order += diagnostic.code;
  EXPECT_EQ(order, "abcde");
}

// LocationCounter gives what LocationAt gives, for offsets in any order (increasing ones counted on).
TEST(Diagnostic, LocationCounterAgreesWithLocationAt) {
  std::string text = "a\nbc\n\ndef\ng";
  LocationCounter counter("m.sql", text);
  for (size_t offset : {0, 1, 2, 4, 5, 6, 7, 9, 12, 3, 0, 13, 99}) {
    SourceLocation expected = LocationAt("m.sql", text, offset);
    const SourceLocation& got = counter.At(offset);
    EXPECT_EQ(got.file, "m.sql");
    EXPECT_EQ(got.line, expected.line) << "offset " << offset;
    EXPECT_EQ(got.column, expected.column) << "offset " << offset;
  }
  EXPECT_EQ(LocationAt("m.sql", text, 6).line, 4);
  EXPECT_EQ(LocationAt("m.sql", text, 6).column, 1);
  EXPECT_EQ(LocationAt("m.sql", text, 10).column, 1);
}

TEST(Clock, FixedClockGivesUtcDayAndText) {
  FixedClock clock(std::chrono::system_clock::time_point(std::chrono::seconds(86400 * 3 + 3661)));
  EXPECT_EQ(clock.TodayUtc().ToString(), "1970-01-04");
  EXPECT_EQ(FormatUtc(clock.Now()), "1970-01-04T01:01:01.000Z");
}

TEST(Clock, ParseUtcReadsWhatFormatUtcWrites) {
  auto time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1796000000123));
  EXPECT_EQ(ParseUtc(FormatUtc(time)), time);
  EXPECT_EQ(ParseUtc("1970-01-04T01:01:01Z"), std::chrono::system_clock::time_point(std::chrono::seconds(262861)));
  for (const char* bad : {"", "2026-12-02", "2026-12-02T16:27:25.123", "2026-02-30T00:00:00Z", "2026-12-02T25:00:00Z",
                          "2026-12-02T16:27:25.1Z", "2026-12-02 16:27:25Z"}) {
    EXPECT_FALSE(ParseUtc(bad)) << bad;
  }
}

TEST(Sha256, PiecesHashAsTheWhole) {
  const std::string whole = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  for (size_t step : {size_t{1}, size_t{7}, size_t{64}}) {
    Sha256Hasher hasher;
    for (size_t at = 0; at < whole.size(); at += step) hasher.Add(std::string_view(whole).substr(at, step));
    EXPECT_EQ(hasher.Hex(), Sha256Hex(whole)) << "pieces of " << step;
  }
}

TEST(Sha256, MatchesKnownDigest) {
  // FIPS 180-4 examples and the classic long messages.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(FileSystem, WriteAllWritesEveryByteOrReportsTheError) {
  ScratchFolder scratch("sluice_core_test");
  const std::filesystem::path path = scratch.path / "f";
  std::string large(3 << 20, 'x');
  large.back() = 'y';
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  EXPECT_EQ(WriteAll(fd, large), 0);
  EXPECT_EQ(WriteAll(fd, ""), 0);
  ::close(fd);
  EXPECT_EQ(ReadFile(path), large);
  int read_only = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(read_only, 0);
  EXPECT_EQ(WriteAll(read_only, "z"), EBADF);
  ::close(read_only);
}

TEST(FileSystem, ReplaceFolderLeavesExactlyTheNewFiles) {
  ScratchFolder scratch("sluice_core_test");
  const std::filesystem::path folder = scratch.path / "run" / "tests";
  ReplaceFolder(folder, {{"a/one.sql", "1\n"}, {"two.sql", "2\n"}});
  EXPECT_EQ(ReadFile(folder / "a" / "one.sql"), "1\n");
  EXPECT_EQ(ReadFile(folder / "two.sql"), "2\n");
  ReplaceFolder(folder, {{"b/three.sql", "3\n"}});
  EXPECT_EQ(ReadFile(folder / "b" / "three.sql"), "3\n");
  EXPECT_FALSE(std::filesystem::exists(folder / "a"));
  EXPECT_FALSE(std::filesystem::exists(folder / "two.sql"));
  std::vector<std::string> siblings;  // no staging or old folder left behind
  for (const auto& entry : std::filesystem::directory_iterator(folder.parent_path())) {
    siblings.push_back(entry.path().filename().string());
  }
  EXPECT_EQ(siblings, std::vector<std::string>{"tests"});
  ReplaceFolder(folder, {});
  EXPECT_TRUE(std::filesystem::is_empty(folder));
}

TEST(FileSystem, ReadFileInsideFollowsLinksThatStayInsideAndRefusesThoseThatLeave) {
  namespace fs = std::filesystem;
  ScratchFolder scratch("sluice_core_test");
  const fs::path root = scratch.path / "project";
  fs::create_directories(root / "models" / "nested");
  fs::create_directories(scratch.path / "outside");
  std::ofstream(root / "models" / "a.sql") << "inside";
  std::ofstream(scratch.path / "outside" / "secret.sql") << "root:x:0:0";
  // Links that stay inside: relative, absolute, and through a linked folder.
  fs::create_symlink("a.sql", root / "models" / "relative.sql");
  fs::create_symlink(root / "models" / "a.sql", root / "models" / "absolute.sql");
  fs::create_symlink("..", root / "models" / "nested" / "up");
  EXPECT_EQ(ReadFileInside(root, "models/a.sql"), "inside");
  EXPECT_EQ(ReadFileInside(root, "models/relative.sql"), "inside");
  EXPECT_EQ(ReadFileInside(root, "models/absolute.sql"), "inside");
  EXPECT_EQ(ReadFileInside(root, "models/nested/up/a.sql"), "inside");
  EXPECT_EQ(OpenFolder(root).ReadFile("models/absolute.sql"), "inside");
  // Links and paths that leave: refused at the link, naming it, never showing what it leads to.
  fs::create_symlink(scratch.path / "outside" / "secret.sql", root / "models" / "leak.sql");
  fs::create_symlink("../../outside", root / "models" / "linked");
  auto refusal = [&](const std::string& relative) {
    try {
      ReadFileInside(root, relative);
    } catch (const Error& error) {
      EXPECT_EQ(error.diagnostics().size(), 1u);
      return error.diagnostics().front();
    }
    ADD_FAILURE() << relative << " was read";
    return Diagnostic{};
  };
  Diagnostic file = refusal("models/leak.sql");
  EXPECT_EQ(file.code, "SLU-IO-005");
  EXPECT_EQ(file.location, (SourceLocation{"models/leak.sql", 1, 1}));
  EXPECT_NE(file.message.find("models/leak.sql is a symbolic link to a file outside the project folder"),
            std::string::npos)
      << file.message;
  EXPECT_EQ(FormatDiagnostic(file).find("root:x"), std::string::npos);
  Diagnostic folder = refusal("models/linked/secret.sql");
  EXPECT_EQ(folder.code, "SLU-IO-005");
  EXPECT_NE(folder.message.find("goes through models/linked, a symbolic link to a folder outside"), std::string::npos)
      << folder.message;
  EXPECT_EQ(refusal("../outside/secret.sql").code, "SLU-IO-005");
  EXPECT_EQ(refusal((scratch.path / "outside" / "secret.sql").string()).code, "SLU-IO-005");
  try {
    OpenFolder(root).ReadFile("models/leak.sql");
    ADD_FAILURE() << "read through OpenFolder";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-IO-005");
  }
  // A missing file is still SLU-IO-001.
  try {
    ReadFileInside(root, "models/missing.sql");
    ADD_FAILURE() << "read a missing file";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-IO-001");
  }
}

TEST(FileSystem, ReplaceFolderReportsAnUnwritableParentAndKeepsTheOldFolder) {
  ScratchFolder scratch("sluice_core_test");
  const std::filesystem::path blocker = scratch.path / "file";
  ::close(::open(blocker.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
  try {
    ReplaceFolder(blocker / "tests", {{"x.sql", "x"}});
    FAIL() << "expected SLU-IO-004";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-IO-004");
  }
  EXPECT_TRUE(std::filesystem::is_regular_file(blocker));
}

// Every count, including those whose last run of indexes is partial and those of runs of 1 to 64 indexes.
TEST(ParallelForTest, RunsEveryIndexExactlyOnce) {
  for (size_t count :
       {size_t{1}, size_t{33}, size_t{1000}, size_t{10000}, size_t{10007}, size_t{70001}, size_t{200003}}) {
    std::vector<std::atomic<int>> hits(count);
    ParallelFor(count, [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << count << " items, index " << i;
  }
}

TEST(ParallelForTest, RethrowsTheLowestFailingIndexAfterRunningTheRest) {
  constexpr size_t kCount = 5000;
  std::atomic<size_t> ran{0};
  try {
    ParallelFor(kCount, [&](size_t i) {
      ran.fetch_add(1);
      if (i % 1000 == 777) throw std::runtime_error("item " + std::to_string(i));
    });
    FAIL() << "expected an exception";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "item 777");
  }
  EXPECT_EQ(ran.load(), kCount);
}

TEST(ParallelForTest, ZeroItemsDoNothing) {
  bool called = false;
  ParallelFor(0, [&](size_t) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ParallelForTest, SmallCountsStayOnOneThread) { EXPECT_EQ(ParallelThreadsFor(5), 1u); }


TEST(ReadFileTest, ReadsEmptySmallAndLargeFilesWhole) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("sluice_read_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{4096}, size_t{1} << 20}) {
    std::string contents(size, '\0');
    for (size_t i = 0; i < size; ++i) contents[i] = static_cast<char>('a' + i % 26);
    std::ofstream(dir / "f", std::ios::binary) << contents;
    EXPECT_EQ(ReadFile(dir / "f"), contents) << size;
  }
  ExpectReadError([&] { ReadFile(dir / "missing"); }, dir / "missing", "No such file");
  ExpectReadError([&] { ReadFile(dir); }, dir, "Is a directory");
  std::filesystem::remove_all(dir);
}

TEST(EnvironmentSwitchTest, UnsetEmptyOffAndOn) {
  const char* name = "SLUICE_CORE_TEST_SWITCH";
  ::unsetenv(name);
  EXPECT_EQ(EnvironmentSwitch(name), std::nullopt);
  ::setenv(name, "", 1);
  EXPECT_EQ(EnvironmentSwitch(name), std::nullopt);
  for (const char* off : {"0", "off", "OFF", "false", "False", "no"}) {
    ::setenv(name, off, 1);
    EXPECT_EQ(EnvironmentSwitch(name), false) << off;
  }
  for (const char* on : {"1", "on", "true", "yes", "2"}) {
    ::setenv(name, on, 1);
    EXPECT_EQ(EnvironmentSwitch(name), true) << on;
  }
  ::unsetenv(name);
}

TEST(ClosestName, SuggestsTheNearestCandidateWithinAThirdOfTheWord) {
  EXPECT_EQ(EditDistance("Kitten", "sitting"), 3u);
  EXPECT_EQ(ClosestName("dependncies", {"cron", "dependencies", "schedules"}), std::optional<std::string>("dependencies"));
  EXPECT_EQ(ClosestName("schedule", {"schedules", "scheduled"}), std::optional<std::string>("schedules"));
  EXPECT_EQ(ClosestName("xyz", {"cron", "kind"}), std::nullopt);
  EXPECT_EQ(ClosestName("a", {}), std::nullopt);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

TEST(Text, LowerTrimAndJoinAreAsciiAndExact) {
  EXPECT_EQ(AsciiLower("SELECT Ä_x1"), "select Ä_x1");
  EXPECT_EQ(TrimBlanks(" \t\r\n a b \v\f"), "a b");
  EXPECT_EQ(TrimBlanks("   "), "");
  EXPECT_EQ(Join({"a", "b", "c"}, ", "), "a, b, c");
  EXPECT_EQ(Join({}, ","), "");
}

}  // namespace
}  // namespace sluice
