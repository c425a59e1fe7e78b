#include "cli/huge_pages.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace sluice::cli {
namespace {

constexpr const char* kTunables = "GLIBC_TUNABLES";
constexpr std::string_view kHugePageTunable = "glibc.malloc.hugetlb=1";
// Set in the re-executed process: the caller's GLIBC_TUNABLES prefixed with '=' ("" when it had none), so the
// original can be restored exactly, including "set but empty".
constexpr const char* kCallerTunables = "SLUICE_CALLER_GLIBC_TUNABLES";

}  // namespace

void UseHugePagesForTheHeap(char** argv) {
  if (const char* caller = std::getenv(kCallerTunables)) {
    std::string original = caller;
    unsetenv(kCallerTunables);
    if (original.empty()) {
      unsetenv(kTunables);
    } else {
      setenv(kTunables, original.c_str() + 1, 1);
    }
    return;
  }
  if (const char* opt_out = std::getenv("SLUICE_HUGE_PAGES"); opt_out && std::string_view(opt_out) == "0") return;
  const char* current = std::getenv(kTunables);
  std::string tunables = current ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return;  // the caller chose
  std::string caller = current ? "=" + tunables : "";
  tunables += tunables.empty() ? "" : ":";
  tunables += kHugePageTunable;
  if (setenv(kCallerTunables, caller.c_str(), 1) != 0 || setenv(kTunables, tunables.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // exec failed: run on without huge pages, with the environment as it was.
  unsetenv(kCallerTunables);
  if (current) {
    setenv(kTunables, caller.c_str() + 1, 1);
  } else {
    unsetenv(kTunables);
  }
}

}  // namespace sluice::cli
