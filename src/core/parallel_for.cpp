#include "core/parallel_for.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

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

void PrefaultInParallel(void* data, size_t bytes) {
  if (bytes == 0) return;
  constexpr size_t kPage = 4096;
  constexpr size_t kPagesPerItem = 256;  // 1 MiB
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first_page = begin / kPage * kPage;
  const size_t pages = (begin + bytes - first_page + kPage - 1) / kPage;
  ParallelFor((pages + kPagesPerItem - 1) / kPagesPerItem,
              [&](size_t item) {
                const size_t from = item * kPagesPerItem;
                const size_t to = std::min(pages, from + kPagesPerItem);
                if (PopulatePages(reinterpret_cast<void*>(first_page + from * kPage), (to - from) * kPage)) return;
                // No MADV_POPULATE_WRITE (Linux before 5.14): a write into each page, within the range.
                for (size_t page = from; page < to; ++page) {
                  const uintptr_t at = std::clamp<uintptr_t>(first_page + page * kPage, begin, begin + bytes - 1);
                  *reinterpret_cast<volatile unsigned char*>(at) = 0;
                }
              },
              /*min_items_per_thread=*/4);
}

bool PopulatePages(void* data, size_t bytes) { return madvise(data, bytes, MADV_POPULATE_WRITE) == 0; }

}  // namespace sluice
