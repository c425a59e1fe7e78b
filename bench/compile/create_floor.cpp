// The compile benchmark's write floor: load every file under FROM (a compiled target/) into memory, then create
// the same tree under TO (which must not exist) with one open/write/close per file — the file creation any
// compiler writing those artifacts must do. Prints the seconds of the creation phase only. With THREADS (default
// 1), the folders are made first and the files are then created by that many threads, each taking the next
// folder's files in turn: the creation spread over every core, as `sluice compile` spreads it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: create_floor FROM TO [THREADS]\n");
    return 2;
  }
  int threads = argc == 4 ? std::atoi(argv[3]) : 1;
  if (threads < 1) {
    std::fprintf(stderr, "create_floor: THREADS must be a positive number\n");
    return 2;
  }
  namespace fs = std::filesystem;
  fs::path from = argv[1];
  fs::path to = argv[2];
  std::vector<std::pair<std::string, std::string>> files;  // relative path → contents
  for (const auto& entry : fs::recursive_directory_iterator(from)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    files.emplace_back(fs::relative(entry.path(), from).string(),
                       std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
  }
  // A folder's files on one thread (two threads creating files in one folder take turns at its lock); the
  // grouping is done before the clock starts.
  std::sort(files.begin(), files.end());
  std::vector<size_t> folder_starts;
  for (size_t i = 0; i < files.size(); ++i) {
    if (i == 0 || fs::path(files[i].first).parent_path() != fs::path(files[i - 1].first).parent_path()) {
      folder_starts.push_back(i);
    }
  }
  folder_starts.push_back(files.size());
  auto start = std::chrono::steady_clock::now();
  std::set<fs::path> folders;
  for (const auto& [path, contents] : files) {
    fs::path folder = (to / path).parent_path();
    if (folders.insert(folder).second) fs::create_directories(folder);
  }
  std::atomic<size_t> next_folder{0};
  std::atomic<bool> failed{false};
  auto create = [&] {
    for (size_t f; (f = next_folder.fetch_add(1)) + 1 < folder_starts.size() && !failed;) {
      for (size_t i = folder_starts[f]; i < folder_starts[f + 1]; ++i) {
        fs::path file = to / files[i].first;
        const std::string& contents = files[i].second;
        int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 || ::write(fd, contents.data(), contents.size()) != static_cast<ssize_t>(contents.size()) ||
            ::close(fd) != 0) {
          std::perror(file.c_str());
          failed = true;
          return;
        }
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < threads; ++t) helpers.emplace_back(create);
  create();
  for (auto& helper : helpers) helper.join();
  if (failed) return 1;
  std::printf("%.6f\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
