// The heap gets transparent huge pages, and child processes still inherit the caller's environment.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>

namespace {

// Runs the probe under `env <assignments>` and returns what it printed.
std::string Probe(const std::string& assignments) {
  std::string command = "env " + assignments + " " + SLUICE_HUGE_PAGES_PROBE;
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

// Whether glibc's allocator can get huge pages here (a sanitizer's allocator replaces glibc's).
bool MachineOffersHugePages() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return false;
#endif
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text((std::istreambuf_iterator<char>(setting)), std::istreambuf_iterator<char>());
  return !text.empty() && text.find("[never]") == std::string::npos;
}

// The probe, run with `assignments`, got huge pages (where the machine offers them) and left its children
// GLIBC_TUNABLES=`inherited` and no trace of the re-execution.
void ExpectHugePagesAndInherited(const std::string& assignments, const std::string& inherited) {
  std::string out = Probe(assignments);
  EXPECT_NE(out.find("GLIBC_TUNABLES=" + inherited + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("SLUICE_CALLER_GLIBC_TUNABLES=<unset>\n"), std::string::npos) << out;
  if (MachineOffersHugePages()) {
    EXPECT_NE(out.find("huge=yes\n"), std::string::npos) << out;
  }
}

TEST(HugePages, HeapUsesHugePagesAndChildrenInheritAnUnsetTunable) {
  ExpectHugePagesAndInherited("-u GLIBC_TUNABLES -u SLUICE_HUGE_PAGES", "<unset>");
}

TEST(HugePages, CallersTunablesAreKeptAndRestored) {
  ExpectHugePagesAndInherited("-u SLUICE_HUGE_PAGES GLIBC_TUNABLES=glibc.malloc.check=0", "glibc.malloc.check=0");
}

TEST(HugePages, AnEmptyTunableStaysEmpty) {
  std::string out = Probe("-u SLUICE_HUGE_PAGES GLIBC_TUNABLES=");
  EXPECT_NE(out.find("GLIBC_TUNABLES=\n"), std::string::npos) << out;
}

TEST(HugePages, OptOutAndTheCallersOwnChoiceAreRespected) {
  std::string out = Probe("-u GLIBC_TUNABLES SLUICE_HUGE_PAGES=0");
  EXPECT_NE(out.find("GLIBC_TUNABLES=<unset>\n"), std::string::npos) << out;
  EXPECT_NE(out.find("huge=no\n"), std::string::npos) << out;
  out = Probe("-u SLUICE_HUGE_PAGES GLIBC_TUNABLES=glibc.malloc.hugetlb=0");
  EXPECT_NE(out.find("GLIBC_TUNABLES=glibc.malloc.hugetlb=0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("huge=no\n"), std::string::npos) << out;
}

}  // namespace
