#include "core/pause_point.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

namespace sluice {

void PausePoint(std::string_view name) {
  const char* wanted = std::getenv("SLUICE_TEST_PAUSE_AT");
  if (wanted == nullptr || name != wanted) return;
  std::fprintf(stderr, "sluice: paused at %.*s\n", static_cast<int>(name.size()), name.data());
  std::fflush(stderr);
  if (const char* marker = std::getenv("SLUICE_TEST_PAUSE_MARKER")) {
    std::ofstream(marker) << name << "\n";
  }
  const char* resume = std::getenv("SLUICE_TEST_PAUSE_RESUME");
  const auto until = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (std::chrono::steady_clock::now() < until) {
    if (resume != nullptr && std::filesystem::exists(resume)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace sluice
