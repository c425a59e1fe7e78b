#include "project/parse_cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

#include "core/build_id.hpp"
#include "core/content_hash.hpp"
#include "core/diagnostic.hpp"
#include "core/environment.hpp"
#include "core/file_system.hpp"

namespace sluice {

namespace {

// The file: kMagic, the build ID (length-prefixed), the dialect (one byte), the entry count, the entries (each
// length-prefixed), then the ContentHash of everything before it as 8 little-endian bytes; then any number of
// appended records, each an entry (length-prefixed) followed by the ContentHash of the entry's bytes. An entry:
// the file path, its size and hash, the references (kind, ref type, name, begin, end, line, column), the columns
// in ColumnList's packed form (the text, then each name's and type's length), flags (aggregate, anchor candidate)
// and the lineage mode bits. Integers are LEB128 varints; strings a varint length and the bytes. The magic
// carries the format version; the build ID changes with any code change.
constexpr std::string_view kMagic = "SLUICE PARSE CACHE 2\n";
constexpr uint8_t kAggregateFlag = 1;
constexpr uint8_t kAnchorCandidateFlag = 2;
constexpr unsigned kLineageModeBits = 0xF;

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void PutString(std::string& out, std::string_view text) {
  PutVarint(out, text.size());
  out.append(text);
}

void PutFixed64(std::string& out, uint64_t value) {
  for (int shift = 0; shift < 64; shift += 8) out.push_back(static_cast<char>(value >> shift));
}

// Reads what the Put functions wrote; any read past the end or malformed value clears ok() and yields zeros.
class Decoder {
 public:
  explicit Decoder(std::string_view data) : data_(data) {}

  bool ok() const { return ok_; }
  bool done() const { return at_ == data_.size(); }
  size_t position() const { return at_; }

  uint64_t Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64 && at_ < data_.size(); shift += 7) {
      auto byte = static_cast<unsigned char>(data_[at_++]);
      value |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return Fail();
  }

  std::string_view Bytes(uint64_t size) {
    if (!ok_ || size > data_.size() - at_) {
      Fail();
      return {};
    }
    std::string_view bytes = data_.substr(at_, size);
    at_ += size;
    return bytes;
  }

  std::string_view String() { return Bytes(Varint()); }

  uint8_t Byte() {
    std::string_view byte = Bytes(1);
    return byte.empty() ? 0 : static_cast<uint8_t>(byte[0]);
  }

  uint64_t Fixed64() {
    std::string_view bytes = Bytes(8);
    uint64_t value = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
      value |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
    }
    return value;
  }

  // A varint that must fit an int (line and column numbers).
  int Int() {
    uint64_t value = Varint();
    if (value > INT_MAX) return static_cast<int>(Fail());
    return static_cast<int>(value);
  }

 private:
  uint64_t Fail() {
    ok_ = false;
    at_ = data_.size();
    return 0;
  }

  std::string_view data_;
  size_t at_ = 0;
  bool ok_ = true;
};

std::string FileHeader(sql::Dialect dialect) {
  std::string header(kMagic);
  PutString(header, ExecutableBuildId());
  header.push_back(static_cast<char>(dialect));
  return header;
}

}  // namespace

ModelFileKey ModelFileKey::Of(std::string_view text) { return ModelFileKey{text.size(), ContentHash(text)}; }

std::filesystem::path ParseCachePath(const std::filesystem::path& root) { return root / ".sluice" / "parse-cache"; }

bool ParseCache::Enabled() {
  static const bool enabled = [] {
    return EnvironmentSwitch("SLUICE_PARSE_CACHE").value_or(true) && !ExecutableBuildId().empty();
  }();
  return enabled;
}

ParseCache ParseCache::Read(const std::filesystem::path& root, sql::Dialect dialect) {
  if (!Enabled()) return ParseCache{};
  // Mapped, not read: the cache is only ever replaced by a rename (WriteFileAtomic), never rewritten in place.
  std::optional<MappedFile> file = MappedFile::Open(ParseCachePath(root));
  if (!file) return ParseCache{};  // none yet, or unreadable: load without it
  std::string_view contents = file->contents();
  return FromStorage(std::make_shared<const MappedFile>(std::move(*file)), contents, dialect);
}

ParseCache ParseCache::FromContents(std::string file_contents, sql::Dialect dialect) {
  auto storage = std::make_shared<const std::string>(std::move(file_contents));
  std::string_view contents = *storage;
  return FromStorage(std::move(storage), contents, dialect);
}

