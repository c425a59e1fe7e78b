// The parse cache: what the analysis of each model's SQL body produced the last time the project loaded — its
// reference calls with their locations, output columns, aggregate semantics, anchor candidacy and lineage
// columns — keyed by the model file's path, size and content hash. A model whose file is unchanged is read
// and hashed but not tokenized or parsed again (dbt's partial parsing, per file); its MODEL header is still
// parsed and checked (a few µs), so everything that depends on the pipeline or the project is computed as
// without the cache.
//
// Only what is a function of the file's bytes, its path and the SQL dialect is cached, and only for a model
// that loaded without error and whose body macro expansion left unchanged (a body that calls a project macro
// is parsed every time: its expansion depends on the macros' code).
//
// Stored in <root>/.sluice/parse-cache. The file names the build that wrote it (its GNU build ID) and the
// dialect, and its entries end with a checksum: a file of another build or dialect, a truncated or corrupt one,
// or one that is absent or unreadable is ignored whole (the load parses every model, as without a cache).
// Written whole, atomically (a temporary sibling renamed over it; not fsynced: a cache lost to a power cut
// costs one slower load, and its checksum rejects a partial file). A load that parsed a few models appends
// their entries instead, as records with a checksum each (an edit at 100,000 models appends a few hundred bytes
// rather than rewriting 49 MB); a later entry for a file wins over an earlier one when both match it, and the
// file is rewritten whole once the appended records or the entries no load uses grow past an eighth of it.
// SLUICE_PARSE_CACHE=off disables reading and writing.
//
// Thread-safety: a ParseCache is immutable after Read; Find may be called from many threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "definitions/definitions.hpp"
#include "project/model_loader.hpp"
#include "sql/token.hpp"

namespace sluice {

// What the body analysis of one model produced (see above).
struct CachedBodyAnalysis {
  std::vector<ModelReference> references;  // text order; offsets relative to the body; edges not classified
  ColumnList columns;
  bool aggregate = false;
  bool anchor_candidate = false;
  unsigned lineage_modes = 0;  // bit 1 << LineageMode of every mode whose columns are among the outputs
  std::string_view entry;      // the entry's stored bytes (a view into the cache), to write it again as it is
};

// A model file's identity in the cache: its size and ContentHash.
struct ModelFileKey {
  uint64_t size = 0;
  uint64_t hash = 0;
  static ModelFileKey Of(std::string_view text);
  bool operator==(const ModelFileKey&) const = default;
};

// How a load brings the cache file up to date (ParseCache::UpdateFor).
enum class ParseCacheUpdate {
  kNone,     // nothing new, and little the next load will not use
  kAppend,   // append the entries this load encoded as records (AppendParseCache)
  kRewrite,  // write every entry of this load to a new file (WriteParseCache)
};

class ParseCache {
 public:
  // False when SLUICE_PARSE_CACHE switches it off ("off", "0", "false", "no"; core/environment.hpp), or when the
  // executable has no build ID (nothing would tell its cache from another build's).
  static bool Enabled();

  // The cache of the project at `root` for `dialect`; empty when disabled, absent, unreadable, written by
  // another build or for another dialect, or corrupt. Never throws.
  static ParseCache Read(const std::filesystem::path& root, sql::Dialect dialect);

  // The cache a file holding `contents` gives (what Read does once the file is read); empty when it does not
  // apply to this build and dialect or is corrupt.
  static ParseCache FromContents(std::string contents, sql::Dialect dialect);

  // The entry of `file` (relative to the root) when it was written for a file with this key, decoded; nullopt
  // when there is none, the key differs, or the entry cannot be decoded. `position` is where the entry probably
  // is: the model's index in load order, the order entries are written in (an unchanged project then finds
  // every entry without a lookup; any other position is looked up by file name).
  std::optional<CachedBodyAnalysis> Find(std::string_view file, const ModelFileKey& key,
                                         size_t position = SIZE_MAX) const;

  // The entries in the file: those written whole, then the appended records (an edited model's older entry stays
  // until the file is rewritten).
  size_t size() const { return entries_.size(); }

  // What a load that reused `reused` of these entries and encoded `new_entries` (`new_bytes` in all) should do:
  // append while the appended records and the entries no load will use again stay small, else rewrite; with
  // nothing new, rewrite only to drop many unused entries. An absent, invalid or torn file is rewritten.
  ParseCacheUpdate UpdateFor(size_t reused, size_t new_entries, size_t new_bytes) const;

 private:
  // The cache of the file whose bytes `contents` are, held by `storage` (a MappedFile or a std::string).
  static ParseCache FromStorage(std::shared_ptr<const void> storage, std::string_view contents, sql::Dialect dialect);

  struct Entry {
    std::string_view file;
    std::string_view bytes;
  };
  // The entries by file name, built by the first Find whose position is not its file's.
  struct ByFile {
    std::once_flag built;
    std::unordered_map<std::string_view, size_t> index;  // file → its first entry
  };

  // The entry of `file`, found at `position` or by name; null when there is none.
  const Entry* Locate(std::string_view file, size_t position) const;
  // The entry's analysis when it was written for a file with this key and decodes.
  std::optional<CachedBodyAnalysis> Decode(const Entry& entry, const ModelFileKey& key) const;

  std::shared_ptr<const void> storage_;  // the file's bytes; the views below survive moving the cache
  std::vector<Entry> entries_;           // in the order written; views of the bytes
  size_t base_entries_ = 0;              // entries_[0, base_entries_) were written whole, the rest appended
  size_t base_bytes_ = 0;                // the bytes written whole (up to and with their checksum)
  size_t appended_bytes_ = 0;            // the bytes of the readable appended records
  bool valid_ = false;                   // a file of this build and dialect whose whole-written part is intact
  bool tail_clean_ = true;               // no torn or corrupt record after it
  std::unique_ptr<ByFile> by_file_ = std::make_unique<ByFile>();
};

// One model's entry, for WriteParseCache.
std::string EncodeParseCacheEntry(std::string_view file, const ModelFileKey& key,
                                  const std::vector<ModelReference>& references, const ColumnList& columns,
                                  bool aggregate, bool anchor_candidate, unsigned lineage_modes);

// The file contents that hold these entries (each from EncodeParseCacheEntry, or a found entry's `entry`) for this
// build and dialect.
std::string ParseCacheContents(sql::Dialect dialect, const std::vector<std::string_view>& entries);

// The bytes AppendParseCache appends for one entry: the entry, length-prefixed, then its ContentHash.
std::string ParseCacheRecord(std::string_view entry);

// Appends these entries (each from EncodeParseCacheEntry) to the project's cache file as records, in one write,
// when the file is still one of this build and dialect. Returns false when it cannot (the caller then rewrites
// the file); never throws. A writer killed mid-append leaves a torn record, which readers ignore (with anything
// after it) and which makes the next load rewrite the file.
bool AppendParseCache(const std::filesystem::path& root, sql::Dialect dialect,
                      const std::vector<std::string_view>& entries);

// Replaces the project's cache with these entries (each from EncodeParseCacheEntry, or a found entry's `entry`), for
// this build and dialect. Returns false, leaving the previous cache, when the cache cannot be written (a read-only
// project loads without one); never throws. Also removes temporaries that killed writers left behind.
bool WriteParseCache(const std::filesystem::path& root, sql::Dialect dialect,
                     const std::vector<std::string_view>& entries);

// <root>/.sluice/parse-cache
std::filesystem::path ParseCachePath(const std::filesystem::path& root);

}  // namespace sluice
