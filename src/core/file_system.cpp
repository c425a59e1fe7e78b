#include "core/file_system.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "core/diagnostic.hpp"
#include "core/pause_point.hpp"

namespace sluice {

namespace {

// How ReadFileAt learns where a file ends.
enum class FileEnd {
  kAsked,   // fstat gives the size: for any file
  kListed,  // a folder listing showed a regular file on a local file system (ShortReadIsTheEnd): a read that
            // returns less than it asked for is at the end
};

// Reads `name`, a path relative to the open folder `directory` (AT_FDCWD: the working directory); errors name
// base / name (name alone when base is empty).
std::string ReadFileAt(int directory, const char* name, const std::filesystem::path& base,
                       FileEnd end = FileEnd::kAsked) {
  auto fail = [&]() {
    int error = errno;
    std::filesystem::path shown = base.empty() ? std::filesystem::path(name) : base / name;
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read " + shown.string() + ": " + std::strerror(error),
                           {shown.string(), 0, 0},
                           "check that the file exists and is readable",
                           {}});
  };
  auto close_and_fail = [&](int fd) {
    int saved = errno;
    ::close(fd);
    errno = saved;
    fail();
  };
  int fd = ::openat(directory, name, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail();
  // A regular file's read returns less than it asked for only at the file's end (Linux). So a file that gives
  // exactly its fstat size into a buffer one byte larger is read whole, and the read that would return 0 is
  // skipped (4 system calls instead of 5). A listed file is read into this thread's scratch buffer without
  // asking its size: a read that does not fill the buffer is the end (3 system calls; ~10% less time reading a
  // project's models on this VM). A file that turns out larger, or of another kind, is read until a read
  // returns 0.
  std::string contents;
  size_t size = 0;
  std::optional<size_t> regular_size;  // fstat's size of a regular file
  if (end == FileEnd::kListed) {
    constexpr size_t kScratchBytes = size_t{64} << 10;
    thread_local std::unique_ptr<char[]> scratch(new char[kScratchBytes]);
    ssize_t n = 0;
    do {
      n = ::read(fd, scratch.get(), kScratchBytes);
    } while (n < 0 && errno == EINTR);
    if (n < 0) close_and_fail(fd);
    if (static_cast<size_t>(n) < kScratchBytes) {
      ::close(fd);
      return std::string(scratch.get(), static_cast<size_t>(n));
    }
    contents.assign(scratch.get(), kScratchBytes);
    size = kScratchBytes;
  } else {
    struct stat info {};
    if (::fstat(fd, &info) != 0) close_and_fail(fd);
    if (S_ISDIR(info.st_mode)) {
      errno = EISDIR;
      close_and_fail(fd);
    }
    if (S_ISREG(info.st_mode)) regular_size = static_cast<size_t>(info.st_size);
    contents.resize(info.st_size > 0 ? static_cast<size_t>(info.st_size) + 1 : 4096);
  }
  while (true) {
    if (size == contents.size()) contents.resize(contents.size() * 2);
    ssize_t n = ::read(fd, contents.data() + size, contents.size() - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      close_and_fail(fd);
    }
    if (n == 0) break;
    size += static_cast<size_t>(n);
    if (size == regular_size && size < contents.size()) break;
  }
  ::close(fd);
  contents.resize(size);
  return contents;
}

}  // namespace

std::string ReadFile(const std::filesystem::path& path) { return ReadFileAt(AT_FDCWD, path.c_str(), {}); }

std::optional<MappedFile> MappedFile::Open(const std::filesystem::path& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size == 0) {
    ::close(fd);
    return MappedFile(nullptr, 0);
  }
  void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (data == MAP_FAILED) return std::nullopt;
  return MappedFile(static_cast<const char*>(data), size);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

namespace {

// Whether the file system of the open folder `fd` is one whose regular files give a short read only at their end:
// the local disk and memory file systems. Network and FUSE file systems (NFS, CIFS, 9p, sshfs, virtiofs …) may
// return less than asked before the end, so their files are read by their fstat size.
bool ShortReadIsTheEnd(int fd) {
  struct statfs info {};
  if (fd < 0 || ::fstatfs(fd, &info) != 0) return false;
  switch (static_cast<unsigned long>(info.f_type)) {
    case 0xEF53UL:      // ext2, ext3, ext4
    case 0x58465342UL:  // xfs
    case 0x9123683EUL:  // btrfs
    case 0x01021994UL:  // tmpfs
    case 0x794C7630UL:  // overlayfs
    case 0xF2F52010UL:  // f2fs
      return true;
    default:
      return false;
  }
}

}  // namespace

