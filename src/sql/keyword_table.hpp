// The keyword lists of SQL readers (the SELECT parser's grammar) and the table that classifies a bare word by them:
// which words end an expression, start a join, continue a type … (the bits are in sql/token_class.hpp).
// One table holds them all, so classifying a word is one hash probe however many lists it belongs to. The table
// is built at compile time; the tokenizer asks it of every word, inline. FoldedWordTable, the table's form, also
// holds the aggregate function names (aggregate_functions.cpp).
// Thread-safety: constants and pure functions.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string_view>
#include <type_traits>

#include "sql/token_class.hpp"

namespace sluice::sql {

// A set of lower-case words of 2 to 16 bytes, each with bits, looked up ignoring case: open addressing on the
// word's bytes with bit 5 set, packed into 16 bytes. For the bytes a bare word is made of ([A-Za-z0-9_$] and
// bytes >= 0x80) that folding is exact where a word of the set is concerned: only a letter's two cases fold to a
// lower-case letter, and only '_' folds to 0x7F; so equal keys mean equal words, ignoring case. (Any other text
// may match a word it is not: callers pass bare words only.) kSlots, a power of two, should be several times the
// words, for short probes.
template <size_t kSlots>
class FoldedWordTable {
 public:
  static constexpr size_t kShortestWord = 2;
  static constexpr size_t kLongestWord = 16;

  // The bits of `word` (0 for a word not in the set).
  constexpr uint32_t Find(std::string_view word) const {
    if (word.size() < kShortestWord || word.size() > kLongestWord) return 0;  // `d`, long column names
    // Most words share no (length, first letter) with a word of the set: one bit tells, before the hash.
    if (!((first_letters_[word.size()] >> (static_cast<unsigned char>(word[0]) & 31)) & 1)) return 0;
    const Key key = KeyOf(word);
    for (size_t slot = SlotOf(key);; slot = (slot + 1) % kSlots) {
      const Entry& entry = entries_[slot];
      if (entry.bits == 0) return 0;
      if (entry.key.low == key.low && entry.key.high == key.high) return entry.bits;
    }
  }

  // Adds `bits` (not 0) to the word's; the word must be 2 to 16 bytes.
  constexpr void Add(std::string_view word, uint32_t bits) {
    if (word.size() < kShortestWord || word.size() > kLongestWord) throw std::logic_error("word length");
    first_letters_[word.size()] |= uint32_t{1} << (static_cast<unsigned char>(word[0]) & 31);
    const Key key = KeyOf(word);
    for (size_t slot = SlotOf(key);; slot = (slot + 1) % kSlots) {
      Entry& entry = entries_[slot];
      if (entry.bits == 0 || (entry.key.low == key.low && entry.key.high == key.high)) {
        entry = Entry{key, entry.bits | bits};
        return;
      }
    }
  }

 private:
  static_assert(std::has_single_bit(kSlots), "kSlots must be a power of two");

  struct Key {
    uint64_t low = 0;   // bytes 0-7
    uint64_t high = 0;  // bytes 8-15
  };
  struct Entry {
    Key key;
    uint32_t bits = 0;  // the word's; 0: an empty slot
  };

  // The word (2 to 16 bytes) zero-padded, every byte with bit 5 set: padding becomes 0x20, which no word byte
  // folds to, so the length needs no encoding of its own. Loads of fixed size, overlapping where the word is
  // shorter than two of them, read only the word's bytes.
  static constexpr Key KeyOf(std::string_view word) {
    constexpr uint64_t kFold = 0x2020202020202020ull;
    const char* data = word.data();
    const size_t size = word.size();
    Key key;
    if (std::is_constant_evaluated()) {  // building the table: the same bytes, one at a time
      for (size_t k = 0; k < size; ++k) {
        (k < 8 ? key.low : key.high) |= uint64_t{static_cast<unsigned char>(data[k])} << (8 * (k % 8));
      }
    } else if (size >= 8) {
      key.low = Load<uint64_t>(data);
      if (size > 8) key.high = Load<uint64_t>(data + size - 8) >> (8 * (16 - size));
    } else if (size >= 4) {
      key.low = Load<uint32_t>(data) | (uint64_t{Load<uint32_t>(data + size - 4)} << (8 * (size - 4)));
    } else {
      key.low = Load<uint16_t>(data) | (uint64_t{Load<uint16_t>(data + size - 2)} << (8 * (size - 2)));
    }
    key.low |= kFold;
    key.high |= kFold;
    return key;
  }

