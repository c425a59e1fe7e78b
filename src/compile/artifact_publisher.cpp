#include "compile/artifact_publisher.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <thread>
#include <vector>

#include "core/diagnostic.hpp"
#include "core/file_system.hpp"
#include "core/parallel_for.hpp"
#include "core/pause_point.hpp"
#include "core/sha256.hpp"

namespace sluice {

namespace {

namespace fs = std::filesystem;

const char* const kOwners[] = {"compiled", "manifest.json", "streambuild_dag.json"};
constexpr std::string_view kIndexFile = ".sluice-artifacts.index";
constexpr std::string_view kIndexHeader = "sluice-artifacts 2";
constexpr std::string_view kPublishFolder = ".sluice-publish";
constexpr std::string_view kJournalHeader = "sluice-publish 1";
constexpr std::string_view kStagingPrefix = ".sluice-staging-";
constexpr std::string_view kBackupPrefix = ".sluice-backup-";

[[noreturn]] void Fail(const fs::path& path, const std::string& what) {
  throw Error(Diagnostic{"SLU-IO-003",
                         "cannot publish compile artifacts: " + what + " (" + path.string() + ")",
                         {path.string(), 0, 0},
                         "check permissions and free space in the target folder",
                         {}});
}

// Creates `path` (truncating) and writes the pieces `produce` hands to its sink, with plain syscalls; fsyncs
// when `sync`. The pieces after a failed write are skipped; the failure is reported once `produce` returns.
void WritePieces(const fs::path& path, const ArtifactStream& produce, bool sync = false) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) Fail(path, std::strerror(errno));
  int error = 0;
  try {
    produce([&](std::string_view piece) {
      if (error == 0) error = WriteAll(fd, piece);
    });
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (error == 0 && sync && ::fsync(fd) != 0) error = errno;
  if (error != 0) {
    ::close(fd);
    Fail(path, std::strerror(error));
  }
  if (::close(fd) != 0) Fail(path, std::strerror(errno));
}

// Creates `path` (truncating) and writes `contents`; fsyncs when `sync`.
void WriteWhole(const fs::path& path, std::string_view contents, bool sync = false) {
  WritePieces(
      path, [&](const auto& sink) { sink(contents); }, sync);
}

// Writes `contents` to `path` so that a reader (or a crash) sees the old file or the new one.
void ReplaceDurably(const fs::path& path, std::string_view contents) {
  fs::path temp = path;
  temp += ".tmp";
  WriteWhole(temp, contents, true);
  if (::rename(temp.c_str(), path.c_str()) != 0) Fail(path, std::strerror(errno));
}

// Creates each folder once per publication (one mkdir chain per folder instead of per file).
class FolderMaker {
 public:
  void EnsureParentOf(const fs::path& file) {
    std::string folder = file.parent_path().string();
    if (!made_.insert(folder).second) return;
    std::error_code ec;
    fs::create_directories(folder, ec);
    if (ec) Fail(folder, ec.message());
  }

 private:
  std::set<std::string> made_;
};

// Holds an exclusive flock on `target/.sluice-publish.lock` for the publication.
class PublishLock {
 public:
  explicit PublishLock(const fs::path& target_dir) {
    fs::path path = target_dir / ".sluice-publish.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) Fail(path, std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) Fail(path, std::strerror(errno));
    }
  }
  ~PublishLock() { ::close(fd_); }
  PublishLock(const PublishLock&) = delete;
  PublishLock& operator=(const PublishLock&) = delete;

 private:
  int fd_ = -1;
};

// ---- the index ----

using IndexEntry = ArtifactFingerprint;
struct IndexedFile {
  std::string path;  // under target/
  IndexEntry entry;
};
// The published files, sorted by path, each path once (a vector: at 100,000 models a tree of 300,000 strings
// cost more to build, walk and free than everything the publication does with it).
using Index = std::vector<IndexedFile>;

