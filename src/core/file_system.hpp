// Small file helpers with the error reporting Sluice needs. Thread-safe (no shared state).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

namespace sluice {

// Reads a whole file. Throws Error(SLU-IO-001) naming the path when it cannot be read (missing, unreadable, a
// folder).
std::string ReadFile(const std::filesystem::path& path);

// A folder held open, so the many files under it are opened by their path relative to it: the kernel then
// resolves only the relative part. A folder that cannot be opened is not an error here: reads then go through
// the whole path and report what is wrong with it.
class OpenFolder {
 public:
  explicit OpenFolder(std::filesystem::path path);
  ~OpenFolder();
  OpenFolder(const OpenFolder&) = delete;
  OpenFolder& operator=(const OpenFolder&) = delete;

  // ReadFile(path / relative).
  std::string ReadFile(const std::string& relative) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
};

// Writes all of `bytes` to the open file `fd`, retrying interrupted and partial writes. Returns 0, or the errno of
// the write that failed (EIO for one that wrote nothing).
int WriteAll(int fd, std::string_view bytes);

// Calls visit(path, regular) for every entry under root/folder that is not a folder, at any depth, with `path`
// relative to `root` ("folder/sub/name") and `regular` true for a regular file or a symlink to one. Symlinked
// folders are neither entered nor visited. The visiting order is the directory order. Throws Error(SLU-IO-001)
// naming a folder that cannot be read.
void WalkFiles(const std::filesystem::path& root, const std::string& folder,
               const std::function<void(std::string&& path, bool regular)>& visit);

}  // namespace sluice
