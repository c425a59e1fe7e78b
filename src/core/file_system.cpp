#include "core/file_system.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/diagnostic.hpp"

namespace sluice {

namespace {

namespace fs = std::filesystem;

// Whether `path` resolves, through every symbolic link and `..` in it, to something inside the folder `root`.
bool ResolvesInside(const fs::path& root, const fs::path& path) {
  std::error_code error;
  const fs::path folder = fs::weakly_canonical(root, error);
  if (error) return false;
  const fs::path target = fs::weakly_canonical(path, error);
  if (error) return false;
  auto [end, unused] = std::mismatch(folder.begin(), folder.end(), target.begin(), target.end());
  return end == folder.end();
}

// SLU-IO-005 for `relative` (under `root`), which leads outside the project: names the first symbolic link on its
// way (or the path, when `..` leads out), never what is behind it.
[[noreturn]] void FailOutside(const fs::path& root, const std::string& relative) {
  fs::path prefix;
  std::string link;
  for (const fs::path& part : fs::path(relative)) {
    prefix /= part;
    std::error_code error;
    if (fs::is_symlink(fs::symlink_status(root / prefix, error))) {
      link = prefix.generic_string();
      break;
    }
  }
  const std::string message =
      link.empty() ? relative + " leads outside the project folder"
      : link == fs::path(relative).generic_string()
          ? relative + " is a symbolic link to a file outside the project folder"
          : relative + " goes through " + link + ", a symbolic link to a folder outside the project folder";
  throw Error(Diagnostic{"SLU-IO-005", message + "; Sluice reads no project file from outside it",
                         {relative, 1, 1},
                         "copy the file into the project, or make the link point at a file inside the project", {}});
}

// Opens `name` under the open folder `folder` for reading, refusing a path that resolves outside it (SLU-IO-005);
// `root` is the folder's path. Returns the descriptor, or -1 with errno set.
int OpenInside(int folder, const fs::path& root, const char* name) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH;
  int fd = static_cast<int>(::syscall(SYS_openat2, folder, name, &how, sizeof how));
  if (fd >= 0) return fd;
  // EXDEV: the path leaves the folder, or goes through an absolute link, which may still lead back inside it.
  // ENOSYS, EPERM: a kernel (or sandbox) without openat2; E2BIG, EINVAL: one that does not know this `how`.
  if (errno != EXDEV && errno != ENOSYS && errno != EPERM && errno != E2BIG && errno != EINVAL) return -1;
  if (!ResolvesInside(root, root / name)) FailOutside(root, name);
  return ::openat(folder, name, O_RDONLY | O_CLOEXEC);
}

// Reads the file open as `fd` (closing it); errors name `shown`.
std::string ReadOpenFile(int fd, const fs::path& shown) {
  auto fail = [&](int error) {
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read " + shown.string() + ": " + std::strerror(error),
                           {shown.string(), 0, 0},
                           "check that the file exists and is readable",
                           {}});
  };
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

// Reads `name`, relative to the open folder `folder` (AT_FDCWD: the working directory); errors name
// base / name (name alone when base is empty). With `inside`, a path that resolves outside `base` is refused.
std::string ReadFileAt(int folder, const char* name, const std::filesystem::path& base, bool inside = false) {
  const std::filesystem::path shown = base.empty() ? std::filesystem::path(name) : base / name;
  int fd = inside ? OpenInside(folder, base, name) : ::openat(folder, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read " + shown.string() + ": " + std::strerror(errno),
                           {shown.string(), 0, 0},
                           "check that the file exists and is readable",
                           {}});
  }
  return ReadOpenFile(fd, shown);
}

}  // namespace

std::string ReadFile(const std::filesystem::path& path) { return ReadFileAt(AT_FDCWD, path.c_str(), {}); }

std::string ReadFileInside(const std::filesystem::path& root, const std::string& relative) {
  return OpenFolder(root).ReadFile(relative);
}

OpenFolder::OpenFolder(std::filesystem::path path)
    : path_(std::move(path)), fd_(::open(path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {}

OpenFolder::~OpenFolder() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OpenFolder::ReadFile(const std::string& relative) const {
  if (fd_ < 0) {
    if (!ResolvesInside(path_, path_ / relative)) FailOutside(path_, relative);
    return sluice::ReadFile(path_ / relative);
  }
  return ReadFileAt(fd_, relative.c_str(), path_, true);
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