bool PathLess(const IndexedFile& a, const IndexedFile& b) { return a.path < b.path; }

// Where `path` is, or would go, in a sorted index.
size_t PositionIn(const Index& index, std::string_view path) {
  auto it = std::lower_bound(index.begin(), index.end(), path,
                             [](const IndexedFile& file, std::string_view p) { return file.path < p; });
  return static_cast<size_t>(it - index.begin());
}

// The entry for `path` in a sorted index, or null.
const IndexedFile* FindIn(const Index& index, std::string_view path) {
  const size_t at = PositionIn(index, path);
  return at < index.size() && index[at].path == path ? &index[at] : nullptr;
}

// Sets `path`'s entry in a sorted index, adding it in place when absent.
void SetIn(Index& index, const std::string& path, const IndexEntry& entry) {
  const size_t at = PositionIn(index, path);
  if (at < index.size() && index[at].path == path) {
    index[at].entry = entry;
  } else {
    index.insert(index.begin() + static_cast<std::ptrdiff_t>(at), IndexedFile{path, entry});
  }
}

// Positions in an index by path (viewing the index's strings, which must stay in place).
using PathPositions = std::unordered_map<std::string_view, size_t>;
constexpr size_t kNoPosition = SIZE_MAX;

PathPositions PathsOf(const Index& index) {
  PathPositions paths;
  paths.reserve(index.size());
  for (size_t i = 0; i < index.size(); ++i) paths.emplace(index[i].path, i);
  return paths;
}

size_t PositionOf(const PathPositions& paths, std::string_view path) {
  auto found = paths.find(path);
  return found == paths.end() ? kNoPosition : found->second;
}

// The fingerprint of what `stream` produces, never holding it whole.
IndexEntry Fingerprint(const ArtifactStream& stream) {
  Sha256Hasher hasher;
  size_t size = 0;
  stream([&](std::string_view piece) {
    hasher.Add(piece);
    size += piece.size();
  });
  return {hasher.Hex(), size};
}

// Creates `path` (truncating), writes what `stream` produces piece by piece and returns its fingerprint.
IndexEntry WriteStreamed(const fs::path& path, const ArtifactStream& stream) {
  Sha256Hasher hasher;
  size_t size = 0;
  WritePieces(path, [&](const auto& sink) {
    stream([&](std::string_view piece) {
      hasher.Add(piece);
      size += piece.size();
      sink(piece);
    });
  });
  return {hasher.Hex(), size};
}

Index IndexOf(const ArtifactFiles& files) {
  std::vector<const std::pair<const std::string, std::string>*> items;
  items.reserve(files.size());
  for (const auto& item : files) items.push_back(&item);
  Index index(items.size());
  ParallelFor(items.size(), [&](size_t i) {
    index[i] = IndexedFile{items[i]->first, FingerprintOf(items[i]->second)};
  });
  return index;  // in the map's order: sorted
}

std::string RenderIndex(const Index& index) {
  std::string out(kIndexHeader);
  out += '\n';
  out.reserve(index.size() * 80);
  for (const auto& [path, entry] : index) {
    out += entry.sha256;
    out += ' ';
    out += std::to_string(entry.size);
    out += ' ';
    out += path;
    out += '\n';
  }
  return out;
}

