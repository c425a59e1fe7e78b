// Small file helpers with the error reporting Sluice needs. Thread-safe (no shared state).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace sluice {

// Reads a whole file. Throws Error(SLU-IO-001) naming the path when it cannot be read (missing, unreadable, a
// folder).
std::string ReadFile(const std::filesystem::path& path);

// Reads root/relative, a file of a project, refusing one that resolves outside `root` — through a symbolic link
// (of the file or of a folder on its way), `..` or an absolute path — with Error(SLU-IO-005) located at `relative`,
// naming the link and never what it leads to, so no file from outside a project is read or shown. Links that stay
// inside `root` are followed. Otherwise as ReadFile.
std::string ReadFileInside(const std::filesystem::path& root, const std::string& relative);

// A folder held open, so the many files under it are opened by their path relative to it: the kernel then
// resolves only the relative part. A folder that cannot be opened is not an error here: reads then go through
// the whole path and report what is wrong with it.
class OpenFolder {
 public:
  explicit OpenFolder(std::filesystem::path path);
  ~OpenFolder();
  OpenFolder(const OpenFolder&) = delete;
  OpenFolder& operator=(const OpenFolder&) = delete;

  // ReadFileInside(path, relative): a file that resolves outside the folder is refused (SLU-IO-005).
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

// Makes `folder` hold exactly `files` (path relative to the folder → contents), replacing what it held: the files
// are written into a sibling staging folder (`.<name>.staging-<pid>`), which then takes the folder's place in one
// atomic exchange of names (two renames where the file system cannot exchange), and the old contents are removed.
// A reader sees the old folder or the new one whole. Parent folders are created. Throws Error(SLU-IO-004) naming
// the path and the OS error; the staging folder is removed and the old folder left in place.
void ReplaceFolder(const std::filesystem::path& folder, const std::map<std::string, std::string>& files);

}  // namespace sluice