  template <typename T>
  static T Load(const char* bytes) {
    T value;
    std::memcpy(&value, bytes, sizeof(value));
    return value;
  }

  static constexpr size_t SlotOf(const Key& key) {
    const uint64_t mixed = (key.low ^ (key.high * 0xC2B2AE3D27D4EB4Full)) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(mixed >> (64 - std::countr_zero(kSlots)));  // the top bits
  }

  std::array<Entry, kSlots> entries_{};
  // Bit (c & 31) of first_letters_[n]: a word of n bytes starts with c, in either case (a letter's two cases
  // share their low five bits).
  std::array<uint32_t, kLongestWord + 1> first_letters_{};
};

namespace keyword_table_internal {

// The lists as the grammar names them (lower case). A word may be in several.
constexpr std::string_view kBoundaryWords[] = {"from",   "where",     "prewhere", "having",   "qualify", "limit",
                                               "union",  "intersect", "into",     "except",   "group",   "order",
                                               "offset", "fetch",     "window",   "settings", "format",  "array",
                                               "left",   "inner",     "join",     "on",       "using"};

constexpr std::string_view kJoinPrefixWords[] = {"natural", "global", "local", "any",       "all",  "asof",
                                                 "semi",    "anti",   "left",  "right",     "full", "inner",
                                                 "outer",   "cross",  "paste", "positional"};

constexpr std::string_view kExpressionWords[] = {
    "and",     "or",      "not",    "is",       "in",       "like",  "ilike",    "between", "as",      "asc",
    "desc",    "then",    "else",   "when",     "case",     "end",   "distinct", "all",     "any",     "some",
    "over",    "collate", "escape", "interval", "null",     "true",  "false",    "exists",  "similar", "glob",
    "regexp",  "rlike",   "div",    "mod",      "xor",      "at",    "overlaps", "isnull",  "notnull", "precision",
    "varying", "zone",    "with",   "without",  "unsigned", "array", "filter",   "within"};

constexpr std::string_view kOperatorWords[] = {
    "and",  "or",     "not",   "is",  "in",  "like", "ilike", "between",  "collate", "escape", "similar",
    "glob", "regexp", "rlike", "div", "mod", "xor",  "at",    "overlaps", "isnull",  "notnull"};

constexpr std::string_view kTypeContinuationWords[] = {"precision", "varying", "with",     "without",
                                                       "time",      "zone",    "unsigned", "signed"};

constexpr std::string_view kTypeEndWords[] = {"precision", "varying", "zone", "unsigned", "signed"};

constexpr std::string_view kCastWords[] = {"cast", "try_cast", "safe_cast"};
constexpr std::string_view kAsWord[] = {"as"};
constexpr std::string_view kCaseWord[] = {"case"};
constexpr std::string_view kEndWord[] = {"end"};
constexpr std::string_view kSelectWord[] = {"select"};
constexpr std::string_view kWithWord[] = {"with"};
constexpr std::string_view kValuesWord[] = {"values"};
constexpr std::string_view kReferenceCallWords[] = {"__source", "__ref"};

// Each list with the token_class bit its words get.
struct KeywordList {
  std::span<const std::string_view> words;
  uint32_t token_class;
};
constexpr KeywordList kKeywordLists[] = {
    {kBoundaryWords, token_class::kBoundary},
    {kJoinPrefixWords, token_class::kJoinPrefix},
    {kExpressionWords, token_class::kExpressionKeyword},
    {kOperatorWords, token_class::kOperatorKeyword},
    {kTypeContinuationWords, token_class::kTypeContinuation},
    {kTypeEndWords, token_class::kTypeEnd},
    {kCastWords, token_class::kCast},
    {kAsWord, token_class::kAs},
    {kCaseWord, token_class::kCase},
    {kEndWord, token_class::kEnd},
    {kSelectWord, token_class::kSelect},
    {kWithWord, token_class::kWith},
    {kValuesWord, token_class::kValues},
    {kReferenceCallWords, token_class::kReferenceCall},
};

inline constexpr auto kKeywordTable = [] {
  FoldedWordTable<512> table;  // ~100 words
  for (const KeywordList& list : kKeywordLists) {
    for (std::string_view word : list.words) table.Add(word, list.token_class);
  }
  return table;
}();

}  // namespace keyword_table_internal

// The keyword bits of a bare word's text (0 for a word in no list), case-insensitive. `word` must be the text
// of a kWord token: other text may match a keyword it is not.
inline constexpr uint32_t WordClasses(std::string_view word) {
  return keyword_table_internal::kKeywordTable.Find(word);
}

}  // namespace sluice::sql