// The index in `text`, or nullopt when it is not a complete, well-formed index.
std::optional<Index> ParseIndex(std::string_view text) {
  if (text.substr(0, kIndexHeader.size() + 1) != std::string(kIndexHeader) + "\n") return std::nullopt;
  text.remove_prefix(kIndexHeader.size() + 1);
  Index index;
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end == std::string_view::npos) return std::nullopt;  // a torn last line
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    size_t first = line.find(' ');
    size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
    if (first != 64 || second == std::string_view::npos || second + 1 >= line.size()) return std::nullopt;
    IndexEntry entry;
    entry.sha256 = line.substr(0, 64);
    if (entry.sha256.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    for (char c : line.substr(first + 1, second - first - 1)) {
      if (c < '0' || c > '9') return std::nullopt;
      entry.size = entry.size * 10 + static_cast<size_t>(c - '0');
    }
    index.push_back(IndexedFile{std::string(line.substr(second + 1)), entry});
  }
  // Written sorted; an index edited by hand is put in order, its first entry for a path kept.
  auto same_path = [](const IndexedFile& a, const IndexedFile& b) { return a.path == b.path; };
  if (!std::is_sorted(index.begin(), index.end(), PathLess) ||
      std::adjacent_find(index.begin(), index.end(), same_path) != index.end()) {
    std::stable_sort(index.begin(), index.end(), PathLess);
    index.erase(std::unique(index.begin(), index.end(), same_path), index.end());
  }
  return index;
}

std::optional<Index> ReadIndex(const fs::path& target_dir) {
  std::error_code ec;
  fs::path path = target_dir / kIndexFile;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  return ParseIndex(ReadFile(path));
}

// ---- the journal of an incremental publication ----

struct Journal {
  std::vector<std::pair<std::string, std::string>> writes;  // staged file name → path under target/
  std::vector<std::string> removals;                        // paths under target/
};

std::string RenderJournal(const Journal& journal) {
  std::string out(kJournalHeader);
  out += '\n';
  for (const auto& [staged, path] : journal.writes) out += "W " + staged + " " + path + "\n";
  for (const std::string& path : journal.removals) out += "D " + path + "\n";
  out += "end\n";
  return out;
}

std::optional<Journal> ParseJournal(std::string_view text) {
  if (text.substr(0, kJournalHeader.size() + 1) != std::string(kJournalHeader) + "\n") return std::nullopt;
  text.remove_prefix(kJournalHeader.size() + 1);
  Journal journal;
  while (!text.empty()) {
    size_t end = text.find('\n');
    if (end == std::string_view::npos) return std::nullopt;
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (line == "end") return text.empty() ? std::optional<Journal>(std::move(journal)) : std::nullopt;
    if (line.rfind("W ", 0) == 0) {
      size_t space = line.find(' ', 2);
      if (space == std::string_view::npos) return std::nullopt;
      journal.writes.emplace_back(std::string(line.substr(2, space - 2)), std::string(line.substr(space + 1)));
    } else if (line.rfind("D ", 0) == 0) {
      journal.removals.emplace_back(line.substr(2));
    } else {
      return std::nullopt;
    }
  }
  return std::nullopt;  // no `end`: never committed
}

// Removes the now-empty folders above a removed file, up to (not including) target/.
void RemoveEmptyParents(const fs::path& target_dir, fs::path folder) {
  while (folder != target_dir && folder.string().size() > target_dir.string().size()) {
    if (::rmdir(folder.c_str()) != 0) return;  // not empty (or gone): stop
    folder = folder.parent_path();
  }
}

// Applies a committed journal: idempotent, so a roll-forward killed half-way is simply run again.
void RollForward(const fs::path& target_dir, const Journal& journal) {
  fs::path publish = target_dir / kPublishFolder;
  FolderMaker folders;
  for (const auto& [staged, path] : journal.writes) folders.EnsureParentOf(target_dir / path);
  ParallelFor(journal.writes.size(), [&](size_t i) {
    const auto& [staged, path] = journal.writes[i];
    fs::path from = publish / "files" / staged;
    fs::path to = target_dir / path;
    if (::rename(from.c_str(), to.c_str()) != 0 && errno != ENOENT) Fail(to, std::strerror(errno));
  });
  for (const std::string& path : journal.removals) {
    fs::path file = target_dir / path;
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) Fail(file, std::strerror(errno));
    RemoveEmptyParents(target_dir, file.parent_path());
  }
  fs::path staged_index = publish / "index";
  fs::path index = target_dir / kIndexFile;
  if (::rename(staged_index.c_str(), index.c_str()) != 0 && errno != ENOENT) Fail(index, std::strerror(errno));
  std::error_code ec;
  fs::remove_all(publish, ec);
}

