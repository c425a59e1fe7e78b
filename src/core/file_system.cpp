#include "core/file_system.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

// Reads `name`, relative to the open folder `folder` (AT_FDCWD: the working directory); errors name
// base / name (name alone when base is empty).
std::string ReadFileAt(int folder, const char* name, const std::filesystem::path& base) {
  auto fail = [&](int error) {
    const std::filesystem::path shown = base.empty() ? std::filesystem::path(name) : base / name;
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read " + shown.string() + ": " + std::strerror(error),
                           {shown.string(), 0, 0},
                           "check that the file exists and is readable",
                           {}});
  };
  int fd = ::openat(folder, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(errno);
  struct stat info {};
  if (::fstat(fd, &info) != 0 || S_ISDIR(info.st_mode)) {
    int error = S_ISDIR(info.st_mode) ? EISDIR : errno;
    ::close(fd);
    fail(error);
  }
  // A regular file's read returns less than asked only at its end, so one that gives exactly its size into a
  // buffer a byte larger is whole. A file that grows, or is not a regular file, is read until a read returns 0.
  const bool regular = S_ISREG(info.st_mode);
  std::string contents(info.st_size > 0 ? static_cast<size_t>(info.st_size) + 1 : 4096, '\0');
  size_t size = 0;
  while (true) {
    if (size == contents.size()) contents.resize(contents.size() * 2);
    ssize_t n = ::read(fd, contents.data() + size, contents.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int error = errno;
      ::close(fd);
      fail(error);
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
    if (regular && size == static_cast<size_t>(info.st_size) && size < contents.size()) break;
  }
  ::close(fd);
  contents.resize(size);
  return contents;
}

}  // namespace

std::string ReadFile(const std::filesystem::path& path) { return ReadFileAt(AT_FDCWD, path.c_str(), {}); }

OpenFolder::OpenFolder(std::filesystem::path path)
    : path_(std::move(path)), fd_(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}

OpenFolder::~OpenFolder() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OpenFolder::ReadFile(const std::string& relative) const {
  if (fd_ < 0) return sluice::ReadFile(path_ / relative);
  return ReadFileAt(fd_, relative.c_str(), path_);
}

int WriteAll(int fd, std::string_view bytes) {
  for (size_t written = 0; written < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    written += static_cast<size_t>(n);
  }
  return 0;
}

void WalkFiles(const std::filesystem::path& root, const std::string& folder,
               const std::function<void(std::string&& path, bool regular)>& visit) {
  namespace fs = std::filesystem;
  std::error_code error;
  auto fail = [&]() {
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read the folder " + (root / folder).string() + ": " + error.message(),
                           {folder, 0, 0},
                           "check that the folder exists and is readable",
                           {}});
  };
  const fs::path start = root / folder;
  const size_t root_length = start.native().size() - folder.size();  // where `folder/…` begins in each path
  fs::recursive_directory_iterator entry(start, error);  // symlinked folders are not entered
  if (error) fail();
  for (const fs::recursive_directory_iterator end; entry != end; entry.increment(error)) {
    if (error) fail();
    std::error_code ignored;  // a broken symlink is an entry that is not regular
    if (entry->is_directory(ignored)) continue;
    visit(entry->path().native().substr(root_length), entry->is_regular_file(ignored));
  }
  if (error) fail();
}

void ReplaceFolder(const std::filesystem::path& folder, const std::map<std::string, std::string>& files) {
  namespace fs = std::filesystem;
  const fs::path parent = folder.parent_path().empty() ? fs::path(".") : folder.parent_path();
  const fs::path staging = parent / ("." + folder.filename().string() + ".staging-" + std::to_string(::getpid()));
  std::error_code ignored;
  auto fail = [&](const fs::path& path, int error) {
    fs::remove_all(staging, ignored);
    throw Error(Diagnostic{"SLU-IO-004",
                           "cannot write " + path.string() + ": " + std::strerror(error),
                           {path.string(), 0, 0},
                           "check that the folder is writable and the disk has room",
                           {}});
  };
  fs::remove_all(staging, ignored);
  std::error_code error;
  fs::create_directories(staging, error);
  if (error) fail(staging, error.value());
  for (const auto& [relative, contents] : files) {
    const fs::path path = staging / relative;
    fs::create_directories(path.parent_path(), error);
    if (error) fail(path.parent_path(), error.value());
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) fail(path, errno);
    int written = WriteAll(fd, contents);
    ::close(fd);
    if (written != 0) fail(path, written);
  }
  if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, folder.c_str(), RENAME_EXCHANGE) == 0) {
    fs::remove_all(staging, ignored);  // it holds the old contents now
    return;
  }
  if (errno != ENOENT && errno != EINVAL) fail(folder, errno);
  // No folder yet (ENOENT), or a file system that cannot exchange (EINVAL): move the old one aside first.
  const fs::path old = parent / ("." + folder.filename().string() + ".old-" + std::to_string(::getpid()));
  fs::remove_all(old, ignored);
  bool moved = fs::exists(folder, ignored) && ::rename(folder.c_str(), old.c_str()) == 0;
  if (::rename(staging.c_str(), folder.c_str()) != 0) {
    int rename_error = errno;
    if (moved) ::rename(old.c_str(), folder.c_str());
    fail(folder, rename_error);
  }
  fs::remove_all(old, ignored);
}

}  // namespace sluice
