// Small file helpers with the error reporting Sluice needs. Thread-safe (no shared state).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// Reads a whole file. Throws Error(SLU-IO-001) naming the path when it cannot be read.
std::string ReadFile(const std::filesystem::path& path);

// A file's contents mapped read-only: the page cache's pages, not a copy on the heap (reading a 50 MB cache
// into fresh heap costs more page faults than parsing it). The mapping shows the file as it was opened for as
// long as the file is only ever replaced by renaming another over it (WriteFileAtomic); a file truncated in
// place while mapped would fault its reader (SIGBUS), so map only files written that way.
class MappedFile {
 public:
  // The mapped file, or nullopt when it cannot be opened, is not a regular file, or cannot be mapped.
  static std::optional<MappedFile> Open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view contents() const { return {data_, size_}; }

 private:
  MappedFile(const char* data, size_t size) : data_(data), size_(size) {}
  const char* data_ = nullptr;  // null for an empty file
  size_t size_ = 0;
};

// A folder held open so the files under it are opened by their path relative to it: the kernel then resolves
// only the relative part (a model file of a project nine folders deep: three path components, not twelve).
// Errors name the whole path, as ReadFile's do. A folder that cannot be opened is not an error here: reads
// then go through the whole path and report what is wrong with it.
class OpenDirectory {
 public:
  explicit OpenDirectory(std::filesystem::path path);
  ~OpenDirectory();
  OpenDirectory(const OpenDirectory&) = delete;
  OpenDirectory& operator=(const OpenDirectory&) = delete;

  // ReadFile(path / relative).
  std::string ReadFile(const std::string& relative) const;
  // The same for a file that a listing of its folder (WalkFiles) showed as a regular file: on a local disk or
  // memory file system (ext4, xfs, btrfs, tmpfs, overlayfs, f2fs: the folder's, checked once when it is
  // opened) its size is not asked for, and a read that returns less than it asked for is taken as its end, as
  // a regular file's is there. Elsewhere (NFS, FUSE …, where a read may return less before the end) it is read
  // as ReadFile reads. A file system mounted inside the folder counts as the folder's.
  std::string ReadListedFile(const std::string& relative) const;

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  bool short_read_is_the_end_ = false;  // see ReadListedFile
};

// Writes all of `bytes` to the open file `fd`, retrying interrupted and partial writes. Returns 0, or the errno of
// the write that failed (EIO for one that wrote nothing).
int WriteAll(int fd, std::string_view bytes);

// Whether WriteFileAtomic waits for the disk: kSynced survives a power loss; kUnsynced only a crash or kill of
// the process (after a power loss the file may be empty or partial: for caches that check their contents).
enum class Durability { kSynced, kUnsynced };

// Writes `contents` to a temporary sibling (`<path>.tmp.<pid>`), fsyncs it (kSynced) and renames it over `path`,
// so a reader sees the old or the new file, never a partial one. Throws Error(SLU-IO-002) on failure (the old
// file is kept).
void WriteFileAtomic(const std::filesystem::path& path, const std::string& contents,
                     Durability durability = Durability::kSynced);

// Removes the temporaries of WriteFileAtomic(path, …) calls whose process was killed between writing and renaming
// (`<path>.tmp.<pid>` of a pid that no longer runs); a running writer's temporary is kept. Never throws.
void RemoveAbandonedTemporaries(const std::filesystem::path& path);

// Calls visit(path, regular) for every entry under root/folder that is not a folder, at any depth, with `path`
// relative to `root` ("folder/sub/name") and `regular` true for a regular file or a symlink to one. Symlinked
// folders are neither entered nor visited. Folders are read with readdir and its d_type, without a stat per
// entry (about 4x faster than std::filesystem::recursive_directory_iterator on this VM). The visiting order
// is the directory order. Throws Error(SLU-IO-001) naming a folder that cannot be read.
void WalkFiles(const std::filesystem::path& root, const std::string& folder,
               const std::function<void(std::string&& path, bool regular)>& visit);

}  // namespace sluice