// ---- full publication: staging folder, then swap ----

// A manifest written before artifacts were listed: its sibling folders are leftovers of that layout. Sorted
// keys put "artifacts" first, so the start of the file answers for every manifest this tool or StreamBuild
// writes; anything else is parsed whole.
void RemoveOlderLayout(const fs::path& target_dir) {
  fs::path manifest = target_dir / "manifest.json";
  std::error_code ec;
  if (!fs::exists(manifest, ec)) return;
  std::string head(256, '\0');
  int fd = ::open(manifest.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t n = ::read(fd, head.data(), head.size());
  ::close(fd);
  head.resize(n > 0 ? static_cast<size_t>(n) : 0);
  if (head.rfind("{\n  \"artifacts\": ", 0) == 0) return;
  nlohmann::json old = nlohmann::json::parse(ReadFile(manifest), nullptr, false);
  if (old.is_discarded() || (old.is_object() && old.contains("artifacts"))) return;
  for (const auto& item : fs::directory_iterator(target_dir)) {
    std::string name = item.path().filename().string();
    if (item.is_directory() && name != "run" && name.rfind(".sluice-", 0) != 0) fs::remove_all(item.path());
  }
}

void PublishBySwap(const fs::path& target_dir, const ArtifactFiles& files, const StreamedArtifacts& streamed,
                   Index index) {
  std::error_code ec;
  // No index while the tree changes wholesale: a crash from here on leads to another full publication.
  fs::path index_path = target_dir / kIndexFile;
  if (::unlink(index_path.c_str()) != 0 && errno != ENOENT) Fail(index_path, std::strerror(errno));
  std::string suffix = std::to_string(::getpid());
  fs::path staging = target_dir / (std::string(kStagingPrefix) + suffix);
  fs::path backup = target_dir / (std::string(kBackupPrefix) + suffix);
  fs::remove_all(staging, ec);
  fs::remove_all(backup, ec);
  fs::create_directories(staging / "compiled", ec);
  if (ec) Fail(staging, ec.message());
  try {
    std::vector<const std::pair<const std::string, std::string>*> items;
    items.reserve(files.size());
    // A folder's files go to one thread (two threads creating files in one folder take turns at its lock):
    // `files` is sorted by path, so they are consecutive, and each run of them starts at an index here.
    std::vector<size_t> folder_starts;
    std::string_view previous_folder;
    FolderMaker folders;
    for (const auto& item : files) {
      folders.EnsureParentOf(staging / item.first);
      const std::string_view folder = std::string_view(item.first).substr(0, item.first.rfind('/') + 1);
      if (items.empty() || folder != previous_folder) folder_starts.push_back(items.size());
      previous_folder = folder;
      items.push_back(&item);
    }
    folder_starts.push_back(items.size());
    for (const auto& [path, stream] : streamed) folders.EnsureParentOf(staging / path);
    // The streamed files (the manifest: rendered as it is written, tens of MB) on a thread of their own while
    // the others are created: file creation leaves the cores idle part of the time (its threads wait on the
    // file system's locks), which the rendering takes.
    std::exception_ptr streamed_failure;
    std::vector<IndexedFile> streamed_entries;
    std::thread streaming([&] {
      try {
        for (const auto& [path, stream] : streamed) {  // fingerprinted as they are written: one rendering each
          streamed_entries.push_back(IndexedFile{path, WriteStreamed(staging / path, stream)});
        }
      } catch (...) {
        streamed_failure = std::current_exception();
      }
    });
    try {
      ParallelFor(
          folder_starts.size() - 1,
          [&](size_t f) {
            for (size_t i = folder_starts[f]; i < folder_starts[f + 1]; ++i) {
              WriteWhole(staging / items[i]->first, items[i]->second);
            }
          },
          /*min_items_per_thread=*/1);
    } catch (...) {
      streaming.join();
      throw;
    }
    streaming.join();
    if (streamed_failure) std::rethrow_exception(streamed_failure);
    for (const IndexedFile& file : streamed_entries) SetIn(index, file.path, file.entry);
  } catch (...) {
    fs::remove_all(staging, ec);
    throw;
  }
  RemoveOlderLayout(target_dir);

  // Move the old owners aside, then the new ones in; undo every completed move on failure.
  std::vector<std::pair<fs::path, fs::path>> done;  // from → to
  auto move = [&](const fs::path& from, const fs::path& to) {
    fs::rename(from, to, ec);
    if (ec) {
      std::string reason = ec.message();
      for (auto it = done.rbegin(); it != done.rend(); ++it) {
        std::error_code undo;
        fs::rename(it->second, it->first, undo);
      }
      std::error_code ignored;
      fs::remove_all(staging, ignored);
      Fail(from, reason);
    }
    done.emplace_back(from, to);
  };
  fs::create_directories(backup, ec);
  for (const char* owner : kOwners) {
    if (fs::exists(target_dir / owner)) move(target_dir / owner, backup / owner);
  }
  for (const char* owner : kOwners) {
    if (fs::exists(staging / owner)) move(staging / owner, target_dir / owner);
  }
  fs::remove_all(backup, ec);
  fs::remove_all(staging, ec);
  ReplaceDurably(index_path, RenderIndex(index));
}

// ---- incremental publication ----

PublishSummary PublishChanges(const fs::path& target_dir, const ArtifactFiles& files, const StreamedArtifacts& streamed,
                              const Index& old_index, const Index& new_index) {
  PublishSummary summary;
  summary.incremental = true;
  Journal journal;
  std::vector<const std::string*> contents;  // of journal.writes[i]; null for a streamed file
  // Both indexes are sorted: one walk over the two finds what is unchanged, written and removed.
  auto old = old_index.begin();
  for (const auto& [path, entry] : new_index) {
    for (; old != old_index.end() && old->path < path; ++old) journal.removals.push_back(old->path);
    const bool listed = old != old_index.end() && old->path == path;
    const bool same = listed && old->entry == entry;
    if (listed) ++old;
    if (same) {
      ++summary.unchanged;
      continue;
    }
    auto file = files.find(path);
    contents.push_back(file == files.end() ? nullptr : &file->second);
    journal.writes.emplace_back(std::to_string(journal.writes.size()), path);
  }
  for (; old != old_index.end(); ++old) journal.removals.push_back(old->path);
  summary.written = journal.writes.size();
  summary.removed = journal.removals.size();
  if (journal.writes.empty() && journal.removals.empty()) return summary;

  fs::path publish = target_dir / kPublishFolder;
  std::error_code ec;
  fs::remove_all(publish, ec);
  fs::create_directories(publish / "files", ec);
  if (ec) Fail(publish, ec.message());
  ParallelFor(journal.writes.size(), [&](size_t i) {
    if (contents[i] != nullptr) WriteWhole(publish / "files" / journal.writes[i].first, *contents[i]);
  });
  for (size_t i = 0; i < journal.writes.size(); ++i) {
    if (contents[i] != nullptr) continue;
    const auto& [staged_name, path] = journal.writes[i];
    fs::path staged = publish / "files" / staged_name;
    if (WriteStreamed(staged, streamed.at(path)) != FindIn(new_index, path)->entry) {
      Fail(staged, "the streamed contents of " + path + " changed between two renderings");
    }
  }
  WriteWhole(publish / "index", RenderIndex(new_index));
  PausePoint("artifacts_staged");
  ReplaceDurably(publish / "journal", RenderJournal(journal));  // the commit point
  PausePoint("artifacts_committed");
  RollForward(target_dir, journal);
  return summary;
}

// The files under the owners as they are on disk (names only: one directory read per folder, no stat per
// file), relative to target/, in the order the folders list them.
std::vector<std::string> FilesOnDisk(const fs::path& target_dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const char* owner : kOwners) {
    fs::path path = target_dir / owner;
    if (fs::is_regular_file(path, ec)) files.emplace_back(owner);
    if (!fs::is_directory(path, ec)) continue;
    WalkFiles(target_dir, owner, [&](std::string&& file, bool) { files.push_back(std::move(file)); });
  }
  return files;
}