OpenDirectory::OpenDirectory(std::filesystem::path path)
    : path_(std::move(path)),
      fd_(::open(path_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)),
      short_read_is_the_end_(ShortReadIsTheEnd(fd_)) {}

OpenDirectory::~OpenDirectory() {
  if (fd_ >= 0) ::close(fd_);
}

std::string OpenDirectory::ReadFile(const std::string& relative) const {
  if (fd_ < 0 || relative.empty() || relative.front() == '/') return sluice::ReadFile(path_ / relative);
  return ReadFileAt(fd_, relative.c_str(), path_);
}

std::string OpenDirectory::ReadListedFile(const std::string& relative) const {
  if (fd_ < 0 || relative.empty() || relative.front() == '/') return sluice::ReadFile(path_ / relative);
  return ReadFileAt(fd_, relative.c_str(), path_, short_read_is_the_end_ ? FileEnd::kListed : FileEnd::kAsked);
}

namespace {

// WriteFileAtomic writes `<path>.tmp.<pid>` and renames it over `<path>`.
constexpr char kTemporaryInfix[] = ".tmp.";

}  // namespace

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

void WriteFileAtomic(const std::filesystem::path& path, const std::string& contents, Durability durability) {
  auto fail = [&](const std::string& what) {
    throw Error(Diagnostic{"SLU-IO-002",
                           "cannot write " + path.string() + ": " + what,
                           {path.string(), 0, 0},
                           "check permissions and free space",
                           {}});
  };
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::string temp = path.string() + kTemporaryInfix + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(std::strerror(errno));
  if (int error = WriteAll(fd, contents)) {
    ::close(fd);
    ::unlink(temp.c_str());
    fail(std::strerror(error));
  }
  std::string reason;
  if (durability == Durability::kSynced && ::fsync(fd) != 0) reason = std::strerror(errno);
  if (::close(fd) != 0 && reason.empty()) reason = std::strerror(errno);  // closed even when fsync failed
  if (!reason.empty()) {
    ::unlink(temp.c_str());
    fail(reason);
  }
  PausePoint("before_atomic_rename");
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    ::unlink(temp.c_str());
    fail(reason);
  }
}

void RemoveAbandonedTemporaries(const std::filesystem::path& path) {
  const std::string prefix = path.filename().string() + kTemporaryInfix;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(path.parent_path(), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    char* parsed_end = nullptr;
    const long pid = std::strtol(name.c_str() + prefix.size(), &parsed_end, 10);
    if (pid <= 0 || *parsed_end != '\0') continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      std::error_code ignored;  // another process may have removed it first
      std::filesystem::remove(it->path(), ignored);
    }
  }
}

namespace {

void WalkFolder(const std::string& root, const std::string& relative,
                const std::function<void(std::string&& path, bool regular)>& visit) {
  std::string folder = root + relative;
  DIR* dir = ::opendir(folder.c_str());
  if (dir == nullptr) {
    throw Error(Diagnostic{"SLU-IO-001",
                           "cannot read the folder " + folder + ": " + std::strerror(errno),
                           {relative, 0, 0},
                           "check that the folder exists and is readable",
                           {}});
  }
  std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
  while (const dirent* entry = ::readdir(dir)) {
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    bool folder_entry = entry->d_type == DT_DIR;
    bool regular = entry->d_type == DT_REG;
    if (entry->d_type == DT_UNKNOWN || entry->d_type == DT_LNK) {
      struct stat info {};
      bool link = entry->d_type == DT_LNK;
      if (!link && ::fstatat(::dirfd(dir), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) == 0) {
        link = S_ISLNK(info.st_mode);
        folder_entry = S_ISDIR(info.st_mode);
        regular = S_ISREG(info.st_mode);
      }
      if (link) {  // what it points to decides: a symlinked folder is skipped, a broken link is not regular
        bool resolved = ::fstatat(::dirfd(dir), entry->d_name, &info, 0) == 0;
        if (resolved && S_ISDIR(info.st_mode)) continue;
        regular = resolved && S_ISREG(info.st_mode);
      }
    }
    std::string path = relative;
    path += '/';
    path += name;
    if (folder_entry) {
      WalkFolder(root, path, visit);
    } else {
      visit(std::move(path), regular);
    }
  }
}

}  // namespace

void WalkFiles(const std::filesystem::path& root, const std::string& folder,
               const std::function<void(std::string&& path, bool regular)>& visit) {
  std::string prefix = root.string();
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  WalkFolder(prefix, folder, visit);
}

}  // namespace sluice
