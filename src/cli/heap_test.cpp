// The binary's heap is jemalloc's and gets transparent huge pages where the machine offers them (MALLOC_CONF in
// the environment still decides), and a command that expects a large heap has it mapped ahead (cli/heap.cpp).
// Checked through a probe linked like `sluice`.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

// Runs the probe under `env <assignments>` (with the expected heap in bytes, if any) and returns what it
// printed.
std::string Probe(const std::string& assignments, const std::string& expected_heap_bytes = "") {
  std::string command = "env " + assignments + " " + SLUICE_HEAP_PROBE + " " + expected_heap_bytes;
  FILE* pipe = popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 256> buffer{};
  while (pipe && std::fgets(buffer.data(), buffer.size(), pipe)) out += buffer.data();
  if (pipe) {
    EXPECT_EQ(pclose(pipe), 0);
  }
  return out;
}

// Whether the kernel hands out transparent huge pages to a process that asks (madvise or always).
bool MachineOffersHugePages() {
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(setting)), std::istreambuf_iterator<char>());
  return !text.empty() && text.find("[never]") == std::string::npos;
}

// The value the probe printed as `name=value` ("" when it printed none).
std::string Field(const std::string& out, const std::string& name) {
  size_t at = out.find(name + "=");
  if (at == std::string::npos) return "";
  at += name.size() + 1;
  return out.substr(at, out.find('\n', at) - at);
}

// KiB of the probe in transparent huge pages.
long HugeKiB(const std::string& out) {
  std::string value = Field(out, "huge_kib");
  return value.empty() ? -1 : std::stol(value);
}

// "1" while the probe may get huge pages, "0" once it gave them up.
std::string ThpEnabled(const std::string& out) { return Field(out, "thp_enabled"); }

// The probe touches 64 MiB of small allocations; "most of it" is more than half.
constexpr long kHalfOfTheProbesHeapKiB = 32 * 1024;

// Most of the probe's heap is in huge pages, where the machine offers them (the test is skipped otherwise).
void ExpectHugePagesWhereOffered(const std::string& out) {
  if (!MachineOffersHugePages()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  EXPECT_GT(HugeKiB(out), kHalfOfTheProbesHeapKiB) << out;
}

// The probe reported its huge pages, and they are not most of its heap.
void ExpectMostlySmallPages(const std::string& out) {
  long huge = HugeKiB(out);
  EXPECT_GE(huge, 0) << out;
  EXPECT_LT(huge, kHalfOfTheProbesHeapKiB) << out;
}

TEST(Heap, IsJemallocWithHugePages) {
  std::string out = Probe("-u MALLOC_CONF");
  EXPECT_NE(out.find("jemalloc=yes\n"), std::string::npos) << out;
  ExpectHugePagesWhereOffered(out);
}

TEST(Heap, MallocConfInTheEnvironmentWins) {
  std::string out = Probe("MALLOC_CONF=thp:never");
  EXPECT_NE(out.find("jemalloc=yes\n"), std::string::npos) << out;
  ExpectMostlySmallPages(out);
}

// Huge pages at any heap size: the fill of a large heap (below) made them pay off there too.
TEST(Heap, ALargeExpectedHeapKeepsHugePages) {
  std::string out = Probe("-u MALLOC_CONF -u SLUICE_HEAP_FILL", std::to_string(size_t{300} << 20));
  EXPECT_EQ(ThpEnabled(out), "1") << out;
  ExpectHugePagesWhereOffered(out);
}

// Page faults the probe took touching its 64 MiB (16,384 pages of 4 KiB).
long TouchFaults(const std::string& out) {
  std::string value = Field(out, "touch_faults");
  return value.empty() ? -1 : std::stol(value);
}
constexpr long kPagesTheProbeTouches = (64 << 20) / 4096;

// A large expected heap is mapped ahead: touching it takes few page faults. (On 4 KiB pages, so that without
// the fill every page would fault.)
TEST(Heap, ALargeExpectedHeapIsFilledAhead) {
  std::string out = Probe("-u SLUICE_HEAP_FILL MALLOC_CONF=thp:never", std::to_string(size_t{300} << 20));
  if (Field(out, "populate") != "yes") GTEST_SKIP() << "the kernel has no MADV_POPULATE_WRITE";
  EXPECT_GE(TouchFaults(out), 0) << out;
  EXPECT_LT(TouchFaults(out), kPagesTheProbeTouches / 8) << out;
}

TEST(Heap, FillingTheHeapCanBeSwitchedOff) {
  std::string out = Probe("SLUICE_HEAP_FILL=off MALLOC_CONF=thp:never", std::to_string(size_t{300} << 20));
  EXPECT_GT(TouchFaults(out), kPagesTheProbeTouches / 2) << out;
}

// A heap under the limit (64 MiB; 32 expected here) is not filled ahead: its pages are huge where the machine
// offers them.
TEST(Heap, ASmallExpectedHeapIsNotFilled) {
  std::string out = Probe("-u SLUICE_HEAP_FILL MALLOC_CONF=thp:never", std::to_string(32 << 20));
  EXPECT_GT(TouchFaults(out), kPagesTheProbeTouches / 2) << out;
}

}  // namespace
