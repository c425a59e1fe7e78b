#include "core/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace sluice {

namespace {

size_t HardwareThreads() {
  if (const char* text = std::getenv("SLUICE_THREADS")) {
    char* end = nullptr;
    long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value > 0) return static_cast<size_t>(value);
  }
  size_t hardware = std::thread::hardware_concurrency();
  return hardware == 0 ? 1 : hardware;
}

}  // namespace

size_t ParallelThreadsFor(size_t count, size_t min_items_per_thread) {
  size_t useful = count / std::max<size_t>(min_items_per_thread, 1);
  size_t threads = std::min(HardwareThreads(), useful);
  return threads == 0 ? 1 : threads;
}

void ParallelFor(size_t count, const std::function<void(size_t)>& body, size_t min_items_per_thread) {
  std::atomic<size_t> next{0};
  std::mutex failure_mutex;  // guards failed_index and failure
  size_t failed_index = std::numeric_limits<size_t>::max();
  std::exception_ptr failure;
  const size_t threads = ParallelThreadsFor(count, min_items_per_thread);
  const size_t run = std::clamp<size_t>(count / (threads * 256), 1, 64);
  auto work = [&]() {
    for (size_t begin = next.fetch_add(run, std::memory_order_relaxed); begin < count;
         begin = next.fetch_add(run, std::memory_order_relaxed)) {
      for (size_t i = begin; i < std::min(count, begin + run); ++i) {
        try {
          body(i);
        } catch (...) {
          std::lock_guard lock(failure_mutex);
          if (i < failed_index) {
            failed_index = i;
            failure = std::current_exception();
          }
        }
      }
    }
  };
  std::vector<std::thread> helpers;
  helpers.reserve(threads - 1);
  for (size_t t = 1; t < threads; ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace sluice
