#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/asset_key.hpp"
#include "core/clock.hpp"
#include "core/daily_partitions.hpp"
#include "core/date.hpp"
#include "core/diagnostic.hpp"
#include "core/environment.hpp"
#include "core/file_system.hpp"
#include "core/sha256.hpp"

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

TEST(Diagnostic, RendersLocationCaretAndHint) {
  std::string text = "a = 1\nb = oops\n";
  Diagnostic d = MakeDiagnostic("SLU-X-001", "bad value", LocationAt("p.toml", text, 10), "fix it", text);
  EXPECT_EQ(d.location.line, 2);
  EXPECT_EQ(d.location.column, 5);
  EXPECT_EQ(FormatDiagnostic(d),
            "p.toml:2:5: error[SLU-X-001]: bad value\n 2 | b = oops\n   |     ^\n  hint: fix it\n");
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

TEST(Sha256, MatchesKnownDigest) {
  // FIPS 180-4 examples and the classic long messages.
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The SHA-extension code and the portable code give the same digest for every length up to 1,000 bytes and for
// a multi-megabyte message; the known digests above hold for the portable code too (the default engine is the
// hardware one wherever the CPU has it, as on the machines this project is built on).
TEST(Sha256, HardwareAndPortableEnginesAgree) {
  std::cout << "SHA extensions: " << (Sha256HasHardware() ? "yes" : "no") << "\n";
  std::string bytes;
  uint32_t seed = 777;
  for (size_t size = 0; size <= 1000; ++size) {
    bytes.resize(size);
    for (char& c : bytes) {
      seed = seed * 1103515245 + 12345;
      c = static_cast<char>(seed >> 16);
    }
    ASSERT_EQ(Sha256Hex(bytes), Sha256Hex(bytes, Sha256Engine::kPortable)) << size << " bytes";
  }
  bytes.assign(3 << 20, 'x');
  for (size_t i = 0; i < bytes.size(); i += 4097) bytes[i] = static_cast<char>(i);
  EXPECT_EQ(Sha256Hex(bytes), Sha256Hex(bytes, Sha256Engine::kPortable));
  EXPECT_EQ(Sha256Hex("abc", Sha256Engine::kPortable),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a'), Sha256Engine::kPortable),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every length around the padding boundaries (55/56/64 bytes and their multiples), against coreutils'
// sha256sum as the reference implementation.
TEST(Sha256, AgreesWithSha256sumAtEveryPaddingBoundary) {
  ScratchFolder scratch("sluice_sha256_test");
  const std::filesystem::path& dir = scratch.path;
  std::string bytes;
  uint32_t seed = 12345;
  std::vector<std::string> expected;
  std::string list;
  for (size_t size = 0; size <= 200; ++size) {
    bytes.resize(size);
    for (char& c : bytes) {
      seed = seed * 1103515245 + 12345;
      c = static_cast<char>(seed >> 16);
    }
    std::string name = (dir / ("m" + std::to_string(size))).string();
    WriteFileAtomic(name, bytes);
    expected.push_back(Sha256Hex(bytes));
    list += " " + name;
  }
  FILE* pipe = ::popen(("sha256sum" + list).c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[512];
  size_t size = 0;
  while (std::fgets(line, sizeof line, pipe) != nullptr) {
    ASSERT_LT(size, expected.size());
    EXPECT_EQ(std::string(line, 64), expected[size]) << "message of " << size << " bytes";
    ++size;
  }
  EXPECT_EQ(::pclose(pipe), 0);
  EXPECT_EQ(size, expected.size());
}

TEST(FileSystem, WalkFilesVisitsFilesAtAnyDepthButNotSymlinkedFolders) {
  ScratchFolder scratch("sluice_walk_test");
  const std::filesystem::path& dir = scratch.path;
  WriteFileAtomic(dir / "top/a.sql", "a");
  WriteFileAtomic(dir / "top/sub/deeper/b.txt", "b");
  WriteFileAtomic(dir / "elsewhere/c.sql", "c");
  WriteFileAtomic(dir / "elsewhere/inside/d.sql", "d");
  std::filesystem::create_symlink(dir / "elsewhere/c.sql", dir / "top/link.sql");
  std::filesystem::create_symlink(dir / "elsewhere/inside", dir / "top/linked_folder");
  std::filesystem::create_symlink(dir / "nowhere", dir / "top/broken");
  std::map<std::string, bool> seen;
  WalkFiles(dir, "top", [&](std::string&& path, bool regular) { seen.emplace(std::move(path), regular); });
  EXPECT_EQ(seen,
            (std::map<std::string, bool>{
                {"top/a.sql", true}, {"top/broken", false}, {"top/link.sql", true}, {"top/sub/deeper/b.txt", true}}));
  try {
    WalkFiles(dir, "missing", [](std::string&&, bool) {});
    FAIL() << "expected SLU-IO-001";
  } catch (const Error& error) {
    EXPECT_EQ(error.diagnostics().front().code, "SLU-IO-001");
    EXPECT_NE(error.diagnostics().front().message.find("missing"), std::string::npos);
  }
}

TEST(FileSystem, AnOpenDirectoryReadsByRelativePathAndNamesTheWholePathInErrors) {
  ScratchFolder scratch("sluice_open_dir_test");
  const std::filesystem::path& dir = scratch.path;
  WriteFileAtomic(dir / "project/pipelines/p/m.sql", "SELECT 1\n");
  WriteFileAtomic(dir / "elsewhere/pipelines/p/m.sql", "SELECT 2\n");
  OpenDirectory project(dir / "project");
  EXPECT_EQ(project.ReadFile("pipelines/p/m.sql"), "SELECT 1\n");
  // Held open: renaming the folder away and putting another in its place does not change what is read.
  std::filesystem::rename(dir / "project", dir / "moved");
  std::filesystem::rename(dir / "elsewhere", dir / "project");
  EXPECT_EQ(project.ReadFile("pipelines/p/m.sql"), "SELECT 1\n");
  EXPECT_EQ(project.ReadFile((dir / "project/pipelines/p/m.sql").string()), "SELECT 2\n");  // absolute: as given
  ExpectReadError([&] { project.ReadFile("pipelines/p/missing.sql"); }, dir / "project/pipelines/p/missing.sql",
                  "No such file or directory");
  // A folder that cannot be opened: reads report the whole path.
  OpenDirectory missing(dir / "nowhere");
  EXPECT_EQ(CodeOf([&] { missing.ReadFile("m.sql"); }), "SLU-IO-001");
}

// A listed file is read without asking its size: every size around the scratch buffer's 64 KiB reads whole,
// and failures are reported as ReadFile reports them.
TEST(FileSystem, AListedFileReadsWholeAtEverySize) {
  ScratchFolder scratch("sluice_listed_file_test");
  const std::filesystem::path& dir = scratch.path;
  OpenDirectory folder(dir);
  constexpr size_t kScratch = size_t{64} << 10;
  for (size_t size :
       {size_t{0}, size_t{1}, size_t{1400}, kScratch - 1, kScratch, kScratch + 1, 3 * kScratch + 7, size_t{10} << 20}) {
    std::string text(size, 'x');
    for (size_t i = 0; i < size; i += 4093) text[i] = static_cast<char>('a' + i % 26);  // not one repeated byte
    WriteFileAtomic(dir / "m.sql", text);
    EXPECT_EQ(folder.ReadListedFile("m.sql"), text) << size;
    EXPECT_EQ(folder.ReadFile("m.sql"), text) << size;
  }
  EXPECT_EQ(CodeOf([&] { folder.ReadListedFile("missing.sql"); }), "SLU-IO-001");
  std::filesystem::create_directories(dir / "folder.sql");
  ExpectReadError([&] { folder.ReadListedFile("folder.sql"); }, dir / "folder.sql", "Is a directory");
  OpenDirectory missing(dir / "nowhere");
  EXPECT_EQ(CodeOf([&] { missing.ReadListedFile("m.sql"); }), "SLU-IO-001");
}

TEST(FileSystem, AtomicWriteReplacesContents) {
  ScratchFolder scratch("sluice_core_test");
  const std::filesystem::path& dir = scratch.path;
  WriteFileAtomic(dir / "sub" / "f.txt", "one");
  WriteFileAtomic(dir / "sub" / "f.txt", "two");
  EXPECT_EQ(ReadFile(dir / "sub" / "f.txt"), "two");
  EXPECT_EQ(CodeOf([&] { ReadFile(dir / "missing"); }), "SLU-IO-001");
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

TEST(FileSystem, AMappedFileShowsTheFileAsOpenedUntilItIsReplacedByARename) {
  ScratchFolder scratch("sluice_core_test");
  const std::filesystem::path& dir = scratch.path;
  EXPECT_FALSE(MappedFile::Open(dir / "missing").has_value());
  EXPECT_FALSE(MappedFile::Open(dir).has_value());  // a folder
  WriteFileAtomic(dir / "empty", "");
  std::optional<MappedFile> empty = MappedFile::Open(dir / "empty");
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->contents(), "");

  std::string large(3 * 4096 + 17, 'x');
  large.back() = 'y';
  WriteFileAtomic(dir / "f", large);
  std::optional<MappedFile> mapped = MappedFile::Open(dir / "f");
  ASSERT_TRUE(mapped.has_value());
  WriteFileAtomic(dir / "f", "replaced");  // a new file renamed over the mapped one
  EXPECT_EQ(mapped->contents(), large);
  MappedFile moved = std::move(*mapped);
  EXPECT_EQ(moved.contents(), large);
  EXPECT_EQ(mapped->contents(), "");
  moved = *MappedFile::Open(dir / "f");
  EXPECT_EQ(moved.contents(), "replaced");
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

}  // namespace
}  // namespace sluice