// Corrects `index` (and `paths`, its hash index) by what is on disk: a listed file that is gone no longer counts
// as published (so it is written again); a file nobody listed is recorded with an impossible size (so it is
// removed or rewritten). Usually disk and index agree: one lookup per file on disk shows it, and nothing moves.
void ReconcileWithDisk(Index& index, PathPositions& paths, std::vector<std::string> on_disk) {
  std::vector<uint8_t> present(index.size(), 0);
  std::vector<std::string> unlisted;
  for (std::string& path : on_disk) {
    const size_t at = PositionOf(paths, path);
    if (at == kNoPosition) {
      unlisted.push_back(std::move(path));
    } else {
      present[at] = 1;
    }
  }
  const bool all_present = std::find(present.begin(), present.end(), 0) == present.end();
  if (all_present && unlisted.empty()) return;
  Index reconciled;
  reconciled.reserve(index.size() + unlisted.size());
  for (size_t i = 0; i < index.size(); ++i) {
    if (present[i]) reconciled.push_back(std::move(index[i]));
  }
  std::sort(unlisted.begin(), unlisted.end());
  unlisted.erase(std::unique(unlisted.begin(), unlisted.end()), unlisted.end());
  for (std::string& path : unlisted) reconciled.push_back(IndexedFile{std::move(path), {"", static_cast<size_t>(-1)}});
  std::inplace_merge(reconciled.begin(), reconciled.end() - static_cast<std::ptrdiff_t>(unlisted.size()),
                     reconciled.end(), PathLess);
  index = std::move(reconciled);
  paths = PathsOf(index);
}

}  // namespace

