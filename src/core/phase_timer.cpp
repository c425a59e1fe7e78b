#include "core/phase_timer.hpp"

#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "core/environment.hpp"

namespace sluice {

namespace {

struct PhaseClock {
  bool enabled = false;
  std::mutex mutex;  // guards previous
  std::chrono::steady_clock::time_point start;
  std::chrono::steady_clock::time_point previous;
};

PhaseClock& Clock() {
  static PhaseClock clock;
  static const bool initialized = [] {
    clock.enabled = EnvironmentSwitch("SLUICE_TIMINGS").value_or(false);
    clock.start = clock.previous = std::chrono::steady_clock::now();
    return true;
  }();
  (void)initialized;
  return clock;
}

// Bytes the program holds on the heap (not what the allocator keeps mapped): jemalloc's count, asked through
// mallctl when the process has jemalloc (the sluice executable), else glibc's over every arena.
double HeapInUseMiB() {
  using Mallctl = int (*)(const char*, void*, size_t*, void*, size_t);
  static const auto mallctl = reinterpret_cast<Mallctl>(dlsym(RTLD_DEFAULT, "mallctl"));
  if (mallctl) {
    uint64_t epoch = 1;
    size_t epoch_size = sizeof epoch;
    mallctl("epoch", &epoch, &epoch_size, &epoch, epoch_size);  // refreshes the statistics
    size_t allocated = 0;
    size_t allocated_size = sizeof allocated;
    if (mallctl("stats.allocated", &allocated, &allocated_size, nullptr, 0) == 0) {
      return static_cast<double>(allocated) / (1024.0 * 1024.0);
    }
  }
  struct mallinfo2 heap = mallinfo2();
  return static_cast<double>(heap.uordblks + heap.hblkhd) / (1024.0 * 1024.0);
}

}  // namespace

void MarkPhase(const char* name) {
  PhaseClock& clock = Clock();
  if (!clock.enabled) return;
  std::lock_guard lock(clock.mutex);
  auto now = std::chrono::steady_clock::now();
  auto ms = [](auto duration) { return std::chrono::duration<double, std::milli>(duration).count(); };
  long resident_pages = 0;
  if (std::FILE* statm = std::fopen("/proc/self/statm", "r")) {
    long size_pages = 0;
    if (std::fscanf(statm, "%ld %ld", &size_pages, &resident_pages) != 2) resident_pages = 0;
    std::fclose(statm);
  }
  double resident_mib =
      static_cast<double>(resident_pages) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
  double in_use_mib = HeapInUseMiB();
  std::fprintf(stderr, "timing: %-28s %9.1f ms  (total %9.1f ms, resident %7.1f MiB, heap in use %7.1f MiB)\n", name,
               ms(now - clock.previous), ms(now - clock.start), resident_mib, in_use_mib);
  clock.previous = now;
}

}  // namespace sluice