ParseCache ParseCache::FromStorage(std::shared_ptr<const void> storage, std::string_view contents,
                                   sql::Dialect dialect) {
  ParseCache cache;
  cache.storage_ = std::move(storage);
  std::string header = FileHeader(dialect);
  if (contents.size() < header.size() + 8 || contents.substr(0, header.size()) != header) return ParseCache{};

  Decoder decoder(contents.substr(header.size()));
  uint64_t count = decoder.Varint();
  if (count > contents.size()) return ParseCache{};  // every entry takes at least a byte
  cache.entries_.reserve(count);
  for (uint64_t i = 0; i < count && decoder.ok(); ++i) {
    std::string_view entry = decoder.String();
    std::string_view file = Decoder(entry).String();
    if (!file.empty()) cache.entries_.push_back(Entry{file, entry});
  }
  if (!decoder.ok()) return ParseCache{};
  const size_t base_end = header.size() + decoder.position();
  if (Decoder(contents.substr(base_end)).Fixed64() != ContentHash(contents.substr(0, base_end))) {
    return ParseCache{};
  }
  cache.base_bytes_ = base_end + 8;
  cache.base_entries_ = cache.entries_.size();
  // The appended records, up to the first that is torn or corrupt (a writer killed mid-append).
  Decoder records(contents.substr(cache.base_bytes_));
  while (!records.done()) {
    std::string_view entry = records.String();
    uint64_t checksum = records.Fixed64();
    std::string_view file = Decoder(entry).String();
    if (!records.ok() || checksum != ContentHash(entry) || file.empty()) {
      cache.tail_clean_ = false;
      break;
    }
    cache.entries_.push_back(Entry{file, entry});
    cache.appended_bytes_ = records.position();
  }
  cache.valid_ = true;
  return cache;
}

const ParseCache::Entry* ParseCache::Locate(std::string_view file, size_t position) const {
  if (position < entries_.size() && entries_[position].file == file) return &entries_[position];
  std::call_once(by_file_->built, [&] {
    by_file_->index.reserve(entries_.size());
    for (size_t i = 0; i < entries_.size(); ++i) by_file_->index.insert_or_assign(entries_[i].file, i);
  });
  auto it = by_file_->index.find(file);
  return it == by_file_->index.end() ? nullptr : &entries_[it->second];
}

std::optional<CachedBodyAnalysis> ParseCache::Find(std::string_view file, const ModelFileKey& key,
                                                   size_t position) const {
  const Entry* found = Locate(file, position);
  if (found == nullptr) return std::nullopt;
  if (std::optional<CachedBodyAnalysis> analysis = Decode(*found, key)) return analysis;
  // The entry found was written for another version of the file; an appended one may be this version's. A few
  // appended records are scanned, newest first; many are looked up by name (the newest entry of the file).
  if (position == SIZE_MAX || entries_.size() == base_entries_) return std::nullopt;
  constexpr size_t kScannedRecords = 64;
  if (entries_.size() - base_entries_ > kScannedRecords) return Find(file, key, SIZE_MAX);
  for (size_t i = entries_.size(); i-- > base_entries_;) {
    if (entries_[i].file == file && &entries_[i] != found) return Decode(entries_[i], key);
  }
  return std::nullopt;
}

std::optional<CachedBodyAnalysis> ParseCache::Decode(const Entry& found, const ModelFileKey& key) const {
  std::string_view bytes = found.bytes;
  Decoder in(bytes);
  in.String();  // the file, matched by the lookup
  if (ModelFileKey{in.Varint(), in.Fixed64()} != key) return std::nullopt;

  CachedBodyAnalysis analysis;
  uint64_t reference_count = in.Varint();
  if (reference_count > bytes.size()) return std::nullopt;
  analysis.references.reserve(reference_count);
  for (uint64_t r = 0; r < reference_count && in.ok(); ++r) {
    uint8_t kind = in.Byte();
    uint8_t ref_type = in.Byte();
    if (kind > 1 || ref_type > 2) return std::nullopt;
    sql::ReferenceCall call{kind == 0 ? sql::ReferenceKind::kSource : sql::ReferenceKind::kRef,
                            std::string(in.String()), std::nullopt, 0, 0};
    if (ref_type != 0) call.ref_type = ref_type == 1 ? sql::RefType::kReference : sql::RefType::kMutable;
    call.begin = in.Varint();
    call.end = in.Varint();
    int line = in.Int();
    int column = in.Int();
    analysis.references.push_back(
        ModelReference{std::move(call), EdgeType::kReference, SourceLocation{std::string(found.file), line, column}});
  }
  std::string column_text(in.String());
  uint64_t end_count = in.Varint();
  if (end_count > bytes.size()) return std::nullopt;
  std::vector<uint32_t> column_ends;
  column_ends.reserve(end_count);
  uint64_t end = 0;
  for (uint64_t e = 0; e < end_count && in.ok(); ++e) {
    end += in.Varint();  // stored as lengths
    if (end > column_text.size()) return std::nullopt;
    column_ends.push_back(static_cast<uint32_t>(end));
  }
  uint8_t flags = in.Byte();
  unsigned lineage_modes = in.Byte();
  if (!in.ok() || !in.done() || flags > (kAggregateFlag | kAnchorCandidateFlag) || lineage_modes > kLineageModeBits) {
    return std::nullopt;
  }
  std::optional<ColumnList> columns = ColumnList::FromPacked(std::move(column_text), std::move(column_ends));
  if (!columns) return std::nullopt;
  analysis.columns = std::move(*columns);
  analysis.aggregate = (flags & kAggregateFlag) != 0;
  analysis.anchor_candidate = (flags & kAnchorCandidateFlag) != 0;
  analysis.lineage_modes = lineage_modes;
  analysis.entry = bytes;
  return analysis;
}