void RecoverArtifacts(const fs::path& target_dir) {
  std::error_code ec;
  if (!fs::is_directory(target_dir, ec)) return;
  fs::path publish = target_dir / kPublishFolder;
  if (fs::exists(publish, ec)) {
    std::optional<Journal> journal;
    if (fs::is_regular_file(publish / "journal", ec)) journal = ParseJournal(ReadFile(publish / "journal"));
    if (journal) {
      RollForward(target_dir, *journal);
    } else {
      fs::remove_all(publish, ec);  // never committed: the old artifacts are intact
    }
  }
  // A swap killed half-way: owners already moved to the backup go back; staging folders are discarded.
  for (const auto& item : fs::directory_iterator(target_dir, ec)) {
    std::string name = item.path().filename().string();
    if (name.rfind(kBackupPrefix, 0) == 0) {
      for (const char* owner : kOwners) {
        if (fs::exists(item.path() / owner, ec) && !fs::exists(target_dir / owner, ec)) {
          fs::rename(item.path() / owner, target_dir / owner, ec);
          if (ec) Fail(target_dir / owner, ec.message());
        }
      }
    }
  }
  for (const auto& item : fs::directory_iterator(target_dir, ec)) {
    std::string name = item.path().filename().string();
    if (name.rfind(kBackupPrefix, 0) == 0 || name.rfind(kStagingPrefix, 0) == 0) fs::remove_all(item.path(), ec);
  }
}

struct ArtifactPublication::State {
  explicit State(const fs::path& dir) : target_dir(dir), lock((CreateTarget(dir), dir)) {}
  static void CreateTarget(const fs::path& dir) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) Fail(dir, ec.message());
  }
  fs::path target_dir;
  PublishLock lock;
  std::optional<Index> published;  // the index reconciled with the files on disk; none: a full publication
  PathPositions by_path;           // positions in `published` by path (the renderer asks of every file)
  bool done = false;
};

