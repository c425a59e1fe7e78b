// Publishes compile artifacts into `target/` (StreamBuild reference §9) with its guarantees, and writes only
// what changed:
//
// - only the static owners are replaced: `compiled/`, `manifest.json`, `streambuild_dag.json`;
//   `run/` and anything else in `target/` is left alone;
// - `target/.sluice-artifacts.index` lists every published file with its SHA-256 and size. When it is
//   present, a publication is incremental: the owners' folders are listed (names only) so a file deleted or
//   added by hand is noticed; files whose contents are unchanged are not touched at all (an unchanged project
//   writes nothing); stray files are removed; changed and new files are written to
//   `target/.sluice-publish/`, a journal naming every rename and deletion is committed (written, fsynced,
//   renamed into place), and only then are the files moved into place, the removed ones deleted and the new
//   index installed;
// - without a usable index (first compile, an older layout, a hand-edited tree), every file is written into
//   a sibling staging folder, the old owners move to a backup folder and the staged ones move in, each move a
//   rename; on an OS error the moves are undone;
// - a publication killed at any point is finished or undone by the next one (RecoverArtifacts): a committed
//   journal is rolled forward, anything uncommitted is discarded, a half-done swap is rolled back. So
//   `target/` ends up with the old artifacts or the new ones, never a mix;
// - folders left by an older layout (a manifest without an `artifacts` field) are removed, `run/` excepted.
//
// The index trusts that nobody edits the contents of files under the owners by hand: such a file is rewritten
// by the next compile that changes it, or by any compile after the index file is deleted.
//
// Errors: SLU-IO-003 naming the path and the OS error (after rolling back).
// Pause points for crash tests: "artifacts_staged" (before the journal commits) and "artifacts_committed"
// (after it commits, before any file moves).
// Thread-safety: one publisher per target folder at a time (a second compile of the same project waits).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sluice {

// Relative path under `target/` (e.g. "compiled/models/p/m.sql") → contents.
using ArtifactFiles = std::map<std::string, std::string>;

// A file too large to hold whole next to everything else (manifest.json of a large project): a function
// that produces its contents in pieces, in order, each handed to `sink`. The publisher calls it once to
// fingerprint the file and once more only when the file must be written (a first publication needs one call);
// every call must produce the same bytes. Its paths are distinct from those of the ArtifactFiles.
using ArtifactStream = std::function<void(const std::function<void(std::string_view piece)>& sink)>;
using StreamedArtifacts = std::map<std::string, ArtifactStream>;

// The contents of a streamed artifact, whole (for tests and small outputs).
std::string Materialize(const ArtifactStream& stream);

struct PublishSummary {
  size_t written = 0;    // files created or replaced
  size_t removed = 0;    // files deleted
  size_t unchanged = 0;  // files left as they were
  bool incremental = false;
};

// A file's fingerprint in the artifact index: its SHA-256 (hex) and size.
struct ArtifactFingerprint {
  std::string sha256;
  size_t size = 0;
  bool operator==(const ArtifactFingerprint&) const = default;
};

ArtifactFingerprint FingerprintOf(std::string_view contents);

// One publication into a target folder, opened before the artifacts are rendered so that the renderer can drop
// the contents of files already published exactly as rendered (an unchanged 100,000-model project then never
// holds its 300,000 files at once). Opening takes the folder's lock, held until the publication is destroyed,
// finishes or undoes an interrupted publication, and reads the index with the files on disk.
class ArtifactPublication {
 public:
  explicit ArtifactPublication(const std::filesystem::path& target_dir);
  ~ArtifactPublication();
  ArtifactPublication(const ArtifactPublication&) = delete;
  ArtifactPublication& operator=(const ArtifactPublication&) = delete;

  // False when the target holds no usable index: every file will be written, so none is worth fingerprinting.
  bool incremental() const;

  // Where `path` is among the published files (numbered in path order, 0 to published_count() - 1) when it is
  // published with exactly these contents and the publication will be incremental; kNotPublished otherwise. The
  // caller may then mark the position in Publish's `kept` instead of passing the contents. Thread-safe (const).
  static constexpr size_t kNotPublished = SIZE_MAX;
  size_t PublishedPosition(std::string_view path, const ArtifactFingerprint& fingerprint) const;
  bool IsPublished(std::string_view path, const ArtifactFingerprint& fingerprint) const {
    return PublishedPosition(path, fingerprint) != kNotPublished;
  }
  size_t published_count() const;
  const std::string& published_path(size_t position) const;  // in path order

  // Publishes `files` and `streamed`, and keeps as they are the published files whose positions `kept` marks
  // (kept[p] != 0; empty keeps none, else published_count() long). A kept path cannot also be given. Call once.
  PublishSummary Publish(const ArtifactFiles& files, const StreamedArtifacts& streamed = {},
                         const std::vector<uint8_t>& kept = {});

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// ArtifactPublication(target_dir).Publish(files, streamed).
PublishSummary PublishArtifacts(const std::filesystem::path& target_dir, const ArtifactFiles& files,
                                const StreamedArtifacts& streamed = {});

// Finishes or undoes a publication a killed process left in `target_dir`; a no-op when there is none.
void RecoverArtifacts(const std::filesystem::path& target_dir);

}  // namespace sluice