std::string EncodeParseCacheEntry(std::string_view file, const ModelFileKey& key,
                                  const std::vector<ModelReference>& references, const ColumnList& columns,
                                  bool aggregate, bool anchor_candidate, unsigned lineage_modes) {
  std::string out;
  out.reserve(64 + file.size() + references.size() * 32 + columns.size() * 24);
  PutString(out, file);
  PutVarint(out, key.size);
  PutFixed64(out, key.hash);
  PutVarint(out, references.size());
  for (const ModelReference& ref : references) {
    const sql::ReferenceCall& call = ref.call;
    out.push_back(call.kind == sql::ReferenceKind::kSource ? 0 : 1);
    out.push_back(!call.ref_type ? 0 : *call.ref_type == sql::RefType::kReference ? 1 : 2);
    PutString(out, call.name);
    PutVarint(out, call.begin);
    PutVarint(out, call.end);
    PutVarint(out, static_cast<uint64_t>(ref.at.line));
    PutVarint(out, static_cast<uint64_t>(ref.at.column));
  }
  PutString(out, columns.packed_text());
  PutVarint(out, columns.packed_ends().size());
  uint32_t previous = 0;
  for (uint32_t end : columns.packed_ends()) {
    PutVarint(out, end - previous);
    previous = end;
  }
  out.push_back(static_cast<char>((aggregate ? kAggregateFlag : 0) | (anchor_candidate ? kAnchorCandidateFlag : 0)));
  out.push_back(static_cast<char>(lineage_modes & kLineageModeBits));
  return out;
}

std::string ParseCacheContents(sql::Dialect dialect, const std::vector<std::string_view>& entries) {
  std::string contents = FileHeader(dialect);
  size_t bytes = contents.size() + 16;
  for (std::string_view entry : entries) bytes += entry.size() + 5;
  contents.reserve(bytes);
  PutVarint(contents, entries.size());
  for (std::string_view entry : entries) PutString(contents, entry);
  PutFixed64(contents, ContentHash(contents));
  return contents;
}

ParseCacheUpdate ParseCache::UpdateFor(size_t reused, size_t new_entries, size_t new_bytes) const {
  // Entries no load will use again (superseded by an appended one, or of a removed model) are tolerated up to
  // an eighth of the file (at least 64), appended records up to an eighth of its bytes (at least 64 KiB).
  const size_t unused = entries_.size() > reused ? entries_.size() - reused : 0;
  const size_t unused_limit = std::max<size_t>(64, base_entries_ / 8);
  if (new_entries == 0) return unused > unused_limit ? ParseCacheUpdate::kRewrite : ParseCacheUpdate::kNone;
  const size_t appended_limit = std::max<size_t>(64 << 10, base_bytes_ / 8);
  if (valid_ && tail_clean_ && unused <= unused_limit && appended_bytes_ + new_bytes <= appended_limit) {
    return ParseCacheUpdate::kAppend;
  }
  return ParseCacheUpdate::kRewrite;
}

std::string ParseCacheRecord(std::string_view entry) {
  std::string record;
  PutString(record, entry);
  PutFixed64(record, ContentHash(entry));
  return record;
}

bool AppendParseCache(const std::filesystem::path& root, sql::Dialect dialect,
                      const std::vector<std::string_view>& entries) {
  if (!ParseCache::Enabled()) return false;
  std::string records;
  for (std::string_view entry : entries) records += ParseCacheRecord(entry);
  std::filesystem::path path = ParseCachePath(root);
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
  if (fd < 0) return false;  // gone (another load rewrote it away, or it was deleted): rewrite
  // Only onto a file of this build and dialect (another process may have replaced the one this load read).
  const std::string header = FileHeader(dialect);
  std::string head(header.size(), '\0');
  // A failed write may leave a torn record: readers ignore it, and the next load rewrites the file.
  bool appended = ::pread(fd, head.data(), head.size(), 0) == static_cast<ssize_t>(head.size()) && head == header &&
                  WriteAll(fd, records) == 0;
  ::close(fd);
  return appended;
}

bool WriteParseCache(const std::filesystem::path& root, sql::Dialect dialect,
                     const std::vector<std::string_view>& entries) {
  if (!ParseCache::Enabled()) return false;
  std::filesystem::path path = ParseCachePath(root);
  try {
    WriteFileAtomic(path, ParseCacheContents(dialect, entries), Durability::kUnsynced);
  } catch (const Error&) {
    return false;  // read-only project, full disk: the next load parses every model again
  }
  RemoveAbandonedTemporaries(path);
  return true;
}

}  // namespace sluice