ArtifactPublication::ArtifactPublication(const fs::path& target_dir) : state_(std::make_unique<State>(target_dir)) {
  RecoverArtifacts(target_dir);
  state_->published = ReadIndex(target_dir);
  if (state_->published) {
    state_->by_path = PathsOf(*state_->published);
    ReconcileWithDisk(*state_->published, state_->by_path, FilesOnDisk(target_dir));
  }
}

ArtifactPublication::~ArtifactPublication() = default;

bool ArtifactPublication::incremental() const { return state_->published.has_value(); }

size_t ArtifactPublication::PublishedPosition(std::string_view path, const ArtifactFingerprint& fingerprint) const {
  if (!state_->published) return kNotPublished;
  const size_t at = PositionOf(state_->by_path, path);
  return at != kNoPosition && (*state_->published)[at].entry == fingerprint ? at : kNotPublished;
}

size_t ArtifactPublication::published_count() const { return state_->published ? state_->published->size() : 0; }

const std::string& ArtifactPublication::published_path(size_t position) const {
  return state_->published->at(position).path;
}

PublishSummary ArtifactPublication::Publish(const ArtifactFiles& files, const StreamedArtifacts& streamed,
                                            const std::vector<uint8_t>& kept) {
  if (state_->done) throw std::logic_error("an artifact publication is published once");
  state_->done = true;
  for (const auto& [path, stream] : streamed) {
    if (files.count(path)) throw std::logic_error("artifact " + path + " is given both whole and streamed");
  }
  if (!kept.empty() && kept.size() != published_count()) {
    throw std::logic_error("the kept files are marked over " + std::to_string(kept.size()) + " positions, not the " +
                           std::to_string(published_count()) + " published files");
  }
  auto is_kept = [&](const std::string& path) {
    const size_t at = kept.empty() ? kNoPosition : PositionOf(state_->by_path, path);
    return at != kNoPosition && kept[at] != 0;
  };
  for (const auto& [path, contents] : files) {
    if (is_kept(path)) throw std::logic_error("artifact " + path + " is given whole and kept as published");
  }
  for (const auto& [path, stream] : streamed) {
    if (is_kept(path)) throw std::logic_error("artifact " + path + " is given streamed and kept as published");
  }
  const fs::path& target_dir = state_->target_dir;
  Index given = IndexOf(files);
  if (!state_->published) {
    PublishBySwap(target_dir, files, streamed, std::move(given));
    return PublishSummary{files.size() + streamed.size(), 0, 0, false};
  }
  // The new index: the kept published files and the given ones (no path in common), merged in path order.
  const Index& published = *state_->published;
  Index new_index;
  new_index.reserve(given.size() + published.size() + streamed.size());
  auto next_given = given.begin();
  for (size_t p = 0; p < published.size(); ++p) {
    if (kept.empty() || kept[p] == 0) continue;
    for (; next_given != given.end() && next_given->path < published[p].path; ++next_given) {
      new_index.push_back(std::move(*next_given));
    }
    new_index.push_back(published[p]);
  }
  for (; next_given != given.end(); ++next_given) new_index.push_back(std::move(*next_given));
  for (const auto& [path, stream] : streamed) SetIn(new_index, path, Fingerprint(stream));
  return PublishChanges(target_dir, files, streamed, published, new_index);
}

ArtifactFingerprint FingerprintOf(std::string_view contents) { return {Sha256Hex(contents), contents.size()}; }

std::string Materialize(const ArtifactStream& stream) {
  std::string out;
  stream([&](std::string_view piece) { out.append(piece); });
  return out;
}

PublishSummary PublishArtifacts(const fs::path& target_dir, const ArtifactFiles& files,
                                const StreamedArtifacts& streamed) {
  return ArtifactPublication(target_dir).Publish(files, streamed);
}

}  // namespace sluice
